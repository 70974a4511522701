// SPDX-License-Identifier: GPL-3.0-or-later
// The lab's charts alone (lab_charts.h), drawn from results made up here: no
// run, no panel. The curves hold each run's points, the |Δ loss| panel one
// graph per run after the first with |Δ| against the first, the memory bars
// one stacked bar per run whose height is the run's measured peak; clearing
// empties them and presentation mode enlarges the text and the lines.

#include <QTest>
#include <cmath>
#include <qcustomplot.h>
#include <vector>

#include "lab_charts.h"
#include "lab_panel_parts.h"

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// A run of `losses`, one optimizer step each, `batch` samples a step. Memory:
// 4 MiB parameters and gradients, 8 MiB optimizer state, `activations_mib`
// at each step's peak, so that its peak is 16 MiB + the activations.
studio::RunResult run(const QString& label, const std::vector<double>& losses, std::int64_t batch = 32,
                      double activations_mib = 0.0) {
    studio::RunResult r;
    r.label = label;
    r.config.batch_size = batch;
    r.config.accumulation_steps = 1;
    r.parameters_bytes = std::int64_t(4 * kMiB);
    r.gradients_bytes = std::int64_t(4 * kMiB);
    r.optimizer_state_bytes = std::int64_t(8 * kMiB);
    for (std::size_t i = 0; i < losses.size(); ++i) {
        accum::StepRecord s;
        s.step = static_cast<std::int64_t>(i + 1);
        s.samples_seen = s.step * batch;
        s.loss = losses[i];
        s.learning_rate = 0.1 / double(i + 1);
        s.peak_activations_bytes = std::int64_t(activations_mib * kMiB);
        s.peak_memory_bytes = std::int64_t(16 * kMiB) + s.peak_activations_bytes;
        r.steps.push_back(s);
    }
    return r;
}

// The graphs on the curves' value axis (the loss, rate or scale of each run).
std::vector<QCPGraph*> curves(const studio::LabCharts& charts) {
    std::vector<QCPGraph*> out;
    for (int i = 0; i < charts.plot()->graphCount(); ++i)
        if (charts.plot()->graph(i)->valueAxis() == charts.plot()->yAxis) out.push_back(charts.plot()->graph(i));
    return out;
}

std::vector<QCPGraph*> deltas(const studio::LabCharts& charts) {
    std::vector<QCPGraph*> out;
    for (int i = 0; i < charts.plot()->graphCount(); ++i)
        if (charts.plot()->graph(i)->valueAxis() == charts.delta_rect()->axis(QCPAxis::atLeft))
            out.push_back(charts.plot()->graph(i));
    return out;
}

// The height of the stacked bar at `key`: the sum of the categories' values there.
double stacked_mib(QCustomPlot* bars, double key) {
    double sum = 0.0;
    for (int p = 0; p < bars->plottableCount(); ++p) {
        auto* b = qobject_cast<QCPBars*>(bars->plottable(p));
        if (!b) continue;
        for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it)
            if (it->key == key) sum += it->value;
    }
    return sum;
}

} // namespace

class TestLabCharts : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void curvesHoldEachRunsPoints();
    void deltaGraphsMatchTheRunsCompared();
    void memoryBarsOnePerRunAtItsPeak();
    void clearEmptiesTheCharts();
    void presentationScaleEnlargesText();
    void presentationBarsLegendFitsThePlot();
};

