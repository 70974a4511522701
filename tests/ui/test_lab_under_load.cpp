// SPDX-License-Identifier: GPL-3.0-or-later
// The lab's comparison beside a spinning neighbour: the same Δ loss as on a quiet
// machine. The engine's thread tuner lowers a run's thread count while other
// programs take cores, and a count changed mid-run changes the order of its sums;
// the lab's runs keep the count they start with (RunConfig::keep_threads), so
// what the class compares is what a quiet machine gives. This test runs with the
// adapting default (CTest does not set ACCUM_ADAPTIVE_THREADS=0 for it).

#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTest>
#include <cmath>
#include <vector>

#include "config_panel.h"
#include "lab_panel.h"
#include "main_window.h"
#include "run_result.h"
#include "tiny_config.h"

namespace {

struct Comparison {
    std::vector<studio::RunResult> runs;
    double max_difference = 0;
};

// A compare-styles experiment on the tiny MLP, as long as the lab makes it.
Comparison compare_styles() {
    Comparison out;
    studio::MainWindow window;
    window.show();
    if (!QTest::qWaitForWindowExposed(&window)) return out;
    window.config_panel()->set_config(test_fixtures::tiny_config(64, 4, 40));
    QSignalSpy done(&window, &studio::MainWindow::experiment_finished);
    if (!window.run_demo(QStringLiteral("compare-styles")) || !done.wait(600000)) return out;
    out.runs = window.lab_panel()->results();
    out.max_difference = window.lab_panel()->max_loss_difference();
    return out;
}

// CPU time (utime + stime, clock ticks) of process `pid`, from /proc; -1 if unread.
long long cpu_ticks(qint64 pid) {
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly)) return -1;
    const auto text = QString::fromLatin1(stat.readAll());
    const auto fields = text.mid(text.lastIndexOf(QLatin1Char(')')) + 2).split(QLatin1Char(' '));
    if (fields.size() < 13) return -1;
    return fields[11].toLongLong() + fields[12].toLongLong(); // fields 14 and 15 of proc(5)
}

} // namespace

class TestLabUnderLoad : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void sameDeltaBesideASpinningCore();
};

void TestLabUnderLoad::sameDeltaBesideASpinningCore() {
    const auto quiet = compare_styles();

    QProcess spinner;
    spinner.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), QStringLiteral("while :; do :; done")});
    QVERIFY(spinner.waitForStarted(10000));
    // Spinning before the lab starts: its CPU time grows (bounded wait on the event).
    QTRY_VERIFY_WITH_TIMEOUT(cpu_ticks(spinner.processId()) > 5, 10000);
    const auto loaded = compare_styles();
    spinner.kill();
    QVERIFY(spinner.waitForFinished(10000));

    for (const auto* c : {&quiet, &loaded}) {
        QCOMPARE(int(c->runs.size()), 3);
        for (const auto& r : c->runs) {
            QCOMPARE(int(r.summary.status), int(accum::RunStatus::Completed));
            QCOMPARE(std::int64_t(r.steps.size()), r.config.max_steps); // the lab's length, within the first epoch
            // One thread count from the first step to the last.
            for (const auto& s : r.steps) {
                QVERIFY(std::isfinite(s.loss));
                QCOMPARE(s.threads, r.steps.front().threads);
            }
        }
        QVERIFY(std::isfinite(c->max_difference));
    }
    // The same runs, step for step and bit for bit, so the same Δ the lab shows.
    for (std::size_t i = 0; i < quiet.runs.size(); ++i) {
        QCOMPARE(loaded.runs[i].steps.front().threads, quiet.runs[i].steps.front().threads);
        for (std::size_t s = 0; s < quiet.runs[i].steps.size(); ++s)
            QCOMPARE(loaded.runs[i].steps[s].loss, quiet.runs[i].steps[s].loss);
    }
    QCOMPARE(loaded.max_difference, quiet.max_difference);
}

QTEST_MAIN(TestLabUnderLoad)
#include "test_lab_under_load.moc"
