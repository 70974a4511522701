// SPDX-License-Identifier: GPL-3.0-or-later
#include "live_view.h"

#include <QFontMetrics>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QRegularExpression>
#include <QScrollBar>
#include <QTableWidget>
#include <algorithm>
#include <cmath>

#include "code_panel.h"
#include "engine_text.h"
#include "engine_use.h"
#include "loss_plot.h"
#include "memory_plot.h"
#include "noise_plot.h"

namespace studio {

QString LiveView::threads_text(int count) {
    return count == 1 ? tr("1 thread") : tr("%1 threads").arg(count);
}

QString LiveView::format_duration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("–");
    const auto s = static_cast<qint64>(std::llround(seconds));
    if (s >= 3600) return QStringLiteral("%1:%2:%3").arg(s / 3600).arg(s / 60 % 60, 2, 10, QLatin1Char('0')).arg(s % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

LiveView::LiveView(const LiveWidgets& widgets, QObject* parent) : QObject(parent), w_(widgets) {
    // At most 10 replots a second: live enough to watch, and it leaves the CPU to
    // training (faster replots cost the engine a good part of its speed on 2
    // cores: bench/RESULTS.md, "Figures quoted in the code").
    // During a run the interval stretches if drawing costs more than its budget
    // (refresh_budget.h).
    timer_.setInterval(RefreshBudget::kFastestMs);
    connect(&timer_, &QTimer::timeout, this, &LiveView::on_tick);
    // The log follows new lines while the user is at its end; scrolling up to read
    // stops it, scrolling back to the end resumes it. Decided here, not by
    // QPlainTextEdit's own test at each append, which (with the block limit, or
    // while the log is out of view) lost the end and then never followed again.
    auto* log_bar = w_.log->verticalScrollBar();
    connect(log_bar, &QScrollBar::actionTriggered, this,
            [this, log_bar] { log_follow_ = log_bar->sliderPosition() >= log_bar->maximum(); });
    connect(log_bar, &QScrollBar::valueChanged, this, [this, log_bar](int value) {
        if (value >= log_bar->maximum()) log_follow_ = true;
    });
}

void LiveView::start(const accum::RunConfig& config, const QString& label) {
    if (w_.code) {
        w_.code->set_configuration(config);
        w_.code->set_model_file(config.model == accum::ModelKind::File ? QString::fromStdString(config.model_file)
                                                                      : QString());
        w_.code->start_run(static_cast<int>(config.accumulation_steps),
                           static_cast<int>(std::lround(config.micro_step_delay_s * 1000.0)),
                           static_cast<int>(config.world_size()));
    }
    w_.loss->set_micro_batch_size(config.batch_size);
    w_.loss->set_loss_scaling(config.uses_loss_scaler());
    w_.loss->clear();
    w_.memory->clear();
    w_.noise->start_run(config);
    w_.memory->set_device(QString::fromStdString(config.device));
    w_.evals->setRowCount(0);
    w_.log->clear();
    pending_logs_.clear(); // a run refused as busy may have left some
    threads_count_ = 0; // the engine says this run's count again
    status_clock_.invalidate();
    w_.progress->setValue(0);
    w_.step->clear();
    w_.epoch->clear();
    w_.speed->clear();
    w_.threads->clear();
    w_.threads->setToolTip({});
    w_.eta->clear();
    run_ = RunResult{};
    run_.config = config;
    run_.source = QStringLiteral("live");
    run_.label = label;
    timer_.setInterval(RefreshBudget::kFastestMs);
    budget_.start();
    timer_.start();
}

void LiveView::append(const RecordBatch& batch) {
    if (w_.code) w_.code->append(batch);
    if (!batch.run_directory.isEmpty()) run_.folder = batch.run_directory;
    run_.steps.insert(run_.steps.end(), batch.steps.begin(), batch.steps.end());
    for (const auto& m : batch.memory) run_.note_memory(m);
    run_.evals.insert(run_.evals.end(), batch.evals.begin(), batch.evals.end());
    w_.loss->append(batch);
    w_.memory->append(batch);
    w_.noise->append(batch);
    pending_logs_ << batch.logs;
    for (const auto& line : batch.logs) show_threads(line);
    for (const auto& e : batch.evals) {
        const int row = w_.evals->rowCount();
        w_.evals->insertRow(row);
        const QStringList cells = {QString::number(e.epoch, 'f', 2), QString::number(e.step),
                                   QString::number(e.eval_loss, 'f', 4), QString::number(e.eval_accuracy, 'f', 4),
                                   QString::number(e.eval_f1, 'f', 4)};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setTextAlignment(Qt::AlignCenter);
            w_.evals->setItem(row, c, item);
        }
    }
}

void LiveView::show_threads(const QString& log_line) {
    // The engine's lines: "threads: 2 (LibTorch's pool 2, BLAS 1), the default for
    // this model on 2 cores; …" at the start, "threads: now 1 (was 2), other
    // programs using 1.0 cores; …" when it changes the count (run_context.cpp).
    static const QRegularExpression threads(QStringLiteral("^threads: (now |kept )?(\\d+)"));
    const auto m = threads.match(log_line);
    if (!m.hasMatch()) return;
    threads_count_ = m.captured(2).toInt();
    w_.threads->setText(threads_text(threads_count_));
    w_.threads->setToolTip(log_line);
    // A change mid-run says why where the eye is, for a while.
    if (m.captured(1) == QLatin1String("now ")) Q_EMIT threads_changed(log_line);
}

void LiveView::on_tick() {
    refresh(false);
    timer_.setInterval(budget_.interval_after_redraw(timer_.interval()));
}

void LiveView::refresh(bool final) {
    if (w_.code) w_.code->refresh();
    w_.loss->refresh();
    w_.memory->refresh();
    w_.noise->refresh();
    if (!pending_logs_.isEmpty()) {
        const bool follow = log_follow_;
        w_.log->appendPlainText(pending_logs_.join(QLatin1Char('\n')));
        pending_logs_.clear();
        if (follow) {
            auto* bar = w_.log->verticalScrollBar();
            bar->setValue(bar->maximum());
            log_follow_ = true;
        }
    }
    if (run_.steps.empty()) return;
    if (!final && status_clock_.isValid() && status_clock_.elapsed() < 250) return;
    status_clock_.start();
    const auto& last = run_.steps.back();
    const auto& c = run_.config;
    double fraction = 0.0;
    if (c.max_steps > 0) fraction = double(last.step) / double(c.max_steps);
    if (c.epochs > 0) fraction = std::max(fraction, last.epoch / double(c.epochs));
    fraction = std::clamp(fraction, 0.0, 1.0);
    w_.progress->setValue(static_cast<int>(std::lround(fraction * 1000)));
    w_.step->setText(tr("Step %1").arg(last.step));
    w_.epoch->setText(tr("Epoch %1").arg(last.epoch, 0, 'f', 2));
    const double rate = last.elapsed_s > 0 ? last.samples_seen / last.elapsed_s : 0.0;
    w_.speed->setText(samples_rate_text(rate));
    if (fraction > 0.0 && running())
        w_.eta->setText(tr("ETA %1").arg(format_duration(last.elapsed_s * (1.0 - fraction) / fraction)));
}

void LiveView::finish(const accum::SummaryRecord& summary) {
    timer_.stop();
    run_.summary = summary;
    run_.has_summary = true;
    // The engine refused to start it (another run of this process trains): nothing ran.
    if (engine_refused_as_busy(summary)) return;
    if (summary.status == accum::RunStatus::OutOfMemory) w_.memory->mark_out_of_memory(summary.peak_memory_bytes);
    refresh(true); // the last records
    if (summary.status == accum::RunStatus::Completed) w_.progress->setValue(w_.progress->maximum());
    show_run_times(summary);
}

void LiveView::show_run_times(const accum::SummaryRecord& summary) {
    w_.eta->setText(tr("took %1").arg(format_duration(summary.train_runtime_s)));
    if (summary.samples_per_second > 0) w_.speed->setText(samples_rate_text(summary.samples_per_second));
}

void LiveView::fit_labels() {
    // Each label keeps one size, that of its widest text, so setting its text during
    // a run repaints the label alone. A label whose size hint follows its text asks
    // for a new layout of the whole window at each change, twice a second, and the
    // layout measures the text of every widget again, on the cores that train.
    const auto keep_size = [](QLabel* label, const QStringList& widest) {
        const QFontMetrics metrics(label->font());
        int width = 0;
        for (const auto& text : widest) width = std::max(width, metrics.horizontalAdvance(text) + 12);
        label->setFixedSize(width, metrics.height() + 6);
    };
    const QString long_duration = format_duration(99 * 3600 + 59 * 60 + 59);
    keep_size(w_.step, {tr("Step %1").arg(9999999)});
    keep_size(w_.epoch, {tr("Epoch %1").arg(9999.99, 0, 'f', 2)});
    keep_size(w_.speed, {samples_rate_text(9999999.0)});
    keep_size(w_.threads, {threads_text(1), threads_text(88)});
    keep_size(w_.eta, {tr("ETA %1").arg(long_duration), tr("took %1").arg(long_duration)});
}

void LiveView::retranslate() {
    if (threads_count_ > 0) w_.threads->setText(threads_text(threads_count_));
    fit_labels();
    if (!run_.steps.empty()) refresh(true);
    if (run_.has_summary) show_run_times(run_.summary);
}

} // namespace studio
