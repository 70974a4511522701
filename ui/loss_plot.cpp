#include "loss_plot.h"

#include "plot_interaction.h"
#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QTextStream>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

namespace studio {

LossPlot::LossPlot(QWidget* parent) : QWidget(parent) {
    plot_ = new QCustomPlot(this);
    plot_->setObjectName(QStringLiteral("loss_plot"));
    // Small enough for a 1280 × 720 projector under the lesson's bar and the
    // out-of-memory banner, beside the memory plot (test_layout_fit: the window no
    // taller than the screen); the splitter gives it more where there is room.
    plot_->setMinimumHeight(110);
    // Its least width is its own, not its legend's: a legend laid out below or
    // beside the curves in large text takes its room from them (frame() checks
    // every entry fits), never from the code panel beside (test_layout_fit).
    plot_->setMinimumWidth(200);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->plotLayout()->insertRow(0);
    auto* title = new QCPTextElement(plot_, QString(), QFont(font().family(), 12, QFont::Bold));
    plot_->plotLayout()->addElement(0, 0, title);

    micro_graph_ = plot_->addGraph();
    micro_graph_->setPen(QPen(QColor(120, 150, 200, 90), 1));
    micro_graph_->setLineStyle(QCPGraph::lsLine);
    step_graph_ = plot_->addGraph();
    step_graph_->setPen(QPen(QColor(31, 78, 153), 2.5));
    eval_graph_ = plot_->addGraph();
    eval_graph_->setPen(QPen(QColor(214, 96, 20), 2));
    eval_graph_->setLineStyle(QCPGraph::lsNone);
    eval_graph_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(214, 96, 20), 10));
    // The loss scaler: its scale on the right axis, log-scaled (2^16 … 2^127 in one view),
    // and the updates it skipped as crosses on the window loss.
    scale_graph_ = plot_->addGraph(plot_->xAxis, plot_->yAxis2);
    scale_graph_->setPen(QPen(QColor(123, 82, 171), 1.8, Qt::DashLine));
    scale_graph_->setLineStyle(QCPGraph::lsStepLeft);
    skipped_graph_ = plot_->addGraph();
    skipped_graph_->setLineStyle(QCPGraph::lsNone);
    skipped_graph_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(QColor(200, 30, 30), 2.5), Qt::NoBrush, 14));
    use_scale_axis(plot_->yAxis2, tr("loss scale"));
    set_loss_scaling(false);

    place_legend(plot_, Qt::AlignTop | Qt::AlignRight);
    use_fast_drawing(plot_);
    micro_graph_->setAntialiased(false); // thousands of faint points: not worth the antialiasing
    plot_->legend->setVisible(false); // nothing to name yet

    // Zooming or dragging freezes the view; a double click returns to auto-fit.
    freeze_view_on_interaction(plot_, this, &auto_range_, [this] {
        dirty_ = true;
        refresh();
    });

    x_axis_combo_ = new QComboBox;
    x_axis_combo_->setObjectName(QStringLiteral("loss_x_axis"));
    x_axis_combo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    x_axis_combo_->setMinimumContentsLength(10);
    x_axis_combo_->addItems({QString(), QString(), QString()});
    connect(x_axis_combo_, &QComboBox::currentIndexChanged, this,
            [this](int i) { set_x_axis(static_cast<XAxis>(i)); });
    smoothing_ = new QSlider(Qt::Horizontal);
    smoothing_->setObjectName(QStringLiteral("loss_smoothing"));
    smoothing_->setRange(0, 99);
    smoothing_->setMaximumWidth(160);
    smoothing_->setMinimumWidth(50);
    smoothing_label_ = new QLabel(QStringLiteral("0.00"));
    connect(smoothing_, &QSlider::valueChanged, this, [this](int v) { set_smoothing(v / 100.0); });
    log_scale_ = new QCheckBox;
    log_scale_->setObjectName(QStringLiteral("loss_log_scale"));
    connect(log_scale_, &QCheckBox::toggled, this, &LossPlot::set_log_scale);

    controls_ = new QWidget;
    auto* controls = new QHBoxLayout(controls_);
    controls->setContentsMargins(0, 0, 0, 0);
    // Narrow enough for 1024 px screens: the combo's tooltip says it is the x axis.
    controls->addWidget(x_axis_combo_);
    controls->addSpacing(8);
    auto* smoothing_word = new QLabel;
    controls->addWidget(smoothing_word);
    controls->addWidget(smoothing_);
    controls->addWidget(smoothing_label_);
    controls->addSpacing(8);
    controls->addWidget(log_scale_);
    controls->addStretch(1);
    // The navigation hint is the plot's tooltip: the row stays narrow enough
    // for the code panel beside the plots at 1500 px.
    texts_.add([this, title, smoothing_word] {
        title->setText(tr("Training loss"));
        micro_graph_->setName(tr("micro-batch loss"));
        eval_graph_->setName(tr("eval loss"));
        scale_graph_->setName(tr("loss scale S (right axis)"));
        skipped_graph_->setName(tr("update skipped (inf/NaN gradients)"));
        plot_->yAxis2->setLabel(tr("loss scale"));
        plot_->yAxis->setLabel(tr("loss"));
        x_axis_combo_->setToolTip(tr("x axis"));
        x_axis_combo_->setItemText(0, tr("Optimizer steps"));
        x_axis_combo_->setItemText(1, tr("Samples seen"));
        x_axis_combo_->setItemText(2, tr("Wall time (s)"));
        smoothing_->setToolTip(tr("Exponential moving average of the optimizer-step loss"));
        log_scale_->setText(tr("Log scale"));
        smoothing_word->setText(tr("Smoothing:"));
        plot_->setToolTip(tr("wheel: zoom · drag: pan · double-click: fit"));
        name_axes();
    });
    look_.capture(plot_);
    // A plot given another size (the lesson's bar, a readout above it) places its
    // legend again before it is drawn: what fitted the old size may not fit.
    connect(plot_, &QCustomPlot::beforeReplot, this, [this] {
        if (plot_->size() != framed_size_) frame();
    });

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(controls_);
    layout->addWidget(plot_, 1);
}

