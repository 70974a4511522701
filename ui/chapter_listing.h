#pragma once
// The code panel's "Chapter" view: each style's loop as the chapter on gradient
// accumulation writes it (about ten lines, K written as the run's value), not
// the runnable script. Each line names the roles it plays (code_listing.h), so
// the panel lights it when the engine executes its counterpart. Lines the
// configuration adds (no_sync with several processes, autocast and the loss
// scaler with mixed precision, clipping) are there only when it is on, and are
// marked as additions. Each line that starts a new idea carries one sentence of
// why, for the build-up (the loop revealed a line at a time). Pure logic (QtCore
// only): tested without a window.

#include <QString>
#include <vector>

#include "accum/run_config.h"
#include "code_listing.h"

namespace studio {

struct ChapterOptions {
    QString style = QStringLiteral("pytorch"); // pytorch | accelerator | trainer
    int accumulation_steps = 4;
    std::int64_t batch_size = 64;
    int world_size = 1;
    accum::MixedPrecision mixed_precision = accum::MixedPrecision::No;
    bool loss_scaler = false;
    double max_grad_norm = 0.0; // 0: no clipping
    bool cuda = false;          // autocast's device
};

ChapterOptions chapter_options(const accum::RunConfig& config);

struct ChapterLine {
    QString text;
    std::vector<LineRole> roles;
    bool addition = false; // there because of the configuration
    // The sentence of why (translated, K and N filled in); empty for a line that
    // continues the one above (the build-up reveals them together).
    QString why;
};

struct ChapterListing {
    std::vector<ChapterLine> lines;

    // As a listing for the panel's highlighting (the same line numbers).
    CodeListing listing() const;
    // The build-up's steps: the index of each line with a sentence of why, in
    // order; step s shows lines [0, end_of_step(s)).
    std::vector<int> step_starts() const;
    int end_of_step(int step) const;
};

ChapterListing chapter_listing(const ChapterOptions& options);

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
