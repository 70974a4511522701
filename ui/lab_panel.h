#pragma once
// The equivalence lab: one click runs a set of configurations one after
// another (Compare styles, Compare accumulation, the pitfall demos), overlays
// their curves and tabulates max |Δ loss|, accuracy, time, peak memory and
// speed. Under the curves a second panel plots each run's |Δ loss| against the
// first run per update on a log scale, so rounding (1e-7) and a pitfall (1e-2)
// are decades apart at a glance. The plan of each experiment is a plain
// function, tested alone.

#include <QWidget>
#include <functional>
#include <vector>

#include "accum/run_config.h"
#include "experiment_queue.h"
#include "experiments.h"
#include "lab_charts.h"
#include "lab_plan.h"
#include "lab_table.h"
#include "plot_look.h"
#include "retranslate.h"
#include "run_result.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QPushButton;
class QSplitter;
class QTableWidget;

namespace studio {

class LabPanel : public QWidget {
    Q_OBJECT
public:
    explicit LabPanel(QWidget* parent = nullptr);

    void set_base_config_provider(std::function<accum::RunConfig()> provider) { base_ = std::move(provider); }
    // A gradient noise scale measured on the base's model and data (samples; 0
    // when none), for the noise-scale experiment's batches (lab_plan.h).
    void set_noise_scale_provider(std::function<double(const accum::RunConfig&)> provider) {
        noise_scale_ = std::move(provider);
    }
    // The shapes a lesson step names for the experiment it starts now (empty: the lab's own).
    void set_shapes_provider(std::function<ExperimentShapes()> provider) { shapes_ = std::move(provider); }
    // Runs `experiment` now. The window decides whether it may (engine_use.h): the
    // buttons only ask, through experiment_requested().
    void run_experiment(Experiment experiment);
    void cancel();
    bool is_running() const { return queue_->is_running(); }

    const std::vector<RunResult>& results() const { return queue_->results(); }
    // The headline number: the largest pairwise max |Δ loss| of the last experiment.
    double max_loss_difference() const { return max_pairwise_loss_difference(queue_->results()); }
    QTableWidget* table() const { return table_; }
    QLabel* verdict_label() const { return verdict_; }
    QPushButton* button(Experiment experiment) const;
    // The experiments' buttons (the window's choice; Cancel follows the lab's own run).
    void set_experiments_enabled(bool enabled);
    ExperimentQueue* queue() const { return queue_; }
    // The curves, the |Δ loss| panel and the memory levers' bars (shown for that
    // experiment only): lab_charts.h.
    LabCharts* charts() const { return charts_; }
    // The no_sync demo's measured curve, speed-up against link rate on two hosts
    // (link_curve.h; shown for that experiment only; null when the studio has no
    // measurement compiled in).
    QCustomPlot* link_curve() const { return link_curve_; }

    // Presentation mode: plot text, lines and the verdict `scale` times their desk size;
    // above 1 the buttons, the explanation and the axis choice fold away (the lesson
    // or the teacher says what runs).
    void set_presentation_scale(double scale);
    // Every text again in the language installed now: on QEvent::LanguageChange.
    void retranslate();

Q_SIGNALS:
    void experiment_requested(studio::Experiment experiment); // a button was clicked
    void experiment_finished();
    void run_finished(const studio::RunResult& result);
    void busy_changed(bool busy);

protected:
    void changeEvent(QEvent* event) override;

private:
    // The verdict line and the explanation, computed again when the language changes.
    void set_texts(std::function<QString()> verdict, std::function<QString()> explanation);
    void on_run_started(int index, const QString& label);
    void on_progress(int index, const RunResult& partial);
    void on_run_finished(int index, const RunResult& result);
    void on_all_finished();
    void draw_charts(); // the runs shown, on the axes chosen
    void fill_table();       // and, in presentation mode, the table as tall as its rows
    void fit_table_height();
    void set_busy(bool busy);

    std::function<accum::RunConfig()> base_;
    std::function<double(const accum::RunConfig&)> noise_scale_;
    std::function<ExperimentShapes()> shapes_;
    Retexts texts_;
    std::function<QString()> verdict_text_;
    std::function<QString()> explanation_text_;
    ExperimentQueue* queue_ = nullptr;
    Experiment experiment_ = Experiment::CompareStyles;
    std::vector<RunResult> shown_; // finished + the one in progress
    std::vector<std::pair<Experiment, QPushButton*>> buttons_;
    QPushButton* cancel_ = nullptr;
    QWidget* buttons_box_ = nullptr;
    QWidget* axis_box_ = nullptr;
    QLabel* explanation_ = nullptr;
    QLabel* verdict_ = nullptr;
    QComboBox* y_axis_ = nullptr;
    QComboBox* x_axis_ = nullptr;
    LabCharts* charts_ = nullptr;
    QCustomPlot* link_curve_ = nullptr;
    LabTable* table_ = nullptr;
    QSplitter* split_ = nullptr;
    PlotLook curve_look_; // link_curve_
    double scale_ = 1.0;
};

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
