// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The live run's gradient noise scale (noise_scale.h): a readout line for the
// window ("Noise scale ≈ 120 samples; your effective batch 256 = 2.1 × that",
// and one sentence on what it means) and a plot (the window's Noise scale tab) of the running estimate
// over the optimizer steps, the effective batch beside it as a dashed line, on a
// log axis. Like the other plots, append() only stores and refresh() (the
// window's timer) redraws.

#include <QWidget>
#include <vector>

#include "plot_look.h"
#include "record_batch.h"
#include "retranslate.h"

class QCustomPlot;
class QCPGraph;
class QLabel;

namespace studio {

class NoisePlot : public QWidget {
    Q_OBJECT
public:
    explicit NoisePlot(QWidget* parent = nullptr);

    // A new run: its effective batch (in samples, or tokens with token
    // normalisation: then from its records).
    void start_run(const accum::RunConfig& config);
    void clear();
    void append(const RecordBatch& batch);
    void refresh();

    // The readout, for the window to place where it stays in view (hidden until
    // the run has measured a noise scale).
    QLabel* readout() const { return readout_; }
    double noise_scale() const { return noise_scale_; } // the last measured, NaN before
    double effective_batch() const;
    int point_count() const;
    QCustomPlot* plot() const { return plot_; }
    void set_presentation_scale(double scale);

Q_SIGNALS:
    void first_measurement(); // the run's first step record with a noise scale arrived

protected:
    void changeEvent(QEvent* event) override;

private:
    void update_readout();

    Retexts texts_;
    QCustomPlot* plot_ = nullptr;
    QCPGraph* noise_graph_ = nullptr;
    QCPGraph* batch_graph_ = nullptr;
    QLabel* readout_ = nullptr;
    QLabel* empty_note_ = nullptr;
    PlotLook look_;
    accum::RunConfig config_;
    std::vector<accum::StepRecord> steps_; // those with a measured noise scale
    accum::StepRecord last_step_;
    double noise_scale_;
    bool dirty_ = false;
};

} // namespace studio
