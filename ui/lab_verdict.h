// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The lab's verdict line: while an experiment runs, which run of how many; when
// it ends, what its runs showed, with their numbers (the largest |Δ loss|, and
// per experiment the all-reduces, time per update, memory or skipped updates
// that make its point), or why there is no verdict (a run refused, a run that
// did not complete). Plain functions of the runs' results in the language
// installed now, tested on made-up results (tests/ui/test_lab_verdict.cpp);
// the lab panel (lab_panel.h) shows them.

#include <QCoreApplication>
#include <QString>
#include <cstddef>
#include <vector>

#include "experiments.h"
#include "run_result.h"

namespace studio {

class LabVerdict {
    Q_DECLARE_TR_FUNCTIONS(studio::LabVerdict)
public:
    // Before the first run starts: how many runs the plan made.
    static QString planned(std::size_t count);
    // Run `index` (from 0) of `count` started.
    static QString running(int index, int count, const QString& label);
    // The experiment ended with `runs`, in the plan's order (the first is the reference).
    static QString finished(Experiment experiment, const std::vector<RunResult>& runs);
    // The largest |Δ loss| of runs that change only the order of the sums
    // (shapes, no_sync, checkpointing): "Same losses" below float rounding
    // (kSameLossTolerance), else how far apart and why. The lessons' checks say it too.
    static QString losses(double worst);
};

} // namespace studio