void TestLabCharts::curvesHoldEachRunsPoints() {
    studio::LabCharts charts(QFont{});
    QCOMPARE(charts.plot()->objectName(), QStringLiteral("lab_plot")); // what the window's tests find
    const std::vector<studio::RunResult> runs = {run("B=32 × K=1", {0.9, 0.6, 0.5}), run("B=8 × K=4", {0.9, 0.625, 0.5}, 8),
                                                 run("", {1.0, 0.8})};
    charts.fill(runs, {});
    auto graphs = curves(charts);
    QCOMPARE(int(graphs.size()), 3);
    for (std::size_t i = 0; i < runs.size(); ++i) {
        QCOMPARE(graphs[i]->data()->size(), int(runs[i].steps.size()));
        for (std::size_t s = 0; s < runs[i].steps.size(); ++s) {
            QCOMPARE(graphs[i]->data()->at(int(s))->key, double(runs[i].steps[s].step));
            QCOMPARE(graphs[i]->data()->at(int(s))->value, runs[i].steps[s].loss);
        }
    }
    QCOMPARE(graphs[0]->name(), QStringLiteral("B=32 × K=1"));
    QCOMPARE(graphs[2]->name(), QStringLiteral("run 3")); // unnamed: its place
    QVERIFY(graphs[0]->pen().color() != graphs[1]->pen().color());
    QCOMPARE(charts.plot()->yAxis->label(), QStringLiteral("loss"));

    // The learning rate against the samples seen: the same runs, other columns.
    charts.fill(runs, {studio::LabAxes::LearningRate, true});
    graphs = curves(charts);
    QCOMPARE(int(graphs.size()), 3);
    QCOMPARE(graphs[1]->data()->at(2)->key, 3.0 * 8); // step 3 of a batch of 8
    QCOMPARE(graphs[1]->data()->at(2)->value, 0.1 / 3);
    QCOMPARE(charts.plot()->yAxis->label(), QStringLiteral("learning rate"));
    QCOMPARE(charts.delta_rect()->axis(QCPAxis::atBottom)->label(), QStringLiteral("samples seen"));
}

void TestLabCharts::deltaGraphsMatchTheRunsCompared() {
    studio::LabCharts charts(QFont{});
    for (std::size_t n = 1; n <= 3; ++n) {
        std::vector<studio::RunResult> runs;
        for (std::size_t i = 0; i < n; ++i) runs.push_back(run(QString::number(i), {0.9, 0.6 + 0.01 * double(i), 0.5}));
        charts.fill(runs, {});
        QCOMPARE(charts.delta_graph_count(), int(n) - 1);
        QCOMPARE(int(deltas(charts).size()), int(n) - 1);
    }
    // |Δ loss| against the first at each step both have; equal losses on the floor.
    charts.fill({run("a", {0.9, 0.6, 0.5}), run("b", {0.9, 0.625})}, {});
    const auto d = deltas(charts);
    QCOMPARE(int(d.size()), 1);
    QCOMPARE(d[0]->data()->size(), 2);
    QCOMPARE(d[0]->data()->at(0)->value, studio::lab_parts::kDeltaFloor);
    QVERIFY(std::abs(d[0]->data()->at(1)->value - 0.025) < 1e-12);
    // The panel's range reaches the decade above the largest difference, at least 1.
    QCOMPARE(charts.delta_rect()->axis(QCPAxis::atLeft)->range().upper, 1.0);
}

void TestLabCharts::memoryBarsOnePerRunAtItsPeak() {
    studio::LabCharts charts(QFont{});
    const std::vector<studio::RunResult> runs = {run("64 × 1", {0.9, 0.6}, 64, 40.0), run("16 × 4", {0.9, 0.6}, 16, 10.0)};
    charts.fill(runs, {});
    QCOMPARE(charts.memory_bars()->plottableCount(), 0); // hidden outside the memory levers: not drawn
    charts.show_memory_bars(true);
    charts.fill(runs, {});
    auto* bars = charts.memory_bars();
    QCOMPARE(bars->plottableCount(), 5); // parameters, gradients, optimizer state, activations, step
    for (int p = 0; p < bars->plottableCount(); ++p)
        QCOMPARE(qobject_cast<QCPBars*>(bars->plottable(p))->data()->size(), int(runs.size()));
    // Each bar as high as the run's measured peak: 16 MiB static + its activations.
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const double peak = double(runs[i].steps.back().peak_memory_bytes) / kMiB;
        QVERIFY2(std::abs(stacked_mib(bars, double(i + 1)) - peak) < 1e-9, qPrintable(QString::number(i)));
    }
    QCOMPARE(qobject_cast<QCPBars*>(bars->plottable(3))->data()->at(0)->value, 40.0); // the activations
    QVERIFY(bars->yAxis->range().upper >= 56.0);
}

