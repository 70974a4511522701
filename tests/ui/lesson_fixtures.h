#pragma once
// What the studio's UI tests show without running the engine: the summary lesson
// step 1 ends with, its message as the engine words it, with the measured
// suggestion and why that lever (the out-of-memory banner's longest text).

#include "accum/engine_messages.h"
#include "accum/records.h"

namespace test_fixtures {

inline accum::SummaryRecord lesson_step1_out_of_memory() {
    accum::SummaryRecord summary;
    summary.status = accum::RunStatus::OutOfMemory;
    summary.suggested_batch_size = 128;
    summary.suggested_accumulation_steps = 2;
    accum::set_message(summary, accum::make_message(accum::message_code::out_of_memory,
                                                    {{"batch_size", "256"},
                                                     {"accumulation_steps", "1"},
                                                     {"budget", "40.0 MiB"},
                                                     {"peak", "36.1 MiB"},
                                                     {"requested", "6.1 MiB"},
                                                     {"in_use", "36.1 MiB"},
                                                     {"error", "CPU out of memory (memory budget)."},
                                                     {"suggestion", accum::message_code::suggest_measured},
                                                     {"suggested_batch_size", "128"},
                                                     {"suggested_accumulation_steps", "2"},
                                                     {"effective_batch", "256"},
                                                     {"exact", "yes"},
                                                     {"measured_peak", "27.6 MiB"},
                                                     {"why", accum::message_code::plan_faster},
                                                     {"faster_batch", "128"},
                                                     {"faster_steps", "2"},
                                                     {"slower_batch", "256"},
                                                     {"slower_steps", "1"},
                                                     {"ratio", "1.07"},
                                                     {"spread", "1.03–1.12"}}));
    return summary;
}

} // namespace test_fixtures
// SPDX-License-Identifier: GPL-3.0-or-later