void LossPlot::set_presentation_scale(double scale) {
    look_.apply(scale);
    controls_->setVisible(scale <= 1.0);
    // In front of a class the legend goes below the plot, in its large text, so that
    // no curve hides behind it and the curves keep the plot's area.
    // Where the legend goes (a free corner, or outside) is frame()'s choice, at
    // every refresh: the markers' room and the legend's size change with the scale.
    dirty_ = true;
    refresh();
}

void LossPlot::set_loss_scaling(bool on) {
    loss_scaling_ = on;
    plot_->yAxis2->setVisible(on);
    scale_graph_->setVisible(on);
    if (on) {
        scale_graph_->addToLegend();
        skipped_graph_->addToLegend();
    } else {
        scale_graph_->removeFromLegend();
        skipped_graph_->removeFromLegend();
    }
    dirty_ = true;
    refresh();
}

void LossPlot::clear() {
    micro_.clear();
    steps_.clear();
    evals_.clear();
    auto_range_ = true;
    dirty_ = true;
    refresh();
}

void LossPlot::append(const RecordBatch& batch) {
    micro_.insert(micro_.end(), batch.micro_steps.begin(), batch.micro_steps.end());
    steps_.insert(steps_.end(), batch.steps.begin(), batch.steps.end());
    evals_.insert(evals_.end(), batch.evals.begin(), batch.evals.end());
    if (!batch.micro_steps.empty() || !batch.steps.empty() || !batch.evals.empty()) dirty_ = true;
}

void LossPlot::name_axes() {
    plot_->xAxis->setLabel(x_axis_ == XAxis::Samples  ? tr("samples seen")
                           : x_axis_ == XAxis::Time ? tr("wall time (s)")
                                                        : tr("optimizer steps"));
    step_graph_->setName(smoothing_weight_ > 0 ? tr("optimizer-step loss (EMA %1)").arg(smoothing_weight_, 0, 'f', 2)
                                               : tr("optimizer-step (window) loss"));
}

void LossPlot::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::LanguageChange) {
        texts_.apply();
        // The legend's place and its entries' lines follow the new names' widths.
        dirty_ = true;
        refresh();
    }
}

void LossPlot::set_x_axis(XAxis axis) {
    x_axis_ = axis;
    if (x_axis_combo_->currentIndex() != static_cast<int>(axis)) x_axis_combo_->setCurrentIndex(static_cast<int>(axis));
    name_axes();
    auto_range_ = true;
    dirty_ = true;
    refresh();
}

void LossPlot::set_smoothing(double weight) {
    smoothing_weight_ = std::clamp(weight, 0.0, 0.99);
    smoothing_label_->setText(QString::number(smoothing_weight_, 'f', 2));
    name_axes();
    dirty_ = true;
    refresh();
}

void LossPlot::set_log_scale(bool on) {
    if (log_scale_->isChecked() != on) log_scale_->setChecked(on);
    if (on) {
        plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
        plot_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    } else {
        plot_->yAxis->setScaleType(QCPAxis::stLinear);
        plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    }
    auto_range_ = true;
    dirty_ = true;
    refresh();
}

