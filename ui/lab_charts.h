// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The lab's charts of the compared runs: the curves (loss, learning rate or loss
// scale) overlaid, under them each later run's |Δ loss| against the first on a
// log scale with the band of float rounding, and beside them the memory levers'
// bars, one stacked bar a run. They are drawn from the runs alone, so they are
// tested on made-up results (tests/ui/test_lab_charts.cpp); the lab panel
// (lab_panel.h) lays the two plots out and fills them as runs report.

#include <QObject>
#include <QPointer>
#include <vector>

#include "plot_look.h"
#include "retranslate.h"
#include "run_result.h"

class QCPAxisRect;
class QCustomPlot;
class QFont;

namespace studio {

// What the curves plot, against what: the lab's axis choice.
struct LabAxes {
    enum Value { Loss, LearningRate, LossScale }; // the lab's combo box's order
    Value value = Loss;
    bool samples = false; // x: samples seen; else optimizer steps
};

class LabCharts : public QObject {
    Q_OBJECT
public:
    // `font`: the lab's text font (the legends'). The plots have no parent until
    // the owner lays them out; if it never does, they go with this object.
    explicit LabCharts(const QFont& font, QObject* parent = nullptr);
    ~LabCharts() override;

    QCustomPlot* plot() const;
    // The |Δ loss| panel: its axes (log-scaled value axis), one graph per run after the first.
    QCPAxisRect* delta_rect() const { return delta_rect_; }
    int delta_graph_count() const;
    QCustomPlot* memory_bars() const;

    // Draws `runs` (the first is the reference) as `axes` says; the bars too
    // while they are shown.
    void fill(const std::vector<RunResult>& runs, LabAxes axes);
    // No runs: empty curves, |Δ loss| panel and bars, on the last axes.
    void clear();
    // The memory bars shown (the memory levers' experiment) or hidden.
    void show_memory_bars(bool shown);
    // Presentation mode: text, lines and marks `scale` times their desk size, the
    // legend outside the plot above 1. The owner fills again after it.
    void set_presentation_scale(double scale);
    double presentation_scale() const { return scale_; }
    // The titles and axis names in the language installed now (the owner fills again).
    void retranslate() { texts_.apply(); }

private:
    void rebuild_plot(const std::vector<RunResult>& runs);
    void rebuild_memory_bars(const std::vector<RunResult>& runs);

    Retexts texts_;
    QPointer<QCustomPlot> plot_;
    QPointer<QCustomPlot> memory_bars_;
    QCPAxisRect* delta_rect_ = nullptr;
    PlotLook look_;
    PlotLook bars_look_;
    LabAxes axes_;
    double scale_ = 1.0;
};

} // namespace studio
