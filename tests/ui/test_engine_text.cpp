// The engine's messages in the interface's language. The engine
// reports a code with arguments beside its English text; the studio renders every
// code of the engine's table through tr(). With the Vietnamese translator loaded,
// the out-of-memory banner and the status line of a real run say it in Vietnamese,
// with the run's numbers, and no English sentence is left.

#include <QApplication>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTranslator>
#include <map>

#include "isolated_settings.h"
#include "accum/engine_messages.h"
#include "config_panel.h"
#include "engine_text.h"
#include "lesson_panel.h"
#include "main_window.h"
#include "oom_banner.h"

using studio::MainWindow;

namespace {

// Words of the engine's English and the studio's English source strings: none may
// show in a Vietnamese sentence (micro-batch, checkpoint, loss and the option names
// are kept in Vietnamese too).
const char* const kEnglish[] = {"Out of memory", "out of memory", "accumulation steps", "budget", "peak",
                                "Try ",          "Suggestion",    "measured",           "the same", "effective batch",
                                "optimizer step", "non-finite",   "weights",            "does not exist", "is missing",
                                "Lower ",        "completed",     "stopped",            " the ", " of "};

QString english_left(const QString& text) {
    for (const char* word : kEnglish)
        if (text.contains(QLatin1String(word))) return QLatin1String(word);
    return {};
}

// Every argument a row declares, each a different number ("101", "102", …).
std::map<std::string, std::string> numbered_arguments(const accum::MessageTemplate& row) {
    std::map<std::string, std::string> args;
    int n = 101;
    std::string name;
    for (const char* p = row.arguments;; ++p) {
        if (*p && ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) {
            name += *p;
            continue;
        }
        if (!name.empty()) args[name] = std::to_string(n++);
        name.clear();
        if (!*p) break;
    }
    return args;
}

} // namespace

class TestEngineText : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void everyCodeIsRendered();
    void unknownCodeKeepsTheEnglish();
    void speedWithinItsSpreadIsNoDifference();
    void slowRatesKeepTheirDigits();
    void outOfMemoryBannerAndStatusInVietnamese();
    void dataMissingStatusInVietnamese();
    void fieldErrorsInVietnamese();

private:
    QTemporaryDir settings_dir_;
    QTranslator vietnamese_;
};

void TestEngineText::initTestCase() {
    QVERIFY(settings_dir_.isValid());
    isolate_settings(settings_dir_.path());
    QSettings(QStringLiteral("AccumulateStudio"), QStringLiteral("accum-studio")).clear();
    QVERIFY(vietnamese_.load(QStringLiteral(ACCUM_TRANSLATIONS_BUILD_DIR "/accum_studio_vi.qm")));
}

void TestEngineText::cleanupTestCase() { QCoreApplication::removeTranslator(&vietnamese_); }

// Every code of the engine's table has the studio's rendering, and that rendering
// is translated: with every argument present, the Vietnamese differs from the
// English and keeps the numbers it was given.
void TestEngineText::everyCodeIsRendered() {
    for (const auto& row : accum::message_templates) {
        QVERIFY2(studio::knows_engine_message(row.code), row.code);
        auto args = numbered_arguments(row);
        if (args.count("suggestion")) args["suggestion"] = accum::message_code::suggest_batch_one;
        if (args.count("plan")) args["plan"] = accum::message_code::plan_nothing_fits;
        const accum::EngineMessage message{row.code, args};
        const QString fallback = QStringLiteral("(english)");
        QCoreApplication::removeTranslator(&vietnamese_);
        const QString english = studio::engine_message(message, fallback);
        QCoreApplication::installTranslator(&vietnamese_);
        const QString vietnamese = studio::engine_message(message, fallback);
        QCoreApplication::removeTranslator(&vietnamese_);
        QVERIFY2(english != fallback && !english.isEmpty(), row.code);
        QVERIFY2(vietnamese != english, qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(row.code), vietnamese)));
        for (const auto& [name, value] : args)
            if (english.contains(QString::fromStdString(value)))
                QVERIFY2(vietnamese.contains(QString::fromStdString(value)),
                         qPrintable(QStringLiteral("%1: %2 missing from %3")
                                        .arg(QLatin1String(row.code), QString::fromStdString(name), vietnamese)));
    }
}

void TestEngineText::unknownCodeKeepsTheEnglish() {
    accum::SummaryRecord summary;
    summary.message = "rank 1 lost its peer";
    summary.detail = {"a_code_from_a_newer_engine", {{"rank", "1"}}};
    QCOMPARE(studio::engine_message(summary), QStringLiteral("rank 1 lost its peer"));
    summary.detail = {};
    QCOMPARE(studio::engine_message(summary), QStringLiteral("rank 1 lost its peer"));
    QVERIFY(!studio::out_of_memory_text(summary));
}