double LossPlot::x_of_step(std::int64_t step) const {
    if (x_axis_ == XAxis::Steps) return static_cast<double>(step);
    // The step record with this step number (records arrive in step order).
    auto it = std::lower_bound(steps_.begin(), steps_.end(), step,
                               [](const accum::StepRecord& r, std::int64_t s) { return r.step < s; });
    if (it == steps_.end()) {
        if (steps_.empty()) return 0.0;
        it = steps_.end() - 1;
    }
    return x_axis_ == XAxis::Samples ? static_cast<double>(it->samples_seen) : it->elapsed_s;
}

void LossPlot::rebuild() {
    QVector<double> keys, values;
    keys.reserve(static_cast<int>(micro_.size()));
    values.reserve(static_cast<int>(micro_.size()));
    for (const auto& m : micro_) {
        const auto& r = m.record;
        double x = 0.0;
        switch (x_axis_) {
        case XAxis::Steps: x = r.step + (r.window_size > 0 ? double(r.window_index) / r.window_size : 1.0); break;
        case XAxis::Samples: x = double(r.micro_step * micro_batch_size_); break;
        case XAxis::Time: x = m.elapsed_s; break;
        }
        keys.push_back(x);
        values.push_back(r.loss);
    }
    micro_graph_->setData(keys, values, x_axis_ != XAxis::Time);

    keys.clear();
    values.clear();
    double ema = 0.0;
    bool first = true;
    for (const auto& s : steps_) {
        ema = first ? s.loss : smoothing_weight_ * ema + (1.0 - smoothing_weight_) * s.loss;
        first = false;
        keys.push_back(x_of_step(s.step));
        values.push_back(ema);
    }
    step_graph_->setData(keys, values, true);

    // The scale and the skipped updates (the window loss where the update was skipped).
    QVector<double> scale_keys, scales, skipped_keys, skipped_values;
    for (std::size_t i = 0; i < steps_.size(); ++i) {
        const auto& s = steps_[i];
        if (loss_scaling_ && std::isfinite(s.loss_scale) && s.loss_scale > 0) {
            scale_keys.push_back(x_of_step(s.step));
            scales.push_back(s.loss_scale);
        }
        if (s.skipped) {
            skipped_keys.push_back(x_of_step(s.step));
            skipped_values.push_back(values[static_cast<int>(i)]);
        }
    }
    scale_graph_->setData(scale_keys, scales, true);
    skipped_graph_->setData(skipped_keys, skipped_values, true);

    keys.clear();
    values.clear();
    for (const auto& e : evals_) {
        keys.push_back(x_of_step(e.step));
        values.push_back(e.eval_loss);
    }
    eval_graph_->setData(keys, values);
}

