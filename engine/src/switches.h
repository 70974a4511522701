#pragma once
// Environment switches for side-by-side measurements (bench/): NAME=0 turns off
// a feature that is on by default. Read once per process by each caller.
//
// Two switches of bench/memory_levers set how the CNN's gradient checkpointing
// runs (models/cnn.cpp) instead: ACCUM_CNN_CHECKPOINT and
// ACCUM_CHECKPOINT_CHUNK_BYTES. A run made with one of them set is not quite
// the run its options describe, so its run directory records them
// (RunWriter::open: accum_config.json's "bench-switches") and its log says so once.
// Their names are in accum/run_writer.h, with the writer that records them
// (accum_core, below this header).

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "accum/run_writer.h"

namespace accum {

// The warning of a switch whose value is not understood: it names the switch,
// the value and what applies instead.
inline void switch_ignored(const char* name, const char* value, const char* what) {
    std::fprintf(stderr, "accum: %s=%s is %s\n", name, value, what);
}

// True for NAME=0. Unset, empty or 1 leave the feature on; any other value
// leaves it on too, with a warning on stderr that names the switch, so that
// NAME=off or NAME=false does not silently measure the wrong thing.
inline bool switched_off(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr) return false;
    const std::string_view text(value);
    if (text == "0") return true;
    if (!text.empty() && text != "1") switch_ignored(name, value, "neither 0 (off) nor 1 (on); leaving it on");
    return false;
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
