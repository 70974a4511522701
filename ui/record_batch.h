#pragma once
// The records of a run, gathered on the engine thread and handed to the GUI
// thread by value over a queued signal (a few dozen times a second at most).

#include <QMetaType>
#include <QString>
#include <QStringList>
#include <vector>

#include "accum/records.h"
#include "accum/run_config.h"

namespace studio {

// A micro-batch record with the run time at which it arrived (the engine's
// micro-step records carry no clock of their own).
struct TimedMicroStep {
    accum::MicroStepRecord record;
    double elapsed_s = 0.0;
};

struct RecordBatch {
    std::vector<TimedMicroStep> micro_steps;
    std::vector<accum::StepRecord> steps;
    std::vector<accum::EvalRecord> evals;
    std::vector<accum::MemoryRecord> memory;
    QStringList logs;
    QString run_directory; // set once, in the batch that logs where the run writes its files

    bool empty() const {
        return micro_steps.empty() && steps.empty() && evals.empty() && memory.empty() && logs.isEmpty();
    }
};

// qRegisterMetaType for every value type that crosses threads. Idempotent.
void register_record_types();

} // namespace studio

Q_DECLARE_METATYPE(studio::RecordBatch)
Q_DECLARE_METATYPE(accum::SummaryRecord)
Q_DECLARE_METATYPE(accum::RunConfig)
// SPDX-License-Identifier: GPL-3.0-or-later
