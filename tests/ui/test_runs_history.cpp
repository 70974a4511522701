// SPDX-License-Identifier: GPL-3.0-or-later
// Runs that stay: the studio saves each run in the user's data directory by
// default, and a studio opened again lists, overlays and deletes the runs of
// earlier sessions; "none" writes nothing. HOME, XDG_DATA_HOME and the settings
// point into a temporary folder: the user's own are never read or written.
// Tiny seeded runs: synthetic-pairs + mlp, a few optimizer steps.

#include <QAction>
#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <memory>
#include <qcustomplot.h>

#include "accum/metrics_io.h"
#include "accum/run_config.h"
#include "config_panel.h"
#include "main_window.h"
#include "runs_folder.h"
#include "tiny_config.h"
#include "runs_panel.h"

using studio::MainWindow;
using studio::RunsPanel;

using test_fixtures::tiny_config;

namespace {

void write_file(const QString& path, const QByteArray& text) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    QVERIFY2(file.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(path));
    file.write(text);
}

QStringList run_dirs() {
    return QDir(studio::default_runs_folder()).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
}

QString cell(const RunsPanel* runs, int row, int column) { return runs->table()->item(row, column)->text(); }

int row_named(const RunsPanel* runs, const QString& name) {
    for (int row = 0; row < runs->run_count(); ++row)
        if (runs->run(row).label == name) return row;
    return -1;
}

} // namespace

class TestRunsHistory : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void defaultFolderIsInTheDataDirectory();
    void earlierRunsStayAfterARestart();
    void damagedAndIncompleteRunsAreListed();
    void theRecordAndTheModelsConfigAreToldApart();
    void deleteRemovesTheFolder();
    void noneWritesNothing();
    void aChosenFolderIsKept();

private:
    std::unique_ptr<MainWindow> new_window();
    // Runs the panel's configuration to its end; false when it does not end in time.
    [[nodiscard]] bool run_to_end(MainWindow& window, accum::SummaryRecord& summary);
    QTemporaryDir home_;
};

void TestRunsHistory::initTestCase() {
    QVERIFY(home_.isValid());
    qputenv("HOME", home_.path().toUtf8());
    qputenv("XDG_DATA_HOME", (home_.path() + "/data").toUtf8());
    qputenv("XDG_CONFIG_HOME", (home_.path() + "/config").toUtf8());
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, home_.path() + "/config");
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, home_.path() + "/config");
}

void TestRunsHistory::init() {
    QSettings(QStringLiteral("AccumulateStudio"), QStringLiteral("accum-studio")).clear();
    QDir(studio::default_runs_folder()).removeRecursively();
}

std::unique_ptr<MainWindow> TestRunsHistory::new_window() {
    auto window = std::make_unique<MainWindow>();
    window->show();
    if (!QTest::qWaitForWindowExposed(window.get())) return nullptr;
    return window;
}

bool TestRunsHistory::run_to_end(MainWindow& window, accum::SummaryRecord& summary) {
    QSignalSpy finished(&window, &MainWindow::run_finished);
    window.run_action()->trigger();
    if (!finished.wait(60000)) return false;
    summary = finished.takeFirst().at(0).value<accum::SummaryRecord>();
    return true;
}

// XDG: $XDG_DATA_HOME/accum-studio/runs, and the studio's field shows it.
void TestRunsHistory::defaultFolderIsInTheDataDirectory() {
    QCOMPARE(studio::default_runs_folder(), home_.path() + "/data/accum-studio/runs");
    const auto window = new_window();
    QVERIFY(window);
    QCOMPARE(QString::fromStdString(window->config_panel()->config().output_dir), studio::default_runs_folder());
    QVERIFY(window->findChild<QCheckBox*>(QStringLiteral("save_runs"))->isChecked());
    QCOMPARE(window->runs_panel()->runs_folder(), studio::default_runs_folder());
}

