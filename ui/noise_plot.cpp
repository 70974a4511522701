// SPDX-License-Identifier: GPL-3.0-or-later
#include "noise_plot.h"

#include <QEvent>
#include <QLabel>
#include <QVBoxLayout>
#include <cmath>
#include <qcustomplot.h>

#include "noise_scale.h"
#include "plot_interaction.h"

namespace studio {

NoisePlot::NoisePlot(QWidget* parent) : QWidget(parent), noise_scale_(std::nan("")) {
    plot_ = new QCustomPlot(this);
    plot_->setObjectName(QStringLiteral("noise_plot"));
    plot_->setMinimumSize(60, 40);
    noise_graph_ = plot_->addGraph();
    noise_graph_->setPen(QPen(QColor(0x2e, 0x7d, 0x32), 2.2));
    batch_graph_ = plot_->addGraph();
    batch_graph_->setPen(QPen(QColor(31, 78, 153), 1.8, Qt::DashLine));
    plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
    plot_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    place_legend(plot_, Qt::AlignBottom | Qt::AlignRight);
    use_fast_drawing(plot_);
    plot_->legend->setVisible(false);

    readout_ = new QLabel;
    readout_->setObjectName(QStringLiteral("noise_readout"));
    readout_->setWordWrap(true);
    readout_->setTextFormat(Qt::RichText);
    readout_->setContentsMargins(4, 2, 4, 2);
    readout_->hide();
    empty_note_ = new QLabel;
    empty_note_->setObjectName(QStringLiteral("noise_empty_note"));
    empty_note_->setWordWrap(true);
    texts_.add([this] {
        noise_graph_->setName(tr("noise scale (running)"));
        plot_->xAxis->setLabel(tr("optimizer steps"));
        plot_->yAxis->setLabel(tr("samples"));
        empty_note_->setText(tr("The noise scale is measured from the accumulation windows: it needs K ≥ 2 or "
                                "several processes."));
        update_readout();
    });
    look_.capture(plot_);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(empty_note_, 1, Qt::AlignTop);
    layout->addWidget(plot_, 1);
}

void NoisePlot::start_run(const accum::RunConfig& config) {
    config_ = config;
    clear();
}

void NoisePlot::clear() {
    steps_.clear();
    last_step_ = accum::StepRecord{};
    noise_scale_ = std::nan("");
    dirty_ = true;
    refresh();
}

void NoisePlot::append(const RecordBatch& batch) {
    for (const auto& s : batch.steps) {
        last_step_ = s;
        if (!noise_scale_known(s.noise_scale)) continue;
        if (steps_.empty()) Q_EMIT first_measurement();
        steps_.push_back(s);
        noise_scale_ = s.noise_scale;
        dirty_ = true;
    }
}

double NoisePlot::effective_batch() const {
    return effective_batch_for_noise(config_, steps_.empty() ? nullptr : &steps_.back());
}

int NoisePlot::point_count() const { return noise_graph_->dataCount(); }

void NoisePlot::refresh() {
    if (!dirty_) return;
    dirty_ = false;
    QVector<double> keys, values;
    for (const auto& s : steps_) {
        keys.push_back(double(s.step));
        values.push_back(s.noise_scale);
    }
    noise_graph_->setData(keys, values, true);
    const double batch = effective_batch();
    QVector<double> batch_keys, batch_values;
    if (!keys.isEmpty() && batch > 0) {
        batch_keys = {keys.front(), keys.back()};
        batch_values = {batch, batch};
    }
    batch_graph_->setData(batch_keys, batch_values, true);
    const bool any = !keys.isEmpty();
    for (auto* g : {noise_graph_, batch_graph_}) {
        if (g->dataCount() > 0) g->addToLegend();
        else g->removeFromLegend();
    }
    plot_->legend->setVisible(any);
    // Before a measurement the note takes the plot's place: the pane is short.
    empty_note_->setVisible(!any);
    plot_->setVisible(any);
    if (any) {
        double low = batch > 0 ? batch : values.front(), high = low;
        for (double v : values) {
            low = std::min(low, v);
            high = std::max(high, v);
        }
        // Whole decades around both lines: the ratio reads as a distance.
        plot_->yAxis->setRange(decades_around(low, high));
        plot_->xAxis->setRange(keys.front() - 0.5, keys.back() + 0.5);
    }
    update_readout();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void NoisePlot::update_readout() {
    const bool tokens = config_.loss_normalization == accum::LossNormalization::Tokens;
    batch_graph_->setName(tokens ? tr("your effective batch (tokens)") : tr("your effective batch"));
    plot_->yAxis->setLabel(tokens ? tr("tokens") : tr("samples"));
    if (!noise_scale_known(noise_scale_)) {
        readout_->hide();
        readout_->clear();
        return;
    }
    const double batch = effective_batch();
    const auto advice = noise_advice(noise_scale_, batch, config_.accumulation_steps);
    readout_->setText(QStringLiteral("<b>%1</b> %2")
                          .arg(noise_readout_text(noise_scale_, batch, tokens).toHtmlEscaped(),
                               noise_meaning_text(advice.regime).toHtmlEscaped()));
    readout_->setToolTip(noise_advice_text(advice, tr("this run"), tokens));
    readout_->show();
}

void NoisePlot::set_presentation_scale(double scale) {
    look_.apply(scale);
    dirty_ = true;
    refresh();
}

void NoisePlot::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::LanguageChange) {
        texts_.apply();
        plot_->replot();
    }
}

} // namespace studio
