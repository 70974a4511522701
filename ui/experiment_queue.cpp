#include "experiment_queue.h"

#include "engine_use.h"
#include "run_controller.h"

namespace studio {

ExperimentQueue::ExperimentQueue(QObject* parent) : QObject(parent) {
    qRegisterMetaType<studio::RunResult>("studio::RunResult");
    controller_ = new RunController(this);
    connect(controller_, &RunController::records_ready, this, &ExperimentQueue::on_records);
    connect(controller_, &RunController::finished, this, &ExperimentQueue::on_finished);
}

ExperimentQueue::~ExperimentQueue() { controller_->shutdown(); }

void ExperimentQueue::start(const std::vector<PlannedRun>& runs) {
    if (running_) return;
    planned_ = runs;
    results_.clear();
    index_ = -1;
    cancelled_ = false;
    running_ = true;
    start_next();
}

void ExperimentQueue::cancel() {
    if (!running_) return;
    cancelled_ = true;
    controller_->stop();
}

void ExperimentQueue::start_next() {
    ++index_;
    if (cancelled_ || index_ >= int(planned_.size())) {
        running_ = false;
        Q_EMIT all_finished();
        return;
    }
    const auto& plan = planned_[static_cast<std::size_t>(index_)];
    current_ = RunResult{};
    current_.label = plan.label;
    current_.source = QStringLiteral("lab");
    current_.config = plan.config;
    Q_EMIT run_started(index_, plan.label);
    controller_->start(plan.config);
}

void ExperimentQueue::on_records(const RecordBatch& batch) {
    current_.steps.insert(current_.steps.end(), batch.steps.begin(), batch.steps.end());
    current_.evals.insert(current_.evals.end(), batch.evals.begin(), batch.evals.end());
    for (const auto& m : batch.memory) current_.note_memory(m);
    if (!batch.steps.empty()) Q_EMIT progress(index_, current_);
}

void ExperimentQueue::on_finished(const accum::SummaryRecord& summary) {
    current_.summary = summary;
    current_.has_summary = true;
    // The engine refused the run: another run of this process trains, and it would
    // refuse the rest of the plan as well.
    if (engine_refused_as_busy(summary)) cancelled_ = true;
    results_.push_back(current_);
    Q_EMIT run_finished(index_, current_);
    start_next();
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
