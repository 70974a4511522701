#include "run_worker.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <exception>

#include "accum/engine_messages.h"
#include "accum/errors.h"
#include "accum/planned_run.h"
#include "accum/run_directory.h"

namespace studio {

namespace {
// Records cross to the window at most 10 times a second (a record arriving after a
// longer pause, as at teaching pace, goes at once).
constexpr qint64 flush_interval_ms = 100;
}

QString worker_program() {
    QStringList candidates;
    const auto from_environment = qEnvironmentVariable("ACCUM_RUN_PROGRAM");
    if (!from_environment.isEmpty()) candidates << from_environment;
    candidates << QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("accum-run"));
#ifdef ACCUM_BUILD_TREE_RUN
    candidates << QStringLiteral(ACCUM_BUILD_TREE_RUN);
#endif
    for (const auto& c : candidates)
        if (QFileInfo(c).isExecutable() && QFileInfo(c).isFile()) return QFileInfo(c).absoluteFilePath();
    return {};
}

RunWorker::RunWorker(QObject* parent) : QObject(parent) {
    session_.set_worker_program(worker_program().toStdString());
}

void RunWorker::begin_run() {
    const std::lock_guard<std::mutex> lock(stop_mutex_);
    stop_ = std::stop_source();
}

void RunWorker::request_stop() {
    const std::lock_guard<std::mutex> lock(stop_mutex_);
    stop_.request_stop();
}

void RunWorker::request_pause() { session_.pause(); }
void RunWorker::request_resume() { session_.resume(); }
void RunWorker::request_step_once() { session_.step_once(); }

void RunWorker::run(const accum::RunConfig& config) {
    pending_ = RecordBatch{};
    has_offset_ = false;
    clock_offset_s_ = 0.0;
    run_clock_.start();
    flush_clock_.start();
    std::stop_token stop;
    {
        const std::lock_guard<std::mutex> lock(stop_mutex_);
        stop = stop_.get_token();
    }
    accum::SummaryRecord summary;
    accum::RunConfig run_config = config;
    writer_.reset();
    if (!config.output_dir.empty()) {
        std::string error;
        run_config.output_dir = accum::create_run_directory(config.output_dir, error);
        auto writer = std::make_unique<accum::RunWriter>();
        if (run_config.output_dir.empty() || !writer->open(run_config, error)) {
            summary.status = accum::RunStatus::Error;
            summary.exit_code = accum::exit_code::invalid_arguments;
            accum::set_message(summary,
                               accum::make_message(accum::message_code::output_dir_unusable, {{"error", error}}));
            flush();
            Q_EMIT run_finished(summary);
            return;
        }
        writer_ = std::move(writer);
        pending_.run_directory = QString::fromStdString(run_config.output_dir);
        on_log("writing " + run_config.output_dir);
        if (!writer_->switches_note().empty()) on_log(writer_->switches_note()); // a benchmark switch is set
    }
    try {
        summary = accum::run_planned(session_, run_config, *this, stop); // with the advice after an out-of-memory run
    } catch (const std::exception& e) {
        summary.status = accum::RunStatus::Error;
        accum::set_message(summary, accum::make_message(accum::message_code::internal_error, {{"error", accum::error_text(e)}}));
        summary.exit_code = accum::exit_code::failure;
    }
    writer_.reset();
    flush();
    Q_EMIT run_finished(summary);
}

double RunWorker::run_time() const { return run_clock_.nsecsElapsed() * 1e-9 - clock_offset_s_; }

void RunWorker::on_micro_step(const accum::MicroStepRecord& r) {
    if (writer_) writer_->on_micro_step(r);
    pending_.micro_steps.push_back({r, run_time()});
    after_record();
}

void RunWorker::on_step(const accum::StepRecord& r) {
    if (writer_) writer_->on_step(r);
    if (!has_offset_) {
        // Align our clock with the engine's (which starts after data loading).
        clock_offset_s_ = run_clock_.nsecsElapsed() * 1e-9 - r.elapsed_s;
        has_offset_ = true;
    }
    pending_.steps.push_back(r);
    after_record();
}

void RunWorker::on_eval(const accum::EvalRecord& r) {
    if (writer_) writer_->on_eval(r);
    pending_.evals.push_back(r);
    after_record();
}

void RunWorker::on_memory(const accum::MemoryRecord& r) {
    if (writer_) writer_->on_memory(r);
    if (!has_offset_) {
        clock_offset_s_ = run_clock_.nsecsElapsed() * 1e-9 - r.elapsed_s;
        has_offset_ = true;
    }
    pending_.memory.push_back(r);
    after_record();
}

void RunWorker::on_summary(const accum::SummaryRecord& r) {
    if (writer_) writer_->on_summary(r);
}

void RunWorker::on_detail(const std::string& text) {
    if (writer_) writer_->on_detail(text);
}

void RunWorker::on_log(const std::string& line) {
    pending_.logs.append(QString::fromStdString(line));
    after_record();
}

void RunWorker::after_record() {
    if (flush_clock_.elapsed() >= flush_interval_ms) flush();
}

void RunWorker::flush() {
    flush_clock_.restart();
    if (pending_.empty()) return;
    RecordBatch batch;
    std::swap(batch, pending_);
    Q_EMIT records_ready(batch);
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
