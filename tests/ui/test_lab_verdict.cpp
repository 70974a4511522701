// SPDX-License-Identifier: GPL-3.0-or-later
// The lab's verdict line alone (lab_verdict.h), on results made up here: no
// run, no widget. Each number in a verdict is computed here from the made-up
// losses and speeds, so a verdict that reads the wrong run or rounds wrongly fails.

#include <QTest>
#include <vector>

#include "accum/engine_messages.h"
#include "lab_verdict.h"

namespace {

// A completed run with one step record per loss, `seconds` apart and 8 samples each.
studio::RunResult run(const QString& label, const std::vector<double>& losses, double seconds = 0.5) {
    studio::RunResult r;
    r.label = label;
    r.has_summary = true;
    r.summary.status = accum::RunStatus::Completed;
    for (std::size_t i = 0; i < losses.size(); ++i) {
        accum::StepRecord s;
        s.step = static_cast<std::int64_t>(i + 1);
        s.loss = losses[i];
        s.samples_seen = 8 * s.step;
        s.elapsed_s = seconds * double(s.step);
        r.steps.push_back(s);
    }
    return r;
}

} // namespace

class TestLabVerdict : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void whileRunning();
    void stylesTheSameOrNot();
    void noVerdictWithoutEveryRun();
    void pitfallAgainstTheReference();
    void memoryLeversSameOrApart();
};

void TestLabVerdict::whileRunning() {
    QCOMPARE(studio::LabVerdict::planned(3), QStringLiteral("Running 3 runs one after another…"));
    QCOMPARE(studio::LabVerdict::running(0, 3, QStringLiteral("pytorch")), QStringLiteral("Run 1 of 3: pytorch…"));
    QCOMPARE(studio::LabVerdict::running(2, 3, QStringLiteral("trainer")), QStringLiteral("Run 3 of 3: trainer…"));
}

void TestLabVerdict::stylesTheSameOrNot() {
    using studio::Experiment;
    const std::vector<double> losses = {0.9, 0.7, 0.5, 0.4};
    std::vector<studio::RunResult> same = {run("pytorch", losses), run("accelerate", losses), run("trainer", losses)};
    QCOMPARE(studio::LabVerdict::finished(Experiment::CompareStyles, same),
             QStringLiteral("Largest |Δ loss| between any two styles over 4 updates: 0 (bit-identical) — the same "
                            "trajectory."));
    // 2e-7 apart at step 3: within float rounding (below 1e-5), said in 2-digit e-notation.
    same[2].steps[2].loss += 2e-7;
    const auto rounding = studio::LabVerdict::finished(Experiment::CompareStyles, same);
    QVERIFY2(rounding.contains(QStringLiteral(": 2.00e-07 — the same trajectory.")), qPrintable(rounding));
    // 0.01 apart: above the rounding level, they differ.
    same[1].steps[3].loss += 0.01;
    QCOMPARE(studio::LabVerdict::finished(Experiment::CompareStyles, same),
             QStringLiteral("Largest |Δ loss| between styles: 1.00e-02 — they differ (partial windows? dropout?)."));
}

void TestLabVerdict::noVerdictWithoutEveryRun() {
    using studio::Experiment;
    const std::vector<double> losses = {0.9, 0.7};
    std::vector<studio::RunResult> runs = {run("pytorch", losses), run("trainer", losses)};
    runs[1].summary.status = accum::RunStatus::Stopped;
    QCOMPARE(studio::LabVerdict::finished(Experiment::CompareStyles, runs),
             QStringLiteral("Not every run completed; see the status column of the Runs tab."));
    // A run the engine refused (another run trains) is named, with the engine's reason.
    runs[1].summary.status = accum::RunStatus::Error;
    runs[1].summary.detail.code = accum::message_code::run_in_progress;
    const auto refused = studio::LabVerdict::finished(Experiment::CompareStyles, runs);
    QVERIFY2(refused.startsWith(QStringLiteral("Run “trainer” did not start: ")), qPrintable(refused));
}

void TestLabVerdict::pitfallAgainstTheReference() {
    using studio::Experiment;
    const std::vector<double> losses = {0.9, 0.7, 0.5};
    std::vector<studio::RunResult> runs = {run("reference", losses), run("variant", losses), run("same", losses)};
    runs[1].steps[1].loss += 0.03;
    QCOMPARE(studio::LabVerdict::finished(Experiment::PitfallScheduler, runs),
             QStringLiteral("Largest |Δ loss| against “reference” — variant: 3.0e-02 · same: 0 (bit-identical)."));
    // One run alone: no pair to compare.
    QCOMPARE(studio::LabVerdict::finished(Experiment::PitfallScheduler, {runs[0]}),
             QStringLiteral("Largest |Δ loss| between the variants: –."));
}

// The memory levers change only the order of the sums: the verdict says "Same
// losses" only below the rounding level (1e-5, the |Δ loss| panel's band), and
// names the difference as the sums' order otherwise (the CNN on LibTorch 1.13
// ends 1.2e-3 apart after its loss spike).
void TestLabVerdict::memoryLeversSameOrApart() {
    using studio::Experiment;
    const std::vector<double> losses = {2.3, 4.1, 0.82};
    std::vector<studio::RunResult> runs = {run("256 × 1", losses), run("64 × 4", losses)};
    runs[1].steps[2].loss += 3e-6;
    const auto same = studio::LabVerdict::finished(Experiment::MemoryLevers, runs);
    QVERIFY2(same.startsWith(QStringLiteral("Same losses: largest |Δ loss| 3.00e-06.\n")), qPrintable(same));
    runs[1].steps[2].loss += 1.2e-3;
    const auto apart = studio::LabVerdict::finished(Experiment::MemoryLevers, runs);
    QVERIFY2(apart.startsWith(QStringLiteral("Losses apart by up to 1.20e-03, above float rounding: the same sums in "
                                             "another order, the difference grown by training.\nPeak activations ")),
             qPrintable(apart));
    // The other demos whose runs differ only in the sums' order say the same.
    for (const auto experiment : {Experiment::CompareAccumulation, Experiment::NoSyncVsSyncEach}) {
        const auto text = studio::LabVerdict::finished(experiment, runs);
        QVERIFY2(text.startsWith(QStringLiteral("Losses apart by up to 1.20e-03, above float rounding")), qPrintable(text));
    }
}

QTEST_GUILESS_MAIN(TestLabVerdict)
#include "test_lab_verdict.moc"
