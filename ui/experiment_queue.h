#pragma once
// Runs a list of configurations one after another on its own engine thread
// (through a RunController) and keeps each as a RunResult. Used by the
// equivalence lab and the pitfall demos.

#include <QObject>
#include <QString>
#include <vector>

#include "accum/run_config.h"
#include "record_batch.h"
#include "run_result.h"

namespace studio {

class RunController;

struct PlannedRun {
    QString label;
    accum::RunConfig config;
};

class ExperimentQueue : public QObject {
    Q_OBJECT
public:
    explicit ExperimentQueue(QObject* parent = nullptr);
    ~ExperimentQueue() override;

    void start(const std::vector<PlannedRun>& runs);
    void cancel(); // stops the current run and drops the rest (so does a run the engine refuses)
    bool is_running() const { return running_; }
    const std::vector<RunResult>& results() const { return results_; }
    int planned_count() const { return int(planned_.size()); }
    RunController* controller() const { return controller_; }

Q_SIGNALS:
    void run_started(int index, const QString& label);
    void progress(int index, const studio::RunResult& partial); // records so far (at most every 100 ms)
    void run_finished(int index, const studio::RunResult& result);
    void all_finished();

private:
    void start_next();
    void on_records(const RecordBatch& batch);
    void on_finished(const accum::SummaryRecord& summary);

    RunController* controller_ = nullptr;
    std::vector<PlannedRun> planned_;
    std::vector<RunResult> results_;
    RunResult current_;
    int index_ = -1;
    bool running_ = false;
    bool cancelled_ = false;
};

} // namespace studio

Q_DECLARE_METATYPE(studio::RunResult)
// SPDX-License-Identifier: GPL-3.0-or-later
