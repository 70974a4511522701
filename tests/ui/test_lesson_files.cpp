// SPDX-License-Identifier: GPL-3.0-or-later
// Lessons are files (docs/lessons.md). Every shipped lesson loads, and the
// chapter's own lesson walks its steps offscreen at 1280 × 720 in presentation
// mode, each step ending as it says (the built-in lesson's walk is
// test_classroom's). A damaged file is refused with its line and its field. Inside
// a lesson, the out-of-memory advice leads with the step's lever.

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <cstring>

#include "accum/engine_messages.h"
#include "config_panel.h"
#include "lab_plan.h"
#include "lesson.h"
#include "lesson_fixtures.h"
#include "lesson_panel.h"
#include "main_window.h"
#include "offscreen_screens.h"
#include "oom_banner.h"

using studio::MainWindow;
using test_screens::screen_of_size;

namespace {

// A lesson of one step, each field on its line: the damaged copies below change
// one line and expect the refusal to name it.
const char* const kLesson = R"({
  "format": 1,
  "title": {"en": "A lesson", "vi": "Một bài học"},
  "languages": ["en", "vi"],
  "config": {"dataset": "synthetic-pairs", "model": "mlp", "epochs": 0, "max-steps": 2, "device": "cpu"},
  "steps": [
    {
      "key": "one",
      "title": {"en": "One", "vi": "Một"},
      "text": {"en": "First. Second.", "vi": "Thứ nhất. Thứ hai."},
      "run": "live",
      "config": {"batch-size": 4, "accumulation-steps": 2},
      "check": {"kind": "accumulates"}
    }
  ]
}
)";

QByteArray damaged(const char* line_from, const char* line_to) {
    QByteArray text(kLesson);
    const auto at = text.indexOf(line_from);
    if (at < 0) qFatal("the damage's line is not in the lesson: %s", line_from);
    return text.replace(at, qsizetype(std::strlen(line_from)), line_to);
}

// An out-of-memory summary whose planner measured both levers and picked
// `pick_b` × `pick_k` (with checkpointing when `pick_checkpointing`), the other
// lever's `other_b` × `other_k` second: the engine's arguments as the planner
// writes them (engine/src/planning/memory_planner.cpp).
accum::SummaryRecord measured_both(std::int64_t pick_b, std::int64_t pick_k, bool pick_checkpointing,
                                   std::int64_t other_b, std::int64_t other_k) {
    accum::SummaryRecord summary;
    summary.status = accum::RunStatus::OutOfMemory;
    summary.suggested_batch_size = pick_b;
    summary.suggested_accumulation_steps = pick_k;
    summary.suggested_gradient_checkpointing = pick_checkpointing;
    const auto n = [](std::int64_t v) { return std::to_string(v); };
    accum::set_message(summary, accum::make_message(accum::message_code::out_of_memory,
                                                    {{"batch_size", "256"},
                                                     {"accumulation_steps", "1"},
                                                     {"budget", "40.0 MiB"},
                                                     {"peak", "36.1 MiB"},
                                                     {"error", "CPU out of memory (memory budget)."},
                                                     {"suggestion", accum::message_code::suggest_measured},
                                                     {"suggested_batch_size", n(pick_b)},
                                                     {"suggested_accumulation_steps", n(pick_k)},
                                                     {"effective_batch", n(pick_b * pick_k)},
                                                     {"measured_peak", "27.6 MiB"},
                                                     {"checkpointing", pick_checkpointing ? "yes" : ""},
                                                     {"why", accum::message_code::plan_faster},
                                                     {"faster_batch", n(pick_b)},
                                                     {"faster_steps", n(pick_k)},
                                                     {"slower_batch", n(other_b)},
                                                     {"slower_steps", n(other_k)},
                                                     {"ratio", "1.07"},
                                                     {"spread", "1.03–1.12"},
                                                     {"same", ""}}));
    return summary;
}

struct Applied {
    std::int64_t batch = 0, steps = 0;
    bool checkpointing = false;
};

Applied apply(studio::OomBanner& banner) {
    QSignalSpy spy(&banner, &studio::OomBanner::apply_requested);
    QTest::mouseClick(banner.apply_button(), Qt::LeftButton);
    if (spy.size() != 1) return {};
    return {spy[0][0].toLongLong(), spy[0][1].toLongLong(), spy[0][2].toBool()};
}