// A ratio whose measured spread includes 1 is no measurable difference, in both
// languages; one whose spread lies above 1 is "faster". The spreads are the
// planner's quartile ranges (memory_planner.cpp's plan_faster arguments).
// A 0.6 B model trained on the CPU at 2 × 2 read "0 samples/s"
// (bench/STUDIO_HALF_BILLION.md's picture); the status row keeps digits enough.
void TestEngineText::slowRatesKeepTheirDigits() {
    QCOMPARE(studio::samples_rate_text(1683.4), QStringLiteral("1683 samples/s"));
    QCOMPARE(studio::samples_rate_text(12.34), QStringLiteral("12.3 samples/s"));
    QCOMPARE(studio::samples_rate_text(3.456), QStringLiteral("3.46 samples/s"));
    QCOMPARE(studio::samples_rate_text(0.0271), QStringLiteral("0.027 samples/s"));
    QCOMPARE(studio::samples_rate_text(0.0), QStringLiteral("0.000 samples/s"));
}

void TestEngineText::speedWithinItsSpreadIsNoDifference() {
    QVERIFY(studio::spread_includes_one(QStringLiteral("0.97–1.04")));
    QVERIFY(studio::spread_includes_one(QStringLiteral("0.5-2.5")));
    QVERIFY(studio::spread_includes_one(QStringLiteral("1.00–1.12")));
    QVERIFY(!studio::spread_includes_one(QStringLiteral("1.03–1.12")));
    QVERIFY(!studio::spread_includes_one(QStringLiteral("0.81–0.95")));
    QVERIFY(!studio::spread_includes_one(QStringLiteral("about 1")));
    for (const bool checkpointing : {false, true}) {
        std::map<std::string, std::string> args = {{"faster_batch", "128"}, {"faster_steps", "2"},
                                                   {"slower_batch", "256"}, {"slower_steps", "1"},
                                                   {"ratio", "1.01"},       {"spread", "0.97–1.04"}};
        if (checkpointing) args["checkpointing"] = "yes";
        const accum::EngineMessage within{accum::message_code::plan_faster, args};
        const QString english = studio::engine_message(within, {});
        QVERIFY2(english.contains(QStringLiteral("no measurable difference")), qPrintable(english));
        QVERIFY2(english.contains(QStringLiteral("0.97–1.04 ×")), qPrintable(english));
        QVERIFY2(!english.contains(QStringLiteral("faster")), qPrintable(english));
        QCoreApplication::installTranslator(&vietnamese_);
        const QString vietnamese = studio::engine_message(within, {});
        QCoreApplication::removeTranslator(&vietnamese_);
        QVERIFY2(vietnamese.contains(QStringLiteral("không có khác biệt đo được")), qPrintable(vietnamese));
        QVERIFY2(vietnamese.contains(QStringLiteral("0.97–1.04 ×")), qPrintable(vietnamese));
        // The engine's own word for it (`same`), whatever the spread's text.
        auto said = args;
        said["spread"] = "0.9 to 1.1";
        said["same"] = "yes";
        const QString same = studio::engine_message(accum::EngineMessage{accum::message_code::plan_faster, said}, {});
        QVERIFY2(same.contains(QStringLiteral("no measurable difference")), qPrintable(same));
        args["ratio"] = "1.07";
        args["spread"] = "1.03–1.12";
        const QString faster = studio::engine_message(accum::EngineMessage{accum::message_code::plan_faster, args}, {});
        QVERIFY2(faster.contains(QStringLiteral("1.07 (1.03–1.12) × faster")), qPrintable(faster));
    }
}

