#pragma once
// A listing read as a run lights it: each role's first line at or below the
// previous role's, so the lit line only moves down through a micro-batch.

#include <vector>

#include <QString>

#include "accum/records.h"
#include "code_listing.h"

namespace test_lit {

// A window's last micro-batch with every line on: autocast, a loss scale, its all-reduce.
inline accum::MicroStepRecord scaled_sync_record() {
    accum::MicroStepRecord last;
    last.sync = true;
    last.autocast = true;
    last.loss_scale = 65536.0;
    last.grad_allreduces = 1;
    return last;
}

// What is wrong with lighting `roles` in order in `listing`, empty when nothing:
// a role without a line, or one whose first line lies above the previous role's.
// Each role's first `shared_lines` lines are left out (the Trainer chapter's
// trainer.train(), which every role lights).
inline QString order_problem(const studio::CodeListing& listing, const std::vector<studio::LineRole>& roles,
                             int shared_lines = 0) {
    int previous = -1;
    for (const auto role : roles) {
        const auto lines = listing.lines_for(role).mid(shared_lines);
        if (lines.isEmpty()) return QStringLiteral("%1 has no line").arg(studio::role_name(role));
        if (lines.front() < previous)
            return QStringLiteral("%1 lights line %2, above line %3")
                .arg(studio::role_name(role))
                .arg(lines.front())
                .arg(previous);
        previous = lines.front();
    }
    return {};
}

} // namespace test_lit
// SPDX-License-Identifier: GPL-3.0-or-later