int sentences(const QString& text) { return int(text.count(QLatin1String(". "))) + 1; }

} // namespace

class TestLessonFiles : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void shippedLessonsLoad();
    void aLessonOfOneStep();
    void damagedFileIsRefused_data();
    void damagedFileIsRefused();
    void openLessonRefusesADamagedFile();
    void trainingArgumentsAreReadWhole();
    void compareStepNamesItsShapes();
    void lessonsAreFilesBesideTheStudio();
    void bannerLeadsWithTheLessonsLever();
    void builtinProblemStepAdvisesAccumulation();
    void chapterLessonWalksItsSteps();

private:
    QTemporaryDir dir_;
};

void TestLessonFiles::initTestCase() {
    QVERIFY(dir_.isValid());
    qputenv("XDG_CONFIG_HOME", dir_.path().toUtf8());
    qputenv("HOME", dir_.path().toUtf8());
    QStandardPaths::setTestModeEnabled(true);
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir_.path());
    QSettings(QStringLiteral("AccumulateStudio"), QStringLiteral("accum-studio")).clear();
    QVERIFY2(screen_of_size(1280, 720), "the offscreen screen was not configured");
}

void TestLessonFiles::shippedLessonsLoad() {
    const auto files = studio::shipped_lessons();
    QCOMPARE(files.size(), 2);
    QCOMPARE(studio::builtin_lesson().file, files.front()); // walked by test_classroom
    for (const auto& file : files) {
        QString error;
        const auto lesson = studio::read_lesson_file(file, &error);
        QVERIFY2(lesson, qPrintable(error));
        QVERIFY(lesson->languages.contains(QStringLiteral("en")) && lesson->languages.contains(QStringLiteral("vi")));
        QVERIFY(lesson->steps.size() >= 5);
        for (const auto& step : lesson->steps) {
            const QString where = QStringLiteral("%1: %2").arg(file, QLatin1String(step.key));
            for (const auto& language : lesson->languages) {
                QVERIFY2(!step.title.in(language).isEmpty(), qPrintable(where));
                const int n = sentences(step.text.in(language));
                QVERIFY2(n >= 2 && n <= 4,
                         qPrintable(where + QStringLiteral(" (%1): %2 sentences").arg(language).arg(n)));
            }
            QVERIFY2(step.title.in(QStringLiteral("vi")) != step.title.in(QStringLiteral("en")), qPrintable(where));
            QVERIFY(step.config && step.check);
            const auto problems = accum::validate(step.config());
            QVERIFY2(problems.empty(), qPrintable(where));
            if (step.run == studio::LessonRun::Experiment)
                for (const auto& planned : studio::plan_experiment(step.experiment, step.config()))
                    QVERIFY2(accum::validate(planned.config).empty(), qPrintable(where + planned.label));
            // Both lessons teach accumulation: the out-of-memory advice leads with it.
            QCOMPARE(int(step.lever), int(studio::MemoryLever::Accumulation));
        }
    }
    // The chapter's lesson: the three loops on a text classifier (token ids and labels).
    const auto chapter = studio::read_lesson_file(files[1], nullptr);
    QVERIFY(chapter);
    QStringList modes;
    for (const auto& step : chapter->steps) {
        const auto c = step.config();
        QCOMPARE(int(c.dataset), int(accum::DatasetKind::SyntheticPairs));
        QCOMPARE(int(c.model), int(accum::ModelKind::Transformer));
        if (step.run == studio::LessonRun::Live) modes << QString::fromStdString(accum::to_string(c.mode));
    }
    QCOMPARE(modes, QStringList({"pytorch", "accelerator", "trainer"}));
}

