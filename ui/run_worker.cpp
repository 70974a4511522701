#include "run_worker.h"

#include <exception>

namespace studio {

namespace {
// Records cross to the window at most 10 times a second (a record arriving after a
// longer pause, as at teaching pace, goes at once).
constexpr qint64 flush_interval_ms = 100;
}

RunWorker::RunWorker(QObject* parent) : QObject(parent) {}

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
    try {
        summary = session_.run(config, *this, stop);
    } catch (const std::exception& e) {
        summary.status = accum::RunStatus::Error;
        summary.message = e.what();
        summary.exit_code = accum::exit_code::failure;
    }
    flush();
    Q_EMIT run_finished(summary);
}

double RunWorker::run_time() const { return run_clock_.nsecsElapsed() * 1e-9 - clock_offset_s_; }

void RunWorker::on_micro_step(const accum::MicroStepRecord& r) {
    pending_.micro_steps.push_back({r, run_time()});
    after_record();
}

void RunWorker::on_step(const accum::StepRecord& r) {
    if (!has_offset_) {
        // Align our clock with the engine's (which starts after data loading).
        clock_offset_s_ = run_clock_.nsecsElapsed() * 1e-9 - r.elapsed_s;
        has_offset_ = true;
    }
    pending_.steps.push_back(r);
    after_record();
}

void RunWorker::on_eval(const accum::EvalRecord& r) {
    pending_.evals.push_back(r);
    after_record();
}

void RunWorker::on_memory(const accum::MemoryRecord& r) {
    if (!has_offset_) {
        clock_offset_s_ = run_clock_.nsecsElapsed() * 1e-9 - r.elapsed_s;
        has_offset_ = true;
    }
    pending_.memory.push_back(r);
    after_record();
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
