// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The lab's table: one row a run, in the plan's order (the first is the
// reference), with its shape, final loss, max |Δ loss| against the first,
// accuracy, time, memory, speed and, where they apply, communication and the
// loss scaler's skipped updates. The columns that say nothing for these runs
// are hidden (no evaluation, one process, no loss scaling), and in front of a
// class those that do not make the experiment's point. It is filled from the
// runs alone, so it is tested on made-up results (tests/ui/test_lab_table.cpp);
// the lab panel (lab_panel.h) lays it out and fills it as runs end.

#include <QTableWidget>
#include <vector>

#include "run_result.h"

namespace studio {

class LabTable : public QTableWidget {
    Q_OBJECT
public:
    explicit LabTable(QWidget* parent = nullptr);
    // The rows of `runs`; `presentation`: in front of a class (presentation mode).
    void fill(const std::vector<RunResult>& runs, bool presentation);
    // The headers again in the language installed now (the panel calls it, then fill()).
    void retranslate();
};

} // namespace studio