void TestLessonFiles::aLessonOfOneStep() {
    QString error;
    const auto lesson = studio::parse_lesson(kLesson, QStringLiteral("mine.json"), &error);
    QVERIFY2(lesson, qPrintable(error));
    QCOMPARE(int(lesson->steps.size()), 1);
    const auto& step = lesson->steps[0];
    QCOMPARE(QLatin1String(step.key), QLatin1String("one"));
    QCOMPARE(step.line, 7);
    QCOMPARE(step.title.in(QStringLiteral("vi")), QStringLiteral("Một"));
    QCOMPARE(step.title.in(QStringLiteral("fr")), QStringLiteral("One")); // English when the language is missing
    QCOMPARE(int(step.lever), int(studio::MemoryLever::Planner));         // no lever named: the planner's
    // The lesson's settings, then the step's, on the engine's defaults.
    const auto c = step.config();
    QCOMPARE(int(c.dataset), int(accum::DatasetKind::SyntheticPairs));
    QCOMPARE(c.batch_size, 4);
    QCOMPARE(c.accumulation_steps, 2);
    QCOMPARE(c.max_steps, 2);
    QCOMPARE(c.learning_rate, accum::RunConfig{}.learning_rate);
    // Copies keep the key (it points into storage the copies share).
    const auto copy = lesson->steps;
    QCOMPARE(QLatin1String(copy[0].key), QLatin1String("one"));
}

void TestLessonFiles::damagedFileIsRefused_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("reason");
    const auto row = [](const char* name, const QByteArray& text, int line, const char* field, const char* reason) {
        QTest::newRow(name) << text << line << QString::fromUtf8(field) << QString::fromUtf8(reason);
    };
    row("syntax: a comma missing", damaged("\"key\": \"one\",", "\"key\": \"one\""), 9, "steps[1].key",
        "not JSON: expected ',' or '}'");
    row("syntax: no closing quote", damaged("\"vi\": \"Một\"}", "\"vi\": \"Một}"), 9, "steps[1].title.vi",
        "no closing quote");
    row("syntax: text after the end", QByteArray(kLesson) + "}\n", 17, "(the file)",
        "text after the lesson's closing }");
    row("syntax: empty file", QByteArray(), 1, "(the file)", "expected a value");
    row("unknown field", damaged("\"run\": \"live\",", "\"run\": \"live\", \"pause\": true,"), 11, "steps[1].pause",
        "unknown field");
    row("unknown check", damaged("\"kind\": \"accumulates\"", "\"kind\": \"acumulates\""), 13, "steps[1].check.kind",
        "unknown check \"acumulates\"");
    row("unknown check parameter", damaged("\"kind\": \"accumulates\"", "\"kind\": \"same-loss\", \"tolerence\": 1e-5"),
        13, "steps[1].check.tolerence", "takes tolerance");
    row("unknown run", damaged("\"run\": \"live\"", "\"run\": \"pitfall-nothing\""), 11, "steps[1].run",
        "unknown run \"pitfall-nothing\"");
    row("unknown option", damaged("\"batch-size\": 4", "\"batch-sise\": 4"), 12, "steps[1].config.batch-sise",
        "is not a known option");
    row("wrong type: option", damaged("\"batch-size\": 4", "\"batch-size\": \"four\""), 12,
        "steps[1].config.batch-size", "four");
    row("wrong type: format", damaged("\"format\": 1", "\"format\": \"1\""), 2, "format", "must be a number, not text");
    row("wrong type: check parameter",
        damaged("\"kind\": \"accumulates\"", "\"kind\": \"same-loss\", \"tolerance\": \"small\""), 13,
        "steps[1].check.tolerance", "must be a number");
    row("wrong type: title", damaged("\"title\": {\"en\": \"One\", \"vi\": \"Một\"}", "\"title\": \"One\""), 9,
        "steps[1].title", "must be an object");
    row("out of range", damaged("\"accumulation-steps\": 2", "\"accumulation-steps\": 0"), 12,
        "steps[1].config.accumulation-steps", "");
    row("out of range: an alias", damaged("\"accumulation-steps\": 2", "\"gradient_accumulation_steps\": 0"), 12,
        "steps[1].config.gradient_accumulation_steps", "");
    row("missing language text",
        damaged("\"text\": {\"en\": \"First. Second.\", \"vi\": \"Thứ nhất. Thứ hai.\"}",
                "\"text\": {\"en\": \"First. Second.\"}"),
        10, "steps[1].text.vi", "missing: the text in \"vi\"");
    row("a language the lesson does not name", damaged("\"vi\": \"Một\"}", "\"vi\": \"Một\", \"fr\": \"Un\"}"), 9,
        "steps[1].title.fr", "is not one of the lesson's languages");
    row("missing field", damaged("\"check\": {\"kind\": \"accumulates\"}", "\"lever\": \"accumulation\""), 7,
        "steps[1].check", "missing");
    row("two steps, one key",
        damaged("    }\n  ]",
                "    },\n    {\"key\": \"one\", \"title\": {\"en\": \"1\", \"vi\": \"1\"}, \"text\": "
                "{\"en\": \"1\", \"vi\": \"1\"}, \"run\": \"live\", \"check\": {\"kind\": \"accumulates\"}}\n  ]"),
        15, "steps[2].key", "names an earlier step too");
    row("unknown lever", damaged("\"format\": 1,", "\"format\": 1, \"lever\": \"sharding\","), 2, "lever",
        "unknown value \"sharding\"");
    row("a key twice", damaged("\"run\": \"live\",", "\"run\": \"live\", \"run\": \"live\","), 11, "steps[1].run",
        "appears twice");
    // A step's config holds options; TrainingArguments are stated as such, never mixed in.
    row("a TrainingArguments field among the options",
        damaged("\"batch-size\": 4", "\"per_device_train_batch_size\": 4"), 12,
        "steps[1].config.per_device_train_batch_size", "is a field of TrainingArguments, not an option");
    row("config and training-arguments",
        damaged("\"run\": \"live\",", "\"run\": \"live\", \"training-arguments\": {\"max_steps\": 2},"), 11,
        "steps[1].training-arguments", "not both");
    row("a TrainingArguments value refused",
        damaged("\"config\": {\"batch-size\": 4, \"accumulation-steps\": 2}",
                "\"training-arguments\": {\"per_device_train_batch_size\": \"four\"}"),
        12, "steps[1].training-arguments.per_device_train_batch_size", "four");
    row("shapes in a live step", damaged("\"run\": \"live\",", "\"run\": \"live\", \"shapes\": [[4, 1], [2, 2]],"), 11,
        "steps[1].shapes", "only a compare-accumulation step has shapes");
    row("a shape of 0",
        damaged("\"run\": \"live\",", "\"run\": \"compare-accumulation\", \"shapes\": [[4, 1], [0, 2]],"), 11,
        "steps[1].shapes[2][1]", "a whole number from 1");
    row("one shape", damaged("\"run\": \"live\",", "\"run\": \"compare-accumulation\", \"shapes\": [[4, 1]],"), 11,
        "steps[1].shapes", "2 to 6 shapes");
}

