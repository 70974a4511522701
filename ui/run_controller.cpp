#include "run_controller.h"

#include "run_worker.h"

namespace studio {

RunController::RunController(QObject* parent) : QObject(parent) {
    register_record_types();
    thread_.setObjectName(QStringLiteral("accum-engine"));
    worker_ = new RunWorker;
    worker_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    connect(this, &RunController::run_requested, worker_, &RunWorker::run, Qt::QueuedConnection);
    connect(worker_, &RunWorker::records_ready, this, &RunController::records_ready, Qt::QueuedConnection);
    connect(worker_, &RunWorker::run_finished, this, &RunController::on_worker_finished, Qt::QueuedConnection);
    thread_.start();
}

RunController::~RunController() { shutdown(); }

void RunController::start(const accum::RunConfig& config) {
    if (running_ || !thread_.isRunning()) return;
    running_ = true;
    paused_ = false;
    worker_->begin_run();
    Q_EMIT started();
    Q_EMIT run_requested(config);
}

void RunController::stop() {
    if (!running_) return;
    worker_->request_stop();
    if (paused_) {
        worker_->request_resume();
        paused_ = false;
        Q_EMIT paused_changed(false);
    }
}

void RunController::pause() {
    if (!running_ || paused_) return;
    worker_->request_pause();
    paused_ = true;
    Q_EMIT paused_changed(true);
}

void RunController::resume() {
    if (!running_ || !paused_) return;
    worker_->request_resume();
    paused_ = false;
    Q_EMIT paused_changed(false);
}

void RunController::step_once() {
    if (running_ && paused_) worker_->request_step_once();
}

void RunController::shutdown() {
    if (!thread_.isRunning()) return;
    if (running_) {
        worker_->request_stop();
        worker_->request_resume();
    }
    thread_.quit(); // the loop ends once the current run() has returned
    thread_.wait();
    running_ = false;
    paused_ = false;
}

void RunController::on_worker_finished(const accum::SummaryRecord& summary) {
    running_ = false;
    if (paused_) {
        paused_ = false;
        Q_EMIT paused_changed(false);
    }
    Q_EMIT finished(summary);
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
