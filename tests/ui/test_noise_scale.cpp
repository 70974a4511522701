// SPDX-License-Identifier: GPL-3.0-or-later
// The gradient noise scale in the studio, on made-up records (no training): the
// readout and its plot, the planner's advice against a measured figure (the
// paper's model worked by hand below), the Runs tab's column and the planner
// taking a chosen run's figure, the noise-scale experiment's plan and the
// lesson's check.

#include <QLabel>
#include <QSettings>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

#include "isolated_settings.h"
#include "config_panel.h"
#include "lab_plan.h"
#include "lesson.h"
#include "main_window.h"
#include "noise_plot.h"
#include "noise_scale.h"
#include "runs_panel.h"
#include "tiny_config.h"

using test_fixtures::tiny_config;

namespace {

accum::StepRecord step(std::int64_t n, std::int64_t samples, double loss, double noise_scale) {
    accum::StepRecord s;
    s.step = n;
    s.samples_seen = samples;
    s.loss = loss;
    s.noise_scale = noise_scale;
    return s;
}

// A finished run of `steps` updates of `effective` samples whose loss falls from
// `first` to `last` and whose running noise scale ends at `noise_scale`.
studio::RunResult made_up_run(std::int64_t micro, std::int64_t k, std::int64_t steps, double first, double last,
                              double noise_scale) {
    studio::RunResult r;
    r.label = QStringLiteral("%1 × %2").arg(micro).arg(k);
    r.config = tiny_config(micro, k, steps);
    const auto effective = micro * k;
    for (std::int64_t i = 1; i <= steps; ++i)
        r.steps.push_back(step(i, i * effective, first + (last - first) * double(i) / double(steps), noise_scale));
    r.has_summary = true;
    r.summary.status = accum::RunStatus::Completed;
    r.summary.noise_scale = noise_scale;
    return r;
}

} // namespace

class TestNoiseScale : public QObject {
    Q_OBJECT
    QTemporaryDir settings_dir_;
private Q_SLOTS:
    void initTestCase();
    void figures();
    void adviceFollowsThePapersModel();
    void readoutSaysWhereTheBatchSits();
    void plotTakesOnlyMeasuredSteps();
    void plannerTakesAChosenRun();
    void experimentPlansTwoBatchesOnTheSameSamples();
    void lessonCheckNeedsTheMeasuredBracket();
};

// The window's settings and its runs folder in a folder of the test's own.
void TestNoiseScale::initTestCase() {
    QVERIFY(settings_dir_.isValid());
    isolate_settings(settings_dir_.path());
}

void TestNoiseScale::figures() {
    QCOMPARE(studio::noise_figure(123.4), QStringLiteral("120"));
    QCOMPARE(studio::noise_figure(4096), QStringLiteral("4100"));
    QCOMPARE(studio::noise_figure(2.13), QStringLiteral("2.1"));
    QCOMPARE(studio::noise_figure(0.351), QStringLiteral("0.35"));
    QCOMPARE(studio::noise_figure(std::nan("")), QStringLiteral("–"));
    QVERIFY(!studio::noise_scale_known(std::nan("")));
    QVERIFY(!studio::noise_scale_known(0.0));
    QVERIFY(!studio::noise_scale_known(-3.0));
    QVERIFY(studio::noise_scale_known(1e-3));
}

// S/S_min = 1 + B_noise/B and E/E_min = 1 + B/B_noise (McCandlish et al. 2018, eq. 2.11):
// the figures below are those formulas worked by hand.
void TestNoiseScale::adviceFollowsThePapersModel() {
    // 256 against 120: 2.13 × it, just above; steps 1 + 120/256 = 1.47, samples 3.13.
    auto a = studio::noise_advice(120.0, 256.0, 8);
    QCOMPARE(a.regime, studio::NoiseRegime::Above);
    QVERIFY(std::abs(a.ratio - 256.0 / 120.0) < 1e-12);
    QVERIFY(std::abs(a.steps_factor - (1.0 + 120.0 / 256.0)) < 1e-12);
    QVERIFY(std::abs(a.samples_factor - (1.0 + 256.0 / 120.0)) < 1e-12);
    // The K nearest the noise scale: round(120/32) = 4, 128 samples.
    QCOMPARE(a.smaller_k, std::int64_t(4));
    // 32 × 4 = 128 against 100 is near it: nothing smaller to name.
    QCOMPARE(studio::noise_advice(100.0, 128.0, 4).smaller_k, std::int64_t(0));

    // 32 × 64 = 2048 against 100: far above. The K nearest the noise scale: round(100/32)
    // = 3 (96 samples); against 2048 its steps (1 + 100/96)/(1 + 100/2048) = 1.95 × and
    // its samples (1 + 0.96)/(1 + 20.48) = 0.091 ×.
    a = studio::noise_advice(100.0, 2048.0, 64);
    QCOMPARE(a.regime, studio::NoiseRegime::Above);
    QCOMPARE(a.smaller_k, std::int64_t(3));
    QCOMPARE(a.smaller_effective_batch, 96.0);
    QVERIFY(std::abs(a.smaller_steps_vs_target - (1.0 + 100.0 / 96.0) / (1.0 + 100.0 / 2048.0)) < 1e-12);
    QVERIFY(std::abs(a.smaller_samples_vs_target - (1.0 + 0.96) / (1.0 + 20.48)) < 1e-12);
    QVERIFY(a.smaller_steps_vs_target > 1.0 && a.smaller_samples_vs_target < 1.0);
    const auto text = studio::noise_advice_text(a, QStringLiteral("the live run"), false);
    QVERIFY2(text.contains(QStringLiteral("K = 3 (effective batch 96)")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("estimate")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("the live run")), qPrintable(text));

    QCOMPARE(studio::noise_advice(1000.0, 64.0, 2).regime, studio::NoiseRegime::Below);
    QCOMPARE(studio::noise_advice(100.0, 128.0, 4).regime, studio::NoiseRegime::Near);
    // Nothing measured: no ratio, no text.
    a = studio::noise_advice(std::nan(""), 256.0, 8);
    QCOMPARE(a.ratio, 0.0);
    QVERIFY(studio::noise_advice_text(a, QStringLiteral("x"), false).isEmpty());
}

