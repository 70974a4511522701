#pragma once
// Live loss curves: every micro-batch's loss (faint), the optimizer-step
// (window) loss (bold, optionally EMA-smoothed), eval losses as markers; with
// a loss scaler, its scale per window on the right axis (log scale) and the
// updates it skipped (overflow) as crosses on the loss curve.
// append() only stores; refresh() (called by the window's timer, every 100 to
// 500 ms: RefreshBudget) rebuilds the graphs when something changed and queues
// one replot.

#include <QWidget>
#include <vector>

#include "plot_look.h"
#include "retranslate.h"
#include "record_batch.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QCPGraph;
class QCPRange;
class QSlider;
class QLabel;
class QTextStream;

namespace studio {

class LossPlot : public QWidget {
    Q_OBJECT
public:
    enum class XAxis { Steps = 0, Samples = 1, Time = 2 };

    explicit LossPlot(QWidget* parent = nullptr);

    void clear();
    // batch_size: the run's micro-batch (samples per micro-step on the x axis).
    void set_micro_batch_size(std::int64_t batch_size) { micro_batch_size_ = batch_size; }
    // The run scales its loss: the scale's axis and line show (RunConfig::uses_loss_scaler()).
    void set_loss_scaling(bool on);
    void append(const RecordBatch& batch);
    void refresh(); // rebuilds and queues a replot if anything changed

    void set_x_axis(XAxis axis);
    void set_smoothing(double weight); // 0 (none) .. 0.99
    void set_log_scale(bool on);

    int micro_point_count() const;
    int step_point_count() const;
    int eval_point_count() const;
    int scale_point_count() const;
    int skipped_point_count() const;
    QCustomPlot* plot() const { return plot_; }

    bool save_image(const QString& path) const; // .pdf or PNG
    // Presentation mode: text, lines and markers `scale` times their desk size (1 = desk);
    // above 1 the row of controls (x axis, smoothing, log scale) folds away.
    void set_presentation_scale(double scale);
    void write_csv(QTextStream& out) const;

protected:
    void changeEvent(QEvent* event) override; // a language switched live: every text again

private:
    void name_axes(); // the x axis's label and the window loss's legend name
    Retexts texts_;
    double x_of_step(std::int64_t step) const;
    void rebuild();
    // The view around the data (auto-fit), the legend naming the curves shown and
    // where no point is.
    void frame();
    // The axes' ranges around `keys` and `values` (the data on the loss axis), with
    // room for the markers at the plot's present size.
    void fit_ranges(QCPRange keys, const QCPRange& values);

    QCustomPlot* plot_ = nullptr;
    QCPGraph* micro_graph_ = nullptr;
    QCPGraph* step_graph_ = nullptr;
    QCPGraph* eval_graph_ = nullptr;
    QCPGraph* scale_graph_ = nullptr;   // the loss scale per window, right axis
    QCPGraph* skipped_graph_ = nullptr; // updates skipped for inf/NaN gradients
    QWidget* controls_ = nullptr;
    QComboBox* x_axis_combo_ = nullptr;
    QSlider* smoothing_ = nullptr;
    QLabel* smoothing_label_ = nullptr;
    QCheckBox* log_scale_ = nullptr;

    std::vector<TimedMicroStep> micro_;
    std::vector<accum::StepRecord> steps_;
    std::vector<accum::EvalRecord> evals_;
    std::int64_t micro_batch_size_ = 1;
    XAxis x_axis_ = XAxis::Steps;
    double smoothing_weight_ = 0.0;
    PlotLook look_;
    bool dirty_ = false;
    bool auto_range_ = true;
    QSize framed_size_; // the plot's size when frame() last placed the legend
    bool loss_scaling_ = false;
};

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