void TestLessonFiles::damagedFileIsRefused() {
    QFETCH(QByteArray, text);
    QFETCH(int, line);
    QFETCH(QString, field);
    QFETCH(QString, reason);
    QString error;
    QVERIFY(!studio::parse_lesson(text, QStringLiteral("/somewhere/mine.json"), &error));
    qInfo("%s", qPrintable(error));
    const QString where = QStringLiteral("mine.json, line %1: %2: ").arg(line).arg(field);
    QVERIFY2(error.startsWith(where), qPrintable(error + QStringLiteral(" (expected ") + where + QLatin1Char(')')));
    QVERIFY2(error.contains(reason), qPrintable(error));
}

void TestLessonFiles::openLessonRefusesADamagedFile() {
    MainWindow window;
    const auto path = dir_.filePath(QStringLiteral("bad.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(damaged("\"kind\": \"accumulates\"", "\"kind\": \"acumulates\""));
    file.close();
    QString error;
    QVERIFY(!window.open_lesson(path, &error));
    QVERIFY2(error.startsWith(QStringLiteral("bad.json, line 13: steps[1].check.kind: ")), qPrintable(error));
    QCOMPARE(&window.lesson_panel()->lesson(), &studio::builtin_lesson()); // nothing changed
    QVERIFY(!window.lesson_panel()->isVisible());
    QVERIFY(!window.open_lesson(dir_.filePath(QStringLiteral("none.json")), &error));
    QVERIFY2(error.contains(QLatin1String("none.json")), qPrintable(error));
    QVERIFY(window.findChild<QAction*>(QStringLiteral("open_lesson_action")));
}