void TestNoiseScale::readoutSaysWhereTheBatchSits() {
    QCOMPARE(studio::noise_readout_text(120.0, 256.0, false),
             QStringLiteral("Noise scale ≈ 120 samples; your effective batch 256 = 2.1 × that."));
    QCOMPARE(studio::noise_readout_text(5000.0, 2048.0, true),
             QStringLiteral("Noise scale ≈ 5000 tokens; your effective batch 2048 tokens = 0.41 × that."));
    for (auto regime : {studio::NoiseRegime::Below, studio::NoiseRegime::Near, studio::NoiseRegime::Above})
        QVERIFY(!studio::noise_meaning_text(regime).isEmpty());
}

void TestNoiseScale::plotTakesOnlyMeasuredSteps() {
    studio::NoisePlot plot;
    plot.resize(400, 240);
    plot.start_run(tiny_config(32, 8, 10));
    studio::RecordBatch batch;
    batch.steps.push_back(step(1, 256, 2.0, std::nan(""))); // the first window: nothing to average yet
    plot.append(batch);
    plot.refresh();
    QCOMPARE(plot.point_count(), 0);
    QVERIFY(plot.readout()->isHidden());
    batch.steps = {step(2, 512, 1.9, 150.0), step(3, 768, 1.8, 120.0)};
    plot.append(batch);
    plot.refresh();
    QCOMPARE(plot.point_count(), 2);
    QCOMPARE(plot.noise_scale(), 120.0);
    QCOMPARE(plot.effective_batch(), 256.0);
    QVERIFY(!plot.readout()->isHidden());
    QVERIFY2(plot.readout()->text().contains(QStringLiteral("your effective batch 256 = 2.1 × that")),
             qPrintable(plot.readout()->text()));
    QVERIFY(plot.readout()->text().contains(studio::noise_meaning_text(studio::NoiseRegime::Above)));

    // Token normalisation: the noise scale and the window in tokens (the records' batch_big).
    auto tokens = tiny_config(4, 4, 10);
    tokens.loss_normalization = accum::LossNormalization::Tokens;
    plot.start_run(tokens);
    QCOMPARE(plot.point_count(), 0);
    auto s = step(1, 16, 3.0, 800.0);
    s.batch_big = 400.0;
    batch.steps = {s};
    plot.append(batch);
    plot.refresh();
    QCOMPARE(plot.effective_batch(), 400.0);
    QVERIFY2(plot.readout()->text().contains(QStringLiteral("800 tokens")), qPrintable(plot.readout()->text()));
    QVERIFY(plot.readout()->text().contains(studio::noise_meaning_text(studio::NoiseRegime::Near)));
}