// A run made in one studio is listed by the next one, with what it was, and
// overlaid on the plots when ticked; its curves are read only then.
void TestRunsHistory::earlierRunsStayAfterARestart() {
    accum::SummaryRecord summary;
    QString run_dir;
    {
        const auto first = new_window();
        QVERIFY(first);
        first->config_panel()->set_config(tiny_config(16, 2, 6));
        QVERIFY2(run_to_end(*first, summary), "the run did not end");
        QCOMPARE(int(summary.status), int(accum::RunStatus::Completed));
        QVERIFY(std::isfinite(summary.final_loss));
        const auto dirs = run_dirs();
        QCOMPARE(dirs.size(), 1);
        run_dir = QDir(studio::default_runs_folder()).filePath(dirs.front());
        // This session's run is listed once, with its folder.
        QCOMPARE(first->runs_panel()->run_count(), 1);
        QCOMPARE(first->runs_panel()->run(0).folder, run_dir);
        QVERIFY(!first->runs_panel()->is_earlier(0));
    }
    for (const char* file : {"accum_config.json", "metrics.jsonl", "summary.json"})
        QVERIFY2(QFile::exists(run_dir + "/" + file), file);

    const auto second = new_window();
    QVERIFY(second);
    auto* runs = second->runs_panel();
    QCOMPARE(runs->run_count(), 1);
    QVERIFY(runs->is_earlier(0));
    QVERIFY(runs->problem(0).isEmpty());
    QCOMPARE(runs->run(0).folder, run_dir);
    QCOMPARE(cell(runs, 0, RunsPanel::Name), QFileInfo(run_dir).fileName());
    QCOMPARE(cell(runs, 0, RunsPanel::Source), QStringLiteral("saved"));
    QCOMPARE(cell(runs, 0, RunsPanel::Style), QStringLiteral("PyTorch loop"));
    QCOMPARE(cell(runs, 0, RunsPanel::B), QStringLiteral("16"));
    QCOMPARE(cell(runs, 0, RunsPanel::K), QStringLiteral("2"));
    QCOMPARE(cell(runs, 0, RunsPanel::Status), QStringLiteral("Completed"));
    QCOMPARE(cell(runs, 0, RunsPanel::Model), QStringLiteral("mlp"));
    QCOMPARE(cell(runs, 0, RunsPanel::Data), QStringLiteral("synthetic-pairs"));
    // The final loss the first studio's run reported, as the table writes it.
    QCOMPARE(cell(runs, 0, RunsPanel::FinalLoss), QString::number(summary.final_loss, 'f', 4));
    // The date is the run's start, from its directory's name (yyyyMMdd-HHmmss).
    const auto started = QDateTime::fromString(QFileInfo(run_dir).fileName().left(15), QStringLiteral("yyyyMMdd-HHmmss"));
    QVERIFY(started.isValid());
    QCOMPARE(cell(runs, 0, RunsPanel::Date), started.toString(QStringLiteral("yyyy-MM-dd HH:mm")));
    QVERIFY(runs->run(0).steps.empty()); // listed from its small files only

    // Ticked, it is drawn: one point per optimizer step (max_steps = 6), on each plot.
    QCOMPARE(runs->plot()->graphCount(), 0);
    runs->set_ticked(0, true);
    QCOMPARE(int(runs->run(0).steps.size()), 6);
    QCOMPARE(runs->plot()->graphCount(), 1);
    QCOMPARE(runs->plotted_points(0), 6);
    runs->set_quantity(RunsPanel::Quantity::PeakMemory);
    QCOMPARE(runs->plotted_points(0), 6);
    QVERIFY(runs->plot()->graph(0)->data()->at(0)->value > 0.0);
    runs->set_quantity(RunsPanel::Quantity::Throughput);
    QVERIFY(runs->plotted_points(0) > 0);
    runs->set_quantity(RunsPanel::Quantity::Loss);
    QCOMPARE(runs->plot()->graph(0)->data()->at(5)->value, runs->run(0).steps.back().loss);

    // A run of this session joins it; the folder's run is not listed twice.
    second->config_panel()->set_config(tiny_config(8, 4, 3));
    QVERIFY2(run_to_end(*second, summary), "the second run did not end");
    QCOMPARE(run_dirs().size(), 2);
    QCOMPARE(runs->run_count(), 2);
    QVERIFY(!runs->is_earlier(1));
    QCOMPARE(cell(runs, 1, RunsPanel::B), QStringLiteral("8"));
}