// A step's TrainingArguments are read whole, with Transformers' defaults for
// what they leave out, even when every key is also an option's spelling; the
// same keys as config are options on the lesson's settings.
void TestLessonFiles::trainingArgumentsAreReadWhole() {
    const char* const keys = "{\"learning_rate\": 0.01, \"gradient_accumulation_steps\": 2}";
    const auto step_config = [keys](const char* field) {
        QString error;
        const auto lesson = studio::parse_lesson(
            damaged("\"config\": {\"batch-size\": 4, \"accumulation-steps\": 2}",
                    QStringLiteral("\"%1\": %2").arg(QLatin1String(field), QLatin1String(keys)).toUtf8().constData()),
            QStringLiteral("mine.json"), &error);
        if (!lesson) qFatal("%s", qPrintable(error));
        return lesson->steps[0].config();
    };
    const auto arguments = step_config("training-arguments");
    QCOMPARE(arguments.learning_rate, 0.01);
    QCOMPARE(arguments.accumulation_steps, 2);
    // TrainingArguments' defaults (engine/src/training_arguments.cpp, Transformers' own).
    QCOMPARE(arguments.batch_size, 8);     // per_device_train_batch_size
    QCOMPARE(arguments.seed, std::uint64_t(42)); // seed
    QCOMPARE(int(arguments.optimizer), int(accum::OptimizerKind::AdamW));
    QCOMPARE(int(arguments.dataset), int(accum::DatasetKind::SyntheticPairs)); // the lesson's, no field of it
    const auto options = step_config("config");
    QCOMPARE(options.learning_rate, 0.01);
    QCOMPARE(options.accumulation_steps, 2);
    QCOMPARE(options.batch_size, accum::RunConfig{}.batch_size); // the engine's default: no TrainingArguments
    QCOMPARE(options.seed, accum::RunConfig{}.seed);
    QCOMPARE(options.max_steps, 2); // the lesson's
}

// A compare-accumulation step's shapes are the lab's runs, the reference first.
void TestLessonFiles::compareStepNamesItsShapes() {
    QString error;
    const auto lesson = studio::parse_lesson(
        damaged("\"run\": \"live\",", "\"run\": \"compare-accumulation\", \"shapes\": [[12, 1], [6, 2], [3, 4]],"),
        QStringLiteral("mine.json"), &error);
    QVERIFY2(lesson, qPrintable(error));
    const auto& step = lesson->steps[0];
    const studio::ExperimentShapes named{{12, 1}, {6, 2}, {3, 4}};
    QCOMPARE(step.shapes, named);
    const auto runs = studio::plan_experiment(step.experiment, step.config(), 0.0, step.shapes);
    QCOMPARE(int(runs.size()), 3);
    for (std::size_t i = 0; i < runs.size(); ++i) {
        QCOMPARE(runs[i].config.batch_size, named[i].first);
        QCOMPARE(runs[i].config.accumulation_steps, named[i].second);
        QVERIFY(accum::validate(runs[i].config).empty());
    }
    // Without shapes, the lab's own from the step's B = 4 and K = 2.
    const auto own = studio::plan_experiment(step.experiment, step.config());
    QCOMPARE(int(own.size()), 3);
    QCOMPARE(own[0].config.batch_size, 8);
    // The chapter's lesson names 32 × 1, 8 × 4, 4 × 8.
    const auto chapter = studio::read_lesson_file(studio::chapter_lesson(), &error);
    QVERIFY2(chapter, qPrintable(error));
    const auto& accumulation = chapter->steps[std::size_t(chapter->step_index(QStringLiteral("accumulation")))];
    QCOMPARE(accumulation.shapes, (studio::ExperimentShapes{{32, 1}, {8, 4}, {4, 8}}));
}

// The shipped lessons are files at share/accum-studio/lessons beside the
// studio's bin/ (the build tree's copy, as installed), byte for byte the
// compiled-in ones; Lab › Chapter lesson opens the chapter's.
void TestLessonFiles::lessonsAreFilesBesideTheStudio() {
    const auto app_dir = QCoreApplication::applicationDirPath() + QStringLiteral("/../../app"); // tests/ui → app
    const QString folder = studio::lessons_directory(app_dir);
    QCOMPARE(folder, QDir::cleanPath(QStringLiteral(ACCUM_LESSONS_BUILD_DIR)));
    for (const auto& shipped : studio::shipped_lessons()) {
        QFile compiled(shipped), file(QDir(folder).filePath(QFileInfo(shipped).fileName()));
        QVERIFY(compiled.open(QIODevice::ReadOnly));
        QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(file.fileName()));
        QCOMPARE(file.readAll(), compiled.readAll());
    }
    QVERIFY(studio::lessons_directory(dir_.path()).isEmpty()); // no such folder there
    MainWindow window;
    auto* chapter = window.findChild<QAction*>(QStringLiteral("chapter_lesson_action"));
    QVERIFY(chapter);
    chapter->trigger();
    QCOMPARE(window.lesson_panel()->lesson().file, studio::chapter_lesson());
    QVERIFY(!window.lesson_panel()->isHidden()); // shown with the window
}

