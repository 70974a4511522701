// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The runs an experiment of the lab makes: which configurations, in which order,
// from the studio's own. Plain functions, tested without a window.

#include <cstdint>
#include <utility>
#include <vector>

#include "experiment_queue.h"
#include "experiments.h"

namespace studio {

// (micro-batch, K) pairs of compare-accumulation, the reference first.
using ExperimentShapes = std::vector<std::pair<std::int64_t, std::int64_t>>;

// The runs an experiment makes from the studio's configuration: at least two,
// the first the reference the others are measured against. `noise_scale`: a
// gradient noise scale measured on this model and data (samples), which the
// noise-scale experiment places its batches around (0: kDefaultNoiseScale).
// `shapes` (a lesson step's) replaces compare-accumulation's own B·K × 1, B × K,
// B/2 × 2K.
std::vector<PlannedRun> plan_experiment(Experiment experiment, const accum::RunConfig& base, double noise_scale = 0.0,
                                        const ExperimentShapes& shapes = {});

} // namespace studio