// A killed run (no summary.json), a damaged config.json or summary.json: listed
// as such, drawn as far as they go; a folder with no run file is not listed.
void TestRunsHistory::damagedAndIncompleteRunsAreListed() {
    const QDir folder(studio::default_runs_folder());
    const auto config = QByteArray::fromStdString(accum::to_json_text(tiny_config(16, 2, 6)));
    accum::StepRecord step;
    step.step = 1;
    step.samples_seen = 32;
    step.elapsed_s = 0.5;
    step.loss = 0.75;
    QByteArray metrics = QByteArray::fromStdString(accum::to_json_line(step)) + "\n";
    step.step = 2;
    step.samples_seen = 64;
    step.elapsed_s = 1.0;
    step.loss = 0.5;
    metrics += QByteArray::fromStdString(accum::to_json_line(step)) + "\n";
    metrics += "{\"type\": \"step\", \"step\": 3, \"lo"; // killed mid-line
    write_file(folder.filePath("20261201-101530/config.json"), config);
    write_file(folder.filePath("20261201-101530/metrics.jsonl"), metrics);
    write_file(folder.filePath("broken/config.json"), "{ \"batch-size\": ");
    write_file(folder.filePath("bad-summary/config.json"), config);
    write_file(folder.filePath("bad-summary/summary.json"), "garbage");
    write_file(folder.filePath("notes/README"), "not a run");

    const auto window = new_window();
    QVERIFY(window);
    auto* runs = window->runs_panel();
    QCOMPARE(runs->run_count(), 3);
    QCOMPARE(row_named(runs, QStringLiteral("notes")), -1);

    const int killed = row_named(runs, QStringLiteral("20261201-101530"));
    QVERIFY(killed >= 0);
    QCOMPARE(cell(runs, killed, RunsPanel::Status), QStringLiteral("Incomplete"));
    QCOMPARE(cell(runs, killed, RunsPanel::FinalLoss), QStringLiteral("0.5000")); // its last whole step's
    QCOMPARE(cell(runs, killed, RunsPanel::Date), QStringLiteral("2026-12-01 10:15"));
    const int broken = row_named(runs, QStringLiteral("broken"));
    QVERIFY(broken >= 0);
    QCOMPARE(cell(runs, broken, RunsPanel::Status), QStringLiteral("Damaged"));
    QVERIFY2(runs->problem(broken).contains(QStringLiteral("config.json")), qPrintable(runs->problem(broken)));
    QCOMPARE(cell(runs, broken, RunsPanel::B), QStringLiteral("–"));
    const int bad_summary = row_named(runs, QStringLiteral("bad-summary"));
    QVERIFY(bad_summary >= 0);
    QCOMPARE(cell(runs, bad_summary, RunsPanel::Status), QStringLiteral("Damaged"));
    QVERIFY2(runs->problem(bad_summary).contains(QStringLiteral("summary.json")),
             qPrintable(runs->problem(bad_summary)));
    QCOMPARE(cell(runs, bad_summary, RunsPanel::B), QStringLiteral("16"));

    for (int row = 0; row < runs->run_count(); ++row) runs->set_ticked(row, true);
    QCOMPARE(runs->plotted_points(killed), 2);
    QCOMPARE(runs->plotted_points(broken), 0);
    QCOMPARE(runs->plotted_points(bad_summary), 0);
}

