#pragma once
// One finished (or loaded) run as the studio keeps it: its configuration, the
// optimizer-step and eval records, and the summary. Comparing runs and reading
// a run directory written by accum-run are plain functions, without widgets.

#include <QString>
#include <optional>
#include <vector>

#include "accum/records.h"
#include "accum/run_config.h"

namespace studio {

// Below this |Δ loss|, two runs are the same up to float rounding: the lab's
// verdicts and |Δ loss| band, and the lessons' same-loss checks (ARCHITECTURE.md I1).
inline constexpr double kSameLossTolerance = 1e-5;

struct RunResult {
    QString label;            // "pytorch", "B=32 × K=2", a directory name…
    QString source;           // "live", "lab" or the directory it was loaded from
    QString folder;           // the run directory its files are in; "" when it wrote none
    accum::RunConfig config;
    std::vector<accum::StepRecord> steps;
    std::vector<accum::EvalRecord> evals;
    accum::SummaryRecord summary;
    bool has_summary = false;
    // The run's static bands, the largest each memory record showed: parameters,
    // gradients (released by zero_grad between windows) and optimizer state.
    std::int64_t parameters_bytes = 0;
    std::int64_t gradients_bytes = 0;
    std::int64_t optimizer_state_bytes = 0;

    // The largest peak of activations of any step (0 without step records).
    std::int64_t peak_activations_bytes() const;
    // The largest of the steps' optimizer-step temporaries (clipping, the step,
    // zero_grad), above the static part; 0 without step records.
    std::int64_t peak_optimizer_step_bytes() const;
    // Parameters, gradients and optimizer state at the peak of the step with the
    // most activations after the first (whose optimizer has no state yet): its
    // peak less its activations; 0 without step records.
    std::int64_t static_bytes_at_peak() const;
    // Takes a memory record's categories into the static bands.
    void note_memory(const accum::MemoryRecord& record);

    // Last eval accuracy, or NaN when the run had no evaluation.
    double final_accuracy() const;
    double final_loss() const; // summary's, else the last step's, else NaN
};

// max over steps s present in both runs of |loss_a(s) - loss_b(s)|; NaN when
// they share no step.
double max_loss_difference(const RunResult& a, const RunResult& b);
// The largest pairwise max_loss_difference among the runs (NaN if < 2 runs).
double max_pairwise_loss_difference(const std::vector<RunResult>& runs);

// Reads the run's record (accum_config.json, or an older run's config.json that
// is no model's config) and DIR/metrics.jsonl (as accum-run writes them).
// Returns nothing and sets `error` when neither file can be read.
std::optional<RunResult> load_run_directory(const QString& dir, QString* error = nullptr);


} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