// The planner's line under the effective batch takes the noise scale of the run
// chosen in the Runs tab, and says where the form's batch sits against it.
void TestNoiseScale::plannerTakesAChosenRun() {
    studio::MainWindow window;
    auto* planner = window.config_panel()->noise_advice_label();
    QVERIFY(planner->isHidden());
    auto form = tiny_config(32, 64, 10);
    window.config_panel()->set_config(form);
    auto measured = made_up_run(16, 4, 5, 2.0, 1.5, 100.0);
    measured.config = form; // measured on the form's model and data
    window.runs_panel()->add_run(measured);
    window.runs_panel()->add_run(made_up_run(16, 1, 5, 2.0, 1.5, std::nan(""))); // K = 1: nothing measured
    auto* table = window.runs_panel()->table();
    const int row = window.runs_panel()->run_count() - 2; // after any run of the (empty) runs folder
    QCOMPARE(table->item(row, studio::RunsPanel::NoiseScale)->text(), QStringLiteral("100"));
    QCOMPARE(table->item(row + 1, studio::RunsPanel::NoiseScale)->text(), QStringLiteral("–"));
    table->setCurrentCell(row + 1, 0);
    QVERIFY(planner->isHidden()); // a run without a figure leaves the planner as it was
    table->setCurrentCell(row, 0);
    QCOMPARE(window.config_panel()->measured_noise_scale(), 100.0);
    QVERIFY(!planner->isHidden());
    // 32 × 64 = 2048 against 100, as adviceFollowsThePapersModel works out.
    QVERIFY2(planner->text().contains(QStringLiteral("20 × it")), qPrintable(planner->text()));
    QVERIFY2(planner->text().contains(QStringLiteral("K = 3")), qPrintable(planner->text()));
    QVERIFY2(planner->text().contains(measured.label), qPrintable(planner->text()));
    QCOMPARE(window.config_panel()->measured_noise_scale_for(form), 100.0);
    // Another model: the figure stays, with a warning, and the lab does not plan with it.
    auto other = form;
    other.model = accum::ModelKind::Cnn;
    other.dataset = accum::DatasetKind::FashionMnist;
    window.config_panel()->set_config(other);
    QVERIFY2(planner->text().contains(QStringLiteral("another model")), qPrintable(planner->text()));
    QCOMPARE(window.config_panel()->measured_noise_scale_for(other), 0.0);
    // The form's batch changes: the advice follows it (32 × 4 = 128 against 100: near).
    window.config_panel()->set_config(form);
    window.config_panel()->set_batching(32, 4);
    QVERIFY2(!planner->text().contains(QStringLiteral("K = ")), qPrintable(planner->text()));
    QVERIFY2(planner->text().contains(QStringLiteral("1.3 × it")), qPrintable(planner->text()));
}

void TestNoiseScale::experimentPlansTwoBatchesOnTheSameSamples() {
    auto base = tiny_config(64, 4, 10);
    base.model = accum::ModelKind::Cnn;
    base.dataset = accum::DatasetKind::FashionMnist;
    for (const double noise_scale : {0.0, 100.0, 900.0}) {
        const double expected = noise_scale > 0 ? noise_scale : studio::kDefaultNoiseScale;
        const auto plan = studio::plan_experiment(studio::Experiment::NoiseScale, base, noise_scale);
        QCOMPARE(int(plan.size()), 2);
        const auto& small = plan[0].config;
        const auto& big = plan[1].config;
        QCOMPARE(small.batch_size, big.batch_size); // the same micro-batch: only K differs
        QVERIFY(small.accumulation_steps >= 2);      // both runs measure the noise scale
        QVERIFY2(double(small.effective_batch()) * studio::kNoiseScaleMargin <= expected, qPrintable(plan[0].label));
        QVERIFY2(double(big.effective_batch()) >= expected * studio::kNoiseScaleMargin, qPrintable(plan[1].label));
        QCOMPARE(small.max_steps * small.effective_batch(), big.max_steps * big.effective_batch());
        QCOMPARE(big.max_steps, std::int64_t(10));
        QVERIFY(accum::validate(small).empty() && accum::validate(big).empty());
    }
}

void TestNoiseScale::lessonCheckNeedsTheMeasuredBracket() {
    const studio::CheckKind* kind = nullptr;
    for (const auto& k : studio::check_kinds())
        if (std::string(k.name) == "noise-scale-steps") kind = &k;
    QVERIFY(kind);
    const auto& p = kind->defaults;
    // 8 × 2 = 16 and 8 × 64 = 512 on 5120 samples, the noise scale 100 between them.
    auto small = made_up_run(8, 2, 320, 2.3, 0.6, 110.0);
    auto big = made_up_run(8, 64, 10, 2.3, 1.2, 90.0);
    auto verdict = kind->check({small, big}, p);
    QVERIFY2(verdict.as_expected, qPrintable(verdict.text));
    QVERIFY2(verdict.text.contains(QStringLiteral("Both saw 5120 samples")), qPrintable(verdict.text));
    QVERIFY2(verdict.text.contains(QStringLiteral("32 × fewer")), qPrintable(verdict.text));
    // The big batch got further on the same samples: not what the step teaches.
    auto better_big = made_up_run(8, 64, 10, 2.3, 0.3, 90.0);
    QVERIFY(!kind->check({small, better_big}, p).as_expected);
    QVERIFY(kind->check({made_up_run(8, 2, 320, 2.3, 0.6, 400.0), big}, p).as_expected);
    // Not measured: nothing to place the batches against.
    auto unmeasured_small = made_up_run(8, 2, 320, 2.3, 0.6, std::nan(""));
    auto unmeasured = made_up_run(8, 64, 10, 2.3, 1.2, std::nan(""));
    QVERIFY(!kind->check({unmeasured_small, unmeasured}, p).as_expected);
    // The big run's figure counts (near the start): the small run's drifts with its 320 updates.
    QVERIFY(!kind->check({small, made_up_run(8, 64, 10, 2.3, 1.2, 400.0)}, p).as_expected);
    // Different samples.
    QVERIFY(!kind->check({made_up_run(8, 2, 300, 2.3, 0.6, 110.0), big}, p).as_expected);
    // A run that did not complete.
    big.summary.status = accum::RunStatus::Stopped;
    QVERIFY(!kind->check({small, big}, p).as_expected);
}

QTEST_MAIN(TestNoiseScale)
#include "test_noise_scale.moc"