// A run of a Hugging Face module: its record is accum_config.json, config.json
// the model's (as the Trainer's output_dir); listed and drawn with the record's
// B × K. An older run's config.json is its record; an older run whose config.json
// the model's was written over lists its options as unknown, never the defaults.
void TestRunsHistory::theRecordAndTheModelsConfigAreToldApart() {
    const QDir folder(studio::default_runs_folder());
    const QByteArray model_config = R"({"architectures": ["BertForSequenceClassification"], "model_type": "bert",
                                       "hidden_size": 384, "num_hidden_layers": 12, "vocab_size": 30522})";
    auto record = tiny_config(8, 4, 2);
    record.mode = accum::Mode::Trainer;
    accum::StepRecord step;
    step.step = 1;
    step.samples_seen = 32;
    step.loss = 0.75;
    const QByteArray metrics = QByteArray::fromStdString(accum::to_json_line(step)) + "\n";
    write_file(folder.filePath("20261205-080000/accum_config.json"),
               QByteArray::fromStdString(accum::to_json_text(record)));
    write_file(folder.filePath("20261205-080000/config.json"), model_config);
    write_file(folder.filePath("20261205-080000/metrics.jsonl"), metrics);
    write_file(folder.filePath("20261204-080000/config.json"),
               QByteArray::fromStdString(accum::to_json_text(tiny_config(2, 3, 2))));
    write_file(folder.filePath("20261204-080000/metrics.jsonl"), metrics);
    write_file(folder.filePath("20261203-080000/config.json"), model_config);
    write_file(folder.filePath("20261203-080000/metrics.jsonl"), metrics);

    const auto window = new_window();
    QVERIFY(window);
    auto* runs = window->runs_panel();
    QCOMPARE(runs->run_count(), 3);
    const int current = row_named(runs, QStringLiteral("20261205-080000"));
    const int older = row_named(runs, QStringLiteral("20261204-080000"));
    const int overwritten = row_named(runs, QStringLiteral("20261203-080000"));
    QVERIFY(current >= 0 && older >= 0 && overwritten >= 0);
    for (int row = 0; row < runs->run_count(); ++row) runs->set_ticked(row, true); // read whole: the same options
    QVERIFY2(runs->problem(current).isEmpty(), qPrintable(runs->problem(current)));
    QCOMPARE(cell(runs, current, RunsPanel::B), QStringLiteral("8"));
    QCOMPARE(cell(runs, current, RunsPanel::K), QStringLiteral("4"));
    QCOMPARE(cell(runs, current, RunsPanel::Effective), QStringLiteral("32"));
    QCOMPARE(cell(runs, current, RunsPanel::Style), QStringLiteral("Trainer"));
    QCOMPARE(runs->plotted_points(current), 1);
    QVERIFY2(runs->problem(older).isEmpty(), qPrintable(runs->problem(older)));
    QCOMPARE(cell(runs, older, RunsPanel::B), QStringLiteral("2"));
    QCOMPARE(cell(runs, older, RunsPanel::K), QStringLiteral("3"));
    QVERIFY2(runs->problem(overwritten).contains(QStringLiteral("config.json is the model's")),
             qPrintable(runs->problem(overwritten)));
    QCOMPARE(cell(runs, overwritten, RunsPanel::B), QStringLiteral("–"));
    QCOMPARE(cell(runs, overwritten, RunsPanel::K), QStringLiteral("–"));
    QCOMPARE(runs->plotted_points(overwritten), 1); // its curves are its own all the same
}

