#pragma once
// Lives on the controller's QThread and runs one engine Session at a time.
// The engine calls the Sink methods on this thread; they gather records and
// hand them over in batches at most every 100 ms (flush_interval_ms), so a
// fast model never floods the GUI's event loop. stop()/pause()/resume() are
// plain thread-safe calls, not slots: a blocking run cannot receive a queued
// call.

#include <QElapsedTimer>
#include <QObject>
#include <memory>
#include <mutex>
#include <stop_token>

#include "accum/run_writer.h"
#include "accum/session.h"
#include "accum/sink.h"
#include "record_batch.h"

namespace studio {

// The accum-run that trains ranks 1 … N−1 of a run of N processes started from
// the studio (the studio trains rank 0): $ACCUM_RUN_PROGRAM when set, else the
// one beside this program (an installation puts both in the same bin/), else
// the build tree's. Empty when none is executable.
QString worker_program();

class RunWorker : public QObject, private accum::Sink {
    Q_OBJECT
public:
    explicit RunWorker(QObject* parent = nullptr);

    // Called by the controller before it queues each run: the run gets a stop of
    // its own, so a Stop pressed before the run has started still stops it, and
    // one that reaches the previous run too late cannot stop this one.
    void begin_run();
    // Thread-safe.
    void request_stop();
    void request_pause();
    void request_resume();
    void request_step_once();

public Q_SLOTS:
    // config.output_dir, when set, is the folder the person chose for runs: the
    // run gets a directory of its own in it, created for this run (its name from
    // the time, unique even for two runs in one second), and its files go there.
    // The studio never writes into a directory it did not create for the run.
    void run(const accum::RunConfig& config);

Q_SIGNALS:
    void records_ready(const studio::RecordBatch& batch);
    void run_finished(const accum::SummaryRecord& summary);

private:
    void on_micro_step(const accum::MicroStepRecord& r) override;
    void on_step(const accum::StepRecord& r) override;
    void on_eval(const accum::EvalRecord& r) override;
    void on_memory(const accum::MemoryRecord& r) override;
    void on_log(const std::string& line) override;
    void on_detail(const std::string& text) override; // the run directory's log.txt, not the window
    void on_summary(const accum::SummaryRecord& r) override;
    void after_record();
    void flush();
    double run_time() const;

    accum::Session session_;
    std::unique_ptr<accum::RunWriter> writer_; // the run's files, when it has a directory
    std::mutex stop_mutex_;
    std::stop_source stop_; // the current run's (begin_run)
    RecordBatch pending_;
    QElapsedTimer run_clock_;
    QElapsedTimer flush_clock_;
    double clock_offset_s_ = 0.0;
    bool has_offset_ = false;
};

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