void LossPlot::refresh() {
    if (!dirty_) return;
    dirty_ = false;
    rebuild();
    frame();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LossPlot::frame() {
    framed_size_ = plot_->size();
    // The legend lists the curves that have points; an empty plot has none.
    bool any = false;
    for (auto* g : {micro_graph_, step_graph_, eval_graph_, scale_graph_, skipped_graph_}) {
        const bool scaler_graph = g == scale_graph_ || g == skipped_graph_;
        const bool listed = g->dataCount() > 0 && (!scaler_graph || loss_scaling_);
        if (listed) g->addToLegend();
        else g->removeFromLegend();
        any = any || g->dataCount() > 0;
    }
    plot_->legend->setVisible(any);
    if (!auto_range_ || !any) return;
    QCPRange keys, values;
    if (!graphs_extent(plot_, plot_->yAxis, &keys, &values)) return;
    PlotLook::legend_below(plot_, false);
    legend_names_on_lines(plot_, false);
    fit_ranges(keys, values);
    // The legend in a corner the curves leave free; else in room made above them
    // when a little is enough; else outside: beside a wide plot, below a narrow one
    // (the lesson's mechanism gives the code the width).
    const auto corners = {Qt::Alignment(Qt::AlignTop | Qt::AlignRight), Qt::Alignment(Qt::AlignBottom | Qt::AlignLeft),
                          Qt::Alignment(Qt::AlignTop | Qt::AlignLeft), Qt::Alignment(Qt::AlignBottom | Qt::AlignRight)};
    if (legend_to_free_corner(plot_, corners)) return;
    const int legend = plot_->legend->minimumOuterSizeHint().height() + 4;
    const int height = plot_->axisRect()->rect().height();
    if (plot_->yAxis->scaleType() == QCPAxis::stLinear && legend * 10 <= height * 3) {
        const auto y = plot_->yAxis->range();
        plot_->yAxis->setRangeUpper(y.upper + legend * y.size() / (height - legend));
        if (legend_to_free_corner(plot_, corners)) return;
    }
    // Below in one row, below in two columns, or beside: whichever leaves the
    // curves the largest area with every entry readable, and beside only when it
    // takes at most a third of the width (a long entry in large text would take half).
    // Beside in large text, a long entry takes two lines (half the width). A curve
    // needs height to be read: an area under kLeastAxesHeight counts for half.
    constexpr int kLeastAxesHeight = 80; // test_layout_fit's least, a flat strip below
    auto area_with = [this](int columns) -> std::int64_t {
        PlotLook::legend_below(plot_, false);
        legend_names_on_lines(plot_, columns == 0 && look_.scale() > 1.0);
        PlotLook::legend_below(plot_, true, columns);
        lay_out(plot_);
        const QRect r = plot_->axisRect()->rect();
        const bool wide = columns == 0 && plot_->legend->outerRect().width() * 3 > plot_->viewport().width();
        if (wide || !legend_entry_problems(plot_).isEmpty()) return -1;
        return std::int64_t(r.width()) * r.height() / (r.height() < kLeastAxesHeight ? 2 : 1);
    };
    int best = 2;
    std::int64_t best_area = -1;
    for (const int columns : {plot_->legend->itemCount(), 2, 0})
        if (const auto area = area_with(columns); area > best_area) {
            best = columns;
            best_area = area;
        }
    area_with(best);
    fit_ranges(keys, values); // the plot is smaller now: the markers' room again
}

void LossPlot::fit_ranges(QCPRange keys, const QCPRange& values) {
    lay_out(plot_);
    const QRect area = plot_->axisRect()->rect();
    // Every marker inside the axes: room for the largest point at each end.
    double room = 0.0;
    for (auto* g : {micro_graph_, step_graph_, eval_graph_, skipped_graph_})
        if (g->dataCount() > 0) room = std::max(room, point_radius(g));
    if (keys.size() <= 0) keys = QCPRange(keys.lower - 0.5, keys.upper + 0.5);
    plot_->xAxis->setRange(with_room(keys, room, area.width(), false));
    if (plot_->yAxis->scaleType() == QCPAxis::stLinear) {
        plot_->yAxis->setRange(with_room(framed_range(values.lower, values.upper), room, area.height()));
    } else if (values.lower > 0) {
        // The same margin in decades, and room for the markers.
        const double low = std::log10(values.lower), high = std::log10(values.upper);
        const double margin = 0.08 * std::max(high - low, 0.1);
        const auto decades = with_room(QCPRange(low - margin, high + margin), room, area.height(), false);
        plot_->yAxis->setRange(std::pow(10.0, decades.lower), std::pow(10.0, decades.upper));
    }
    if (loss_scaling_ && scale_graph_->dataCount() > 0) {
        // Whole decades around the scale, so a halving reads as a step on the log axis.
        bool found = false;
        const auto r = scale_graph_->getValueRange(found);
        if (found) plot_->yAxis2->setRange(decades_around(r.lower, r.upper));
    }
}

int LossPlot::micro_point_count() const { return micro_graph_->dataCount(); }
int LossPlot::step_point_count() const { return step_graph_->dataCount(); }
int LossPlot::eval_point_count() const { return eval_graph_->dataCount(); }
int LossPlot::scale_point_count() const { return scale_graph_->dataCount(); }
int LossPlot::skipped_point_count() const { return skipped_graph_->dataCount(); }

bool LossPlot::save_image(const QString& path) const {
    if (QFileInfo(path).suffix().compare(QLatin1String("pdf"), Qt::CaseInsensitive) == 0)
        return plot_->savePdf(path, 1200, 700);
    return plot_->savePng(path, 1200, 700);
}

void LossPlot::write_csv(QTextStream& out) const {
    out << "kind,step,micro_step,samples_seen,elapsed_s,epoch,loss,accuracy,f1\n";
    for (const auto& m : micro_)
        out << "micro," << m.record.step << ',' << m.record.micro_step << ','
            << m.record.micro_step * micro_batch_size_ << ',' << m.elapsed_s << ',' << m.record.epoch << ','
            << m.record.loss << ",,\n";
    for (const auto& s : steps_)
        out << "step," << s.step << ',' << s.micro_step << ',' << s.samples_seen << ',' << s.elapsed_s << ','
            << s.epoch << ',' << s.loss << ",,\n";
    for (const auto& e : evals_)
        out << "eval," << e.step << ",,,," << e.epoch << ',' << e.eval_loss << ',' << e.eval_accuracy << ','
            << e.eval_f1 << '\n';
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