// Delete asks first; yes removes the run's folder, no keeps it; a folder
// without accum_config.json or config.json is never deleted.
void TestRunsHistory::deleteRemovesTheFolder() {
    const QDir folder(studio::default_runs_folder());
    const auto config = QByteArray::fromStdString(accum::to_json_text(tiny_config(16, 2, 6)));
    write_file(folder.filePath("20261202-090000/config.json"), config);
    write_file(folder.filePath("20261202-090000/checkpoint-2/model.pt"), "weights");
    write_file(folder.filePath("no-config/metrics.jsonl"), "");

    const auto window = new_window();
    QVERIFY(window);
    auto* runs = window->runs_panel();
    QCOMPARE(runs->run_count(), 2);
    const int kept = row_named(runs, QStringLiteral("no-config"));
    QVERIFY(kept >= 0);
    runs->table()->selectRow(kept);
    QVERIFY(!runs->delete_button()->isEnabled()); // not a run folder: nothing to delete
    QString error;
    QVERIFY(!runs->delete_runs({kept}, &error));
    QVERIFY2(error.contains(QStringLiteral("config.json")), qPrintable(error));
    QVERIFY(folder.exists(QStringLiteral("no-config")));

    QString asked;
    bool answer = false;
    runs->set_confirm([&](const QString& question) {
        asked = question;
        return answer;
    });
    const int doomed = row_named(runs, QStringLiteral("20261202-090000"));
    runs->table()->selectRow(doomed);
    QVERIFY(runs->delete_button()->isEnabled());
    runs->delete_button()->click();
    QVERIFY2(asked.contains(folder.filePath(QStringLiteral("20261202-090000"))), qPrintable(asked));
    QVERIFY(folder.exists(QStringLiteral("20261202-090000"))); // answered no
    QCOMPARE(runs->run_count(), 2);
    answer = true;
    runs->delete_button()->click();
    QVERIFY(!folder.exists(QStringLiteral("20261202-090000")));
    QCOMPARE(runs->run_count(), 1);
    QCOMPARE(runs->run(0).label, QStringLiteral("no-config"));
}

// Unticked, "Save runs in" reads none: a run writes nothing, and the next
// studio starts with none too; ticked again, the folder is back.
void TestRunsHistory::noneWritesNothing() {
    {
        const auto window = new_window();
        QVERIFY(window);
        auto* save = window->findChild<QCheckBox*>(QStringLiteral("save_runs"));
        save->setChecked(false);
        QVERIFY(window->config_panel()->config().output_dir.empty());
        QCOMPARE(window->findChild<QLineEdit*>(QStringLiteral("output_dir"))->placeholderText(),
                 QStringLiteral("none (nothing written)"));
        window->config_panel()->set_config(tiny_config(16, 2, 3));
        QVERIFY(!save->isChecked()); // a configuration without a folder leaves the choice
        accum::SummaryRecord summary;
        QVERIFY2(run_to_end(*window, summary), "the run did not end");
        QCOMPARE(int(summary.status), int(accum::RunStatus::Completed));
        QCOMPARE(window->runs_panel()->run_count(), 1);
        QVERIFY(window->runs_panel()->run(0).folder.isEmpty());
    }
    QVERIFY(!QDir(studio::default_runs_folder()).exists() || run_dirs().isEmpty());
    const auto again = new_window();
    QVERIFY(again);
    auto* save = again->findChild<QCheckBox*>(QStringLiteral("save_runs"));
    QVERIFY(!save->isChecked());
    QVERIFY(again->config_panel()->config().output_dir.empty());
    QVERIFY(again->runs_panel()->runs_folder().isEmpty());
    save->setChecked(true);
    QCOMPARE(QString::fromStdString(again->config_panel()->config().output_dir), studio::default_runs_folder());
}

// Another folder chosen is kept by the next studio, which lists that folder.
void TestRunsHistory::aChosenFolderIsKept() {
    QTemporaryDir elsewhere;
    write_file(elsewhere.filePath("20261203-120000/config.json"),
               QByteArray::fromStdString(accum::to_json_text(tiny_config(4, 8, 6))));
    {
        const auto window = new_window();
        QVERIFY(window);
        window->findChild<QLineEdit*>(QStringLiteral("output_dir"))->setText(elsewhere.path());
        QSignalSpy listed(window->runs_panel(), &RunsPanel::runs_folder_listed);
        QVERIFY(listed.wait(10000)); // listed once the typing pauses
        QCOMPARE(window->runs_panel()->run_count(), 1);
        QCOMPARE(cell(window->runs_panel(), 0, RunsPanel::K), QStringLiteral("8"));
    }
    const auto again = new_window();
    QVERIFY(again);
    QCOMPARE(QString::fromStdString(again->config_panel()->config().output_dir), elsewhere.path());
    QCOMPARE(again->runs_panel()->run_count(), 1);
    QVERIFY(again->runs_panel()->is_earlier(0));
}

QTEST_MAIN(TestRunsHistory)
#include "test_runs_history.moc"
