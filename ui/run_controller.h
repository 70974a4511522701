#pragma once
// Owns the engine thread and its worker (Qt's worker-object pattern). All
// methods are called on the GUI thread; results arrive as signals there.

#include <QObject>
#include <QThread>

#include "accum/records.h"
#include "accum/run_config.h"
#include "record_batch.h"

namespace studio {

class RunWorker;

class RunController : public QObject {
    Q_OBJECT
public:
    explicit RunController(QObject* parent = nullptr);
    ~RunController() override;

    bool is_running() const { return running_; }
    bool is_paused() const { return paused_; }
    // The engine thread (for tests: finished after shutdown()).
    const QThread* engine_thread() const { return &thread_; }

    void start(const accum::RunConfig& config);
    void stop();   // returns at once; the run ends at the next micro-batch
    void pause();
    void resume();
    void step_once();
    // Stops any run and waits for the engine thread to end. Idempotent.
    void shutdown();

Q_SIGNALS:
    void started();
    void records_ready(const studio::RecordBatch& batch);
    void finished(const accum::SummaryRecord& summary);
    void paused_changed(bool paused);
    void run_requested(const accum::RunConfig& config); // to the worker (queued)

private:
    void on_worker_finished(const accum::SummaryRecord& summary);

    QThread thread_;
    RunWorker* worker_ = nullptr; // deleted on the thread's finished()
    bool running_ = false;
    bool paused_ = false;
};

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