// The lesson's step 1, for real, in Vietnamese: the CNN at 256 × 1 runs out of its
// 40 MiB; the banner explains it with the run's numbers and the measured suggestion.
void TestEngineText::outOfMemoryBannerAndStatusInVietnamese() {
    QCoreApplication::installTranslator(&vietnamese_);
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy finished(&window, &MainWindow::run_finished);
    window.start_lesson(0);
    QVERIFY(!finished.isEmpty() || finished.wait(90000));
    const auto summary = finished.takeFirst().at(0).value<accum::SummaryRecord>();
    QCOMPARE(int(summary.status), int(accum::RunStatus::OutOfMemory));
    QCOMPARE(summary.detail.code, std::string(accum::message_code::out_of_memory));
    const auto& args = summary.detail.args;
    QCOMPARE(args.at("suggestion"), std::string(accum::message_code::suggest_measured));

    // The banner: what ran out (256 × 1, what was asked for, what was in use, the
    // budget) and the suggestion (64 × 4, effective batch 256, the measured peak).
    QVERIFY(window.oom_banner()->isVisible());
    const QString banner = window.oom_banner()->text();
    qInfo("banner: %s", qPrintable(banner));
    QVERIFY2(banner.contains(QStringLiteral("Hết bộ nhớ")), qPrintable(banner));
    QVERIFY2(banner.contains(QStringLiteral("256 × 1")), qPrintable(banner));
    for (const char* name : {"requested", "in_use", "budget", "effective_batch"})
        QVERIFY2(banner.contains(QString::fromStdString(args.at(name))), name);
    // The step teaches accumulation (its lever, oom_banner.h). Where the planner
    // measured accumulation fastest, the banner is its suggestion with the measured
    // peak; where it measured checkpointing faster (a busy machine can), the
    // lesson's lever comes first and the planner's pick after it, "also measured".
    if (!summary.suggested_gradient_checkpointing) {
        QVERIFY2(banner.contains(QString::fromStdString(args.at("measured_peak"))), "measured_peak");
        QVERIFY(banner.contains(QStringLiteral("<b>%1</b> × <b>%2</b>")
                                    .arg(summary.suggested_batch_size)
                                    .arg(summary.suggested_accumulation_steps)));
    } else {
        QVERIFY2(banner.contains(QStringLiteral("Cũng đã đo là vừa: %1 × %2 với gradient checkpointing")
                                     .arg(summary.suggested_batch_size)
                                     .arg(summary.suggested_accumulation_steps)),
                 qPrintable(banner));
    }
    QVERIFY2(english_left(banner).isEmpty(), qPrintable(english_left(banner) + QStringLiteral(": ") + banner));

    // The status line: the status and the micro-batch over the budget.
    const auto* status = window.findChild<QLabel*>(QStringLiteral("status_label"));
    QVERIFY(status);
    qInfo("status: %s", qPrintable(status->text()));
    QVERIFY(status->text().startsWith(QStringLiteral("Hết bộ nhớ")));
    QVERIFY(status->text().contains(QStringLiteral("256 × 1")));
    QVERIFY(status->text().contains(QString::fromStdString(args.at("budget"))));
    QVERIFY2(english_left(status->text()).isEmpty(), qPrintable(status->text()));
    // The whole message (the tooltip) too: no English line, not even LibTorch's,
    // which the refused allocation and the memory in use say already.
    QVERIFY2(english_left(status->toolTip()).isEmpty(), qPrintable(status->toolTip()));
    QVERIFY(!status->toolTip().contains(QLatin1Char('[')));
    QCoreApplication::removeTranslator(&vietnamese_);
}

// Data missing: the status line names the directory in a Vietnamese sentence.
void TestEngineText::dataMissingStatusInVietnamese() {
    QCoreApplication::installTranslator(&vietnamese_);
    QTemporaryDir dir;
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto config = window.config_panel()->config();
    config.dataset = accum::DatasetKind::FashionMnist;
    config.model = accum::ModelKind::Mlp;
    config.data_path = dir.filePath(QStringLiteral("nothing")).toStdString();
    window.config_panel()->set_config(config);
    QSignalSpy finished(&window, &MainWindow::run_finished);
    window.start_run();
    QVERIFY(!finished.isEmpty() || finished.wait(30000));
    const auto summary = finished.takeFirst().at(0).value<accum::SummaryRecord>();
    QCOMPARE(summary.detail.code, std::string(accum::message_code::data_directory_missing));
    const auto* status = window.findChild<QLabel*>(QStringLiteral("status_label"));
    qInfo("status: %s", qPrintable(status->text()));
    QVERIFY(status->text().startsWith(QStringLiteral("Lỗi: ")));
    QVERIFY(status->text().contains(QString::fromStdString(config.data_path)));
    QVERIFY(status->text().contains(QStringLiteral("dataset-fashion-mnist")));
    QVERIFY2(english_left(status->text()).isEmpty(), qPrintable(status->text()));
    QCoreApplication::removeTranslator(&vietnamese_);
}

// The form's errors in the interface's language, under its
// Vietnamese labels: the field's error, the line below the form, the effective batch.
void TestEngineText::fieldErrorsInVietnamese() {
    QCoreApplication::installTranslator(&vietnamese_);
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto* panel = window.config_panel();
    auto config = accum::RunConfig{};
    config.learning_rate = 0.0;
    config.batch_size = 999999;
    panel->set_config(config);
    QVERIFY(!panel->is_valid());
    const auto text = panel->problems_text();
    qInfo("problems: %s", qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Tốc độ học: phải lớn hơn 0")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Micro-batch (B): 999999 nhiều hơn 60000 mẫu huấn luyện")), qPrintable(text));
    QVERIFY2(english_left(text).isEmpty() && !text.contains(QStringLiteral("--")), qPrintable(text));
    const auto* error = panel->findChild<QLabel*>(QStringLiteral("learning_rate_error"));
    QVERIFY(error && error->isVisible());
    QCOMPARE(error->text(), QStringLiteral("phải lớn hơn 0"));
    QVERIFY(window.config_problems()->text().contains(QStringLiteral("Tốc độ học")));
    // K = 10000 at 64: ceil(60000 / 64) = 938 micro-batches an epoch, fewer than K.
    config = accum::RunConfig{};
    config.accumulation_steps = 10000;
    panel->set_config(config);
    const auto* effective = panel->findChild<QLabel*>(QStringLiteral("effective_batch"));
    QVERIFY(effective);
    qInfo("effective batch: %s", qPrintable(effective->text()));
    QVERIFY(effective->text().contains(QStringLiteral("938 micro-batch")));
    QVERIFY2(english_left(effective->text()).isEmpty(), qPrintable(effective->text()));
    QCoreApplication::removeTranslator(&vietnamese_);
}

QTEST_MAIN(TestEngineText)
#include "test_engine_text.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