void TestLabCharts::clearEmptiesTheCharts() {
    studio::LabCharts charts(QFont{});
    charts.show_memory_bars(true);
    charts.fill({run("a", {0.9, 0.6}, 32, 5.0), run("b", {0.9, 0.7}, 32, 5.0)}, {});
    QVERIFY(charts.plot()->graphCount() > 0);
    charts.clear();
    QCOMPARE(charts.plot()->graphCount(), 0);
    QCOMPARE(charts.delta_graph_count(), 0);
    for (int p = 0; p < charts.memory_bars()->plottableCount(); ++p)
        QCOMPARE(qobject_cast<QCPBars*>(charts.memory_bars()->plottable(p))->data()->size(), 0);
}

void TestLabCharts::presentationScaleEnlargesText() {
    studio::LabCharts charts(QFont{});
    const std::vector<studio::RunResult> runs = {run("a", {0.9, 0.6}), run("b", {0.9, 0.7})};
    charts.fill(runs, {});
    const QFont desk = charts.plot()->yAxis->labelFont();
    const QFont bars_desk = charts.memory_bars()->yAxis->tickLabelFont();
    const double desk_pen = curves(charts)[0]->pen().widthF();
    QVERIFY(charts.plot()->legend->layout() != charts.plot()->plotLayout()); // the legend inside the plot

    charts.set_presentation_scale(2.0);
    charts.fill(runs, {});
    QCOMPARE(charts.presentation_scale(), 2.0);
    const QFont large = charts.plot()->yAxis->labelFont();
    QVERIFY2(QFontInfo(large).pixelSize() > QFontInfo(desk).pixelSize(),
             qPrintable(QStringLiteral("%1 → %2").arg(QFontInfo(desk).pixelSize()).arg(QFontInfo(large).pixelSize())));
    QVERIFY(QFontInfo(charts.memory_bars()->yAxis->tickLabelFont()).pixelSize() > QFontInfo(bars_desk).pixelSize());
    QCOMPARE(curves(charts)[0]->pen().widthF(), 2.0 * desk_pen);
    QVERIFY(charts.plot()->legend->layout() == charts.plot()->plotLayout()); // beside the plot

    charts.set_presentation_scale(1.0); // and back to the desk
    QCOMPARE(QFontInfo(charts.plot()->yAxis->labelFont()).pixelSize(), QFontInfo(desk).pixelSize());
}

// The memory levers at 1280 × 720 in presentation mode: the bars' panel is
// about 500 × 410 pixels (docs/screenshot-memory-levers.png's layout at that
// size) and the text about 1.4 times the desk's (screen_fit's scale for 720
// lines). Every legend entry keeps its whole text inside the plot.
void TestLabCharts::presentationBarsLegendFitsThePlot() {
    studio::LabCharts charts(QFont{});
    charts.show_memory_bars(true);
    charts.set_presentation_scale(1.4);
    charts.fill({run("256 × 1", {0.9, 0.6}, 256, 45.0), run("64 × 4", {0.9, 0.6}, 64, 11.0)}, {});
    auto* bars = charts.memory_bars();
    bars->resize(500, 410);
    bars->replot(QCustomPlot::rpImmediateRefresh);
    int entries = 0;
    for (int i = 0; i < bars->legend->itemCount(); ++i) {
        QCPLayoutElement* item = qobject_cast<QCPPlottableLegendItem*>(bars->legend->item(i));
        if (!item) continue;
        ++entries;
        const QRect rect = item->outerRect();
        const QString what = QStringLiteral("entry %1: %2 wide at x %3, needs %4; the plot is %5 wide")
                                 .arg(i).arg(rect.width()).arg(rect.left())
                                 .arg(item->minimumOuterSizeHint().width()).arg(bars->viewport().width());
        QVERIFY2(rect.right() <= bars->viewport().right(), qPrintable(what));
        QVERIFY2(item->minimumOuterSizeHint().width() <= rect.width(), qPrintable(what));
    }
    QCOMPARE(entries, 5); // parameters, gradients, optimizer state, activations, step
}

QTEST_MAIN(TestLabCharts)
#include "test_lab_charts.moc"