void TestLessonFiles::bannerLeadsWithTheLessonsLever() {
    studio::OomBanner banner;
    // The planner picked checkpointing (256 × 1), faster than accumulation (64 × 4).
    const auto checkpointing_faster = measured_both(256, 1, true, 64, 4);
    // Outside a lesson the planner's pick stands.
    banner.show_for(checkpointing_faster, 256, 1);
    const QString planners = banner.text();
    auto a = apply(banner);
    QVERIFY(a.batch == 256 && a.steps == 1 && a.checkpointing);
    // A lesson teaching accumulation: 64 × 4 first (and applied), the pick second.
    banner.show_for(checkpointing_faster, 256, 1, studio::MemoryLever::Accumulation);
    const QString text = banner.text();
    qInfo("%s", qPrintable(text));
    const auto lever_at = text.indexOf(QStringLiteral("<b>64</b> × <b>4</b>"));
    const auto other_at = text.indexOf(QStringLiteral("256 × 1 with gradient checkpointing, 1.07 × faster"));
    QVERIFY2(lever_at >= 0 && other_at > lever_at, qPrintable(text));
    a = apply(banner);
    QVERIFY(a.batch == 64 && a.steps == 4 && !a.checkpointing);
    // A lesson teaching checkpointing: the planner's pick is its lever already.
    banner.show_for(checkpointing_faster, 256, 1, studio::MemoryLever::Checkpointing);
    QCOMPARE(banner.text(), planners);
    a = apply(banner);
    QVERIFY(a.batch == 256 && a.steps == 1 && a.checkpointing);

    // The fixture of lesson step 1: accumulation (128 × 2) measured faster than
    // 256 × 1 with checkpointing.
    const auto accumulation_faster = test_fixtures::lesson_step1_out_of_memory();
    banner.show_for(accumulation_faster, 256, 1, studio::MemoryLever::Accumulation);
    a = apply(banner);
    QVERIFY(a.batch == 128 && a.steps == 2 && !a.checkpointing);
    banner.show_for(accumulation_faster, 256, 1, studio::MemoryLever::Checkpointing);
    const QString ckpt_text = banner.text();
    QVERIFY2(ckpt_text.indexOf(QStringLiteral("<b>256</b> × <b>1</b>")) >= 0 &&
                 ckpt_text.indexOf(QStringLiteral("<b>256</b> × <b>1</b>")) <
                     ckpt_text.indexOf(QStringLiteral("128 × 2 without checkpointing")),
             qPrintable(ckpt_text));
    a = apply(banner);
    QVERIFY(a.batch == 256 && a.steps == 1 && a.checkpointing);
    // One lever measured only (no plan_faster): nothing to put first.
    auto only = accumulation_faster;
    only.detail.args["why"] = accum::message_code::plan_checkpointing_no_larger;
    banner.show_for(only, 256, 1, studio::MemoryLever::Checkpointing);
    a = apply(banner);
    QVERIFY(a.batch == 128 && a.steps == 2 && !a.checkpointing);
}

void TestLessonFiles::builtinProblemStepAdvisesAccumulation() {
    // Lesson step 1 runs out of memory for real: whatever the planner measured
    // faster on this machine, the banner applies accumulation without
    // checkpointing (64 × 4 fits the budget: step 2 runs it).
    MainWindow window;
    window.fit_to_screen(screen_of_size(1280, 720));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy finished(window.lesson_panel(), &studio::LessonPanel::step_finished);
    window.start_lesson(studio::lesson_step_index(QStringLiteral("problem")));
    QVERIFY(finished.wait(90000));
    QVERIFY2(window.lesson_panel()->verdict().as_expected, qPrintable(window.lesson_panel()->verdict().text));
    QVERIFY(window.oom_banner()->isVisible());
    qInfo("%s", qPrintable(window.oom_banner()->text()));
    QTest::mouseClick(window.oom_banner()->apply_button(), Qt::LeftButton);
    const auto c = window.config_panel()->config();
    QCOMPARE(c.batch_size * c.accumulation_steps, 256);
    QVERIFY(c.accumulation_steps > 1);
    QVERIFY(!c.gradient_checkpointing);
    window.lesson_panel()->close_lesson();
}

