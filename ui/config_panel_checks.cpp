// SPDX-License-Identifier: GPL-3.0-or-later
// ConfigPanel, what the form says of what is in it: each field's problem beside
// it, the effective batch, the one-line summary and the memory estimate (on its
// own thread, memory_estimator.h).
#include "config_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLayout>
#include <QLineEdit>
#include <QResizeEvent>
#include <QSpinBox>
#include <algorithm>
#include <cmath>

#include "accum/session.h"
#include "memory_estimator.h"
#include "noise_scale.h"

namespace studio {

QString ConfigPanel::problems_text() const {
    QStringList lines;
    for (const auto& p : problems_list_) lines << p.text;
    return lines.join(QLatin1Char('\n'));
}

QLabel* ConfigPanel::error_label(QWidget* field) const {
    const auto it = rows_.constFind(field);
    return it == rows_.constEnd() ? nullptr : it->error;
}

QList<ConfigPanel::Problem> ConfigPanel::field_problems(const accum::RunConfig& c) const {
    QList<Problem> found;
    const auto add = [&found, this](QWidget* field, const QString& text) {
        found.push_back({field, rows_.value(field).label + QStringLiteral(": ") + text});
    };
    // The limits are accum::validate()'s (engine/src/run_config.cpp); the dataset's size is the engine's.
    if (c.batch_size < 1)
        add(batch_size_, tr("must be at least 1 sample per micro-batch (it is %1)").arg(c.batch_size));
    else if (c.batch_size > 1000000)
        add(batch_size_, tr("%1 is too large; at most 1000000").arg(c.batch_size));
    else if (const auto n = accum::builtin_train_size(c.dataset); n > 0 && c.batch_size > n)
        add(batch_size_, tr("%1 is more than the %2 training samples of %3; at most %2")
                             .arg(c.batch_size)
                             .arg(n)
                             .arg(dataset_->currentText()));
    if (c.accumulation_steps < 1)
        add(accumulation_steps_, tr("must be at least 1 (1 = no accumulation); it is %1").arg(c.accumulation_steps));
    else if (c.accumulation_steps > 100000)
        add(accumulation_steps_, tr("%1 is too large; at most 100000").arg(c.accumulation_steps));
    if (c.nproc_per_node < 1 || c.nproc_per_node > 256)
        add(processes_, tr("must be from 1 to 256 processes; it is %1").arg(c.nproc_per_node));
    if (c.epochs > 100000) add(epochs_, tr("%1 is too large; at most 100000").arg(c.epochs));
    if (c.epochs == 0 && c.max_steps == 0)
        add(epochs_, tr("set %1 or %2: with both unset the run has no length")
                         .arg(rows_.value(epochs_).label, rows_.value(max_steps_).label));
    if (!std::isfinite(c.learning_rate) || c.learning_rate <= 0)
        add(learning_rate_, tr("must be above 0"));
    else if (c.learning_rate > 100)
        add(learning_rate_, tr("%1 is too large; at most 100").arg(c.learning_rate));
    if (!accum::parse_byte_size(c.memory_budget))
        add(memory_budget_, tr("cannot read “%1” as a size (examples: 40MiB, 2GiB, 0 for none)")
                                .arg(QString::fromStdString(c.memory_budget)));
    // What the engine finds once --device auto is resolved: here there may be no CUDA.
    if (c.mixed_precision == accum::MixedPrecision::Fp16 && (c.device == "cpu" || !have_cuda_))
        add(precision_, tr("fp16 needs a CUDA device; use bf16 on the CPU"));
    if (c.model == accum::ModelKind::File && c.model_file.empty())
        add(model_, tr("%1 needs a model file (TorchScript .pt or a compiled .pt2 step): choose it under %2")
                        .arg(model_->currentText(), rows_.value(model_file_).label));
    return found;
}

QString ConfigPanel::effective_batch_text(const accum::RunConfig& c) const {
    QString text = c.world_size() > 1 ? tr("%1 × %2 × %3 processes = %4 samples / update")
                                            .arg(c.batch_size)
                                            .arg(c.accumulation_steps)
                                            .arg(c.world_size())
                                            .arg(c.effective_batch())
                                      : tr("%1 × %2 = %3 samples / update")
                                            .arg(c.batch_size)
                                            .arg(c.accumulation_steps)
                                            .arg(c.effective_batch());
    // An epoch shorter than one window: the window is flushed at the epoch's end
    // (ARCHITECTURE.md, I5), so an update takes what one epoch has, not B × K.
    // The note in the form's usual font, under the figure in large bold.
    text = text.toHtmlEscaped();
    const auto n = accum::builtin_train_size(c.dataset);
    if (n > 0 && c.batch_size > 0 && c.batch_size <= n && c.accumulation_steps > 0 && c.world_size() > 0) {
        const auto per_process = (n + c.world_size() - 1) / c.world_size();
        const auto micro_batches = (per_process + c.batch_size - 1) / c.batch_size;
        if (micro_batches < c.accumulation_steps)
            text += QStringLiteral("<br><span style=\"font-size: %1pt; font-weight: normal; color: #7f1d1d;\">%2</span>")
                        .arg(font().pointSizeF() > 0 ? font().pointSizeF() : 9.0)
                        .arg(tr("But an epoch has only %1 micro-batches of %2: the epoch ends first, so each update "
                                "takes the whole epoch, %3 samples.")
                                 .arg(micro_batches)
                                 .arg(c.batch_size)
                                 .arg(n)
                                 .toHtmlEscaped());
    }
    return text;
}

void ConfigPanel::set_measured_noise_scale(double noise_scale, std::function<QString()> source,
                                           const accum::RunConfig& measured_on) {
    noise_scale_ = noise_scale_known(noise_scale) ? noise_scale : 0.0;
    noise_source_ = std::move(source);
    noise_config_ = measured_on;
    show_noise_advice(config());
}

double ConfigPanel::measured_noise_scale_for(const accum::RunConfig& c) const {
    const bool same = c.model == noise_config_.model && c.dataset == noise_config_.dataset &&
                      c.model_file == noise_config_.model_file && c.data_path == noise_config_.data_path;
    return same ? noise_scale_ : 0.0;
}

void ConfigPanel::show_noise_advice(const accum::RunConfig& c) {
    const bool shown = noise_scale_ > 0 && c.effective_batch() > 0;
    noise_advice_->setVisible(shown);
    noise_advice_label_title_->setVisible(shown);
    if (!shown) return;
    auto text = noise_advice_text(noise_advice(noise_scale_, double(c.effective_batch()), c.accumulation_steps),
                                  noise_source_ ? noise_source_() : QString(), false);
    if (measured_noise_scale_for(c) <= 0)
        text += QLatin1Char(' ') + tr("It was measured on another model or data set: measure this one for a sound "
                                      "figure.");
    noise_advice_->setText(text);
}

QString ConfigPanel::summary_text() const {
    const auto c = config();
    QStringList parts;
    const auto model_name = c.model == accum::ModelKind::File
                                ? QFileInfo(QString::fromStdString(c.model_file)).fileName()
                                : model_->currentText();
    parts << tr("%1, %2").arg(model_name, dataset_->currentText());
    if (c.world_size() > 1)
        parts << tr("micro-batch %1 × K %2 × %3 processes = %4")
                     .arg(c.batch_size)
                     .arg(c.accumulation_steps)
                     .arg(c.world_size())
                     .arg(c.effective_batch());
    else
        parts << tr("micro-batch %1 × K %2 = %3").arg(c.batch_size).arg(c.accumulation_steps).arg(c.effective_batch());
    if (c.gradient_checkpointing) parts << tr("checkpointing");
    parts << tr("%1 lr %2").arg(optimizer_->currentText()).arg(c.learning_rate);
    if (c.scheduler != accum::SchedulerKind::Constant) parts << tr("%1 schedule").arg(scheduler_->currentText());
    if (c.loss_normalization == accum::LossNormalization::Tokens) parts << tr("loss per token");
    if (c.mixed_precision != accum::MixedPrecision::No) parts << QString::fromStdString(accum::to_string(c.mixed_precision));
    if (c.uses_loss_scaler()) parts << tr("loss scaling");
    const auto budget = accum::parse_byte_size(c.memory_budget);
    if (budget && *budget > 0)
        parts << tr("budget %1").arg(QString::fromStdString(accum::format_byte_size(*budget)));
    parts << mode_->currentText(); // last: where the line is cut on a narrow screen
    return parts.join(QStringLiteral(" · "));
}

void ConfigPanel::mark(QWidget* widget, const QString& problem) {
    if (problem.isEmpty()) {
        widget->setStyleSheet(QString());
        widget->setProperty("accum_problem", QVariant());
    } else {
        widget->setStyleSheet(QStringLiteral("border: 2px solid #b3261e;"));
        widget->setProperty("accum_problem", problem);
    }
}

void ConfigPanel::revalidate() {
    if (updating_) return;
    const bool problems_differ = show_problems();
    const bool valid = problems_list_.empty();
    const bool changed = valid != valid_;
    valid_ = valid;
    refresh_estimate();
    Q_EMIT config_changed();
    if (problems_differ) Q_EMIT problems_changed();
    if (changed) Q_EMIT validity_changed(valid_);
}

bool ConfigPanel::show_problems() {
    const auto c = config();
    momentum_->setEnabled(c.optimizer == accum::OptimizerKind::Sgd);
    loss_scaling_->setEnabled(c.mixed_precision != accum::MixedPrecision::Fp16); // fp16 always scales
    const bool from_file = c.model == accum::ModelKind::File;
    model_file_row_->setVisible(from_file);
    if (model_file_label_) model_file_label_->setVisible(from_file);
    effective_batch_->setText(effective_batch_text(c));
    show_noise_advice(c);
    // The form's own checks first, in its words; then what accum::validate() finds
    // besides, under the field's label. The engine's limits are the same, so a
    // problem named twice is shown once.
    auto problems = field_problems(c);
    for (const auto& p : accum::validate(c)) {
        auto* field = widget_for_option_.value(QString::fromStdString(p.option));
        if (field && std::any_of(problems.begin(), problems.end(), [field](const Problem& q) { return q.field == field; }))
            continue;
        const QString name = field ? rows_.value(field).label : QString();
        const auto message = QString::fromStdString(field ? p.message : p.to_string());
        problems.push_back({field, name.isEmpty() ? message : name + QStringLiteral(": ") + message});
    }
    QMap<QWidget*, QStringList> marked;
    for (const auto& p : problems)
        if (p.field) marked[p.field] << p.text;
    for (auto* w : widget_for_option_) mark(w, marked.value(w).join(QLatin1Char('\n')));
    for (auto it = rows_.begin(); it != rows_.end(); ++it) {
        // Under the field, without its label (the row above says it).
        QStringList lines;
        for (const auto& text : marked.value(it.key())) lines << text.mid(it->label.size() + 2);
        it->error->setText(lines.join(QLatin1Char('\n')));
        it->form->setRowVisible(it->error, !lines.isEmpty());
    }
    QStringList lines;
    for (const auto& p : problems) lines << p.text;
    const bool problems_differ = problems_text() != lines.join(QLatin1Char('\n'));
    problems_list_ = problems;
    return problems_differ;
}

void ConfigPanel::refresh_estimate_a_run_held() {
    if (estimate_value_.busy) refresh_estimate();
}

void ConfigPanel::refresh_estimate() {
    if (!valid_) {
        estimator_->cancel();
        estimate_value_ = {};
        estimate_->setText(tr("Memory: no estimate until the settings are valid"));
        estimate_->setStyleSheet(QStringLiteral("color: palette(mid);"));
        return;
    }
    if (!isVisible()) return; // asked again when shown
    estimator_->request(config());
}

void ConfigPanel::show_estimate(const accum::RunMemoryEstimate& e) {
    estimate_value_ = e;
    const auto bytes = [](double b) { return QString::fromStdString(accum::format_byte_size(std::llround(b))); };
    if (!e.ok) {
        estimate_->setText(e.busy ? tr("Memory: estimated when the run ends")
                                  : tr("Memory: no estimate (%1)").arg(QString::fromStdString(e.error)));
        estimate_->setStyleSheet(QStringLiteral("color: palette(mid);"));
        estimate_->setToolTip(QString());
        return;
    }
    QString text = tr("≈ %1 at peak: activations %2 (%3 per sample) + parameters, gradients and optimizer state %4")
                       .arg(bytes(e.predicted_peak_bytes), bytes(e.activation_bytes),
                            bytes(e.activation_per_sample_bytes), bytes(static_cast<double>(e.static_bytes())));
    if (e.frozen_parameters_bytes > 0)
        text += QLatin1Char(' ') + tr("(of it frozen weights %1: no gradients, no optimizer state)")
                                       .arg(bytes(static_cast<double>(e.frozen_parameters_bytes)));
    const auto budget = accum::parse_byte_size(config().memory_budget).value_or(0);
    const bool over = budget > 0 && e.predicted_peak_bytes > static_cast<double>(budget);
    if (over) text += QLatin1Char(' ') + tr("— over the %1 budget").arg(bytes(static_cast<double>(budget)));
    estimate_->setText(text);
    // Red, not bold: a bold text is wider, and would take another line at each change.
    estimate_->setStyleSheet(over ? QStringLiteral("color: #b3261e;") : QString());
    estimate_->setToolTip(QString::fromStdString(e.describe()));
    keep_estimate_height();
}

void ConfigPanel::keep_estimate_height() {
    // The estimate's room only grows: a shorter text at each keystroke moved every
    // field below it, and the whole form when it is scrolled to its end.
    const int width = estimate_->width();
    if (width <= 0) return;
    const int needed = estimate_->heightForWidth(width);
    if (needed > estimate_->minimumHeight()) estimate_->setMinimumHeight(needed);
}

void ConfigPanel::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (event->oldSize().width() == event->size().width()) return;
    // A new width: the texts wrap anew, so the rooms are measured again.
    estimate_->setMinimumHeight(0);
    setMinimumHeight(0);
    keep_estimate_height();
}

bool ConfigPanel::event(QEvent* event) {
    const bool handled = QWidget::event(event);
    // While the user types, the form only grows: an error row that goes, or a
    // shorter text, would otherwise shrink it, and a form scrolled to its end would
    // move under the cursor. set_config() and a new width let it shrink again.
    if (event->type() == QEvent::LayoutRequest && layout() && !updating_) {
        const int needed = layout()->hasHeightForWidth() ? layout()->totalHeightForWidth(width())
                                                         : layout()->totalSizeHint().height();
        if (needed > minimumHeight()) setMinimumHeight(needed);
    }
    return handled;
}

} // namespace studio
