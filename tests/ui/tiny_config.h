// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A run of a few steps that the UI tests start for real: the synthetic pairs on
// the MLP, on the CPU, seeded, no budget, its length in optimizer steps.

#include <cstdint>

#include "accum/run_config.h"

namespace test_fixtures {

inline accum::RunConfig tiny_config(std::int64_t batch, std::int64_t k, std::int64_t max_steps) {
    accum::RunConfig c;
    c.dataset = accum::DatasetKind::SyntheticPairs;
    c.model = accum::ModelKind::Mlp;
    c.batch_size = batch;
    c.accumulation_steps = k;
    c.epochs = 0;
    c.max_steps = max_steps;
    c.seed = 7;
    c.device = "cpu";
    c.memory_budget = "0";
    return c;
}

} // namespace test_fixtures