void TestLessonFiles::chapterLessonWalksItsSteps() {
    // Opened as a teacher's file: a copy on disk, through the window.
    const auto path = dir_.filePath(QStringLiteral("chapter.json"));
    QVERIFY(QFile::copy(studio::shipped_lessons()[1], path));
    MainWindow window;
    window.fit_to_screen(screen_of_size(1280, 720));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.set_presentation_mode(true);
    auto* lesson = window.lesson_panel();
    QSignalSpy finished(lesson, &studio::LessonPanel::step_finished);
    QString error;
    QVERIFY2(window.open_lesson(path, &error), qPrintable(error));
    QVERIFY(lesson->isVisible());
    QCOMPARE(lesson->lesson().file, path);
    const int count = lesson->step_count();
    QCOMPARE(count, int(lesson->lesson().steps.size()));
    for (int i = 0; i < count; ++i) {
        const auto& step = lesson->lesson().steps[static_cast<std::size_t>(i)];
        QCOMPARE(lesson->current(), i);
        QCOMPARE(lesson->title_label()->text(), step.title_text());
        QVERIFY2(!finished.isEmpty() || finished.wait(120000), step.key);
        QCOMPARE(finished.takeFirst().at(0).toInt(), i);
        qInfo("step %d (%s): %s", i + 1, step.key, qPrintable(lesson->verdict().text));
        QVERIFY2(lesson->verdict().as_expected, qPrintable(lesson->verdict().text));
        const auto& runs = lesson->results();
        QVERIFY(!runs.empty());
        for (const auto& run : runs) {
            QCOMPARE(int(run.config.dataset), int(accum::DatasetKind::SyntheticPairs));
            QVERIFY(std::isfinite(run.final_loss()));
        }
        if (step.run == studio::LessonRun::Live) {
            QCOMPARE(int(runs[0].config.mode), int(step.config().mode));
            QCOMPARE(runs[0].summary.micro_steps, runs[0].config.accumulation_steps * runs[0].summary.optimizer_steps);
        }
        if (QLatin1String(step.key) == QLatin1String("trainer")) {
            // The Trainer's epoch log: one evaluation at the end of each epoch.
            QCOMPARE(int(runs[0].evals.size()), int(runs[0].config.epochs));
            QCOMPARE(runs[0].evals.back().epoch, double(runs[0].config.epochs));
        }
        // Nothing cut at 1280 × 720 in presentation mode.
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        const QSize minimum = window.minimumSizeHint();
        QVERIFY2(minimum.width() <= 1280 && minimum.height() <= 720,
                 qPrintable(QStringLiteral("%1: the window needs %2x%3")
                                .arg(QLatin1String(step.key))
                                .arg(minimum.width())
                                .arg(minimum.height())));
        if (i + 1 < count) QTest::mouseClick(lesson->next_button(), Qt::LeftButton);
    }
    window.set_presentation_mode(false);
    // Lab › Lesson goes back to the built-in lesson.
    auto* builtin = window.findChild<QAction*>(QStringLiteral("lesson_action"));
    QVERIFY(builtin);
    builtin->trigger();
    QCOMPARE(&lesson->lesson(), &studio::builtin_lesson());
    QCOMPARE(lesson->current(), 0);
    lesson->close_lesson();
    QTRY_VERIFY_WITH_TIMEOUT(!lesson->is_running(), 60000);
}

int main(int argc, char** argv) {
    QTemporaryDir dir;
    if (!test_screens::use_offscreen_screens(dir.filePath(QStringLiteral("screens.json")),
                                             {{"projector-1280", {1280, 720}}}))
        return 1;
    QApplication app(argc, argv);
    TestLessonFiles test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_lesson_files.moc"
