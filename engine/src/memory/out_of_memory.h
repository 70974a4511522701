#pragma once
// Recognising out-of-memory errors (LibTorch's OutOfMemoryError, from our CPU
// budget or the CUDA caching allocator), the message that says what ran out,
// and Accelerate's retry-smaller loop.

#include <cstdint>
#include <exception>
#include <functional>
#include <string>

#include "accum/records.h"
#include "accum/run_config.h"

namespace accum {

// What an out-of-memory run leaves for its message and the advice after it.
struct OutOfMemoryFacts {
    std::int64_t budget = 0;    // the configured budget (0: none)
    std::int64_t peak = 0;      // tensor memory the run reached
    std::string detail;         // LibTorch's own first line
    std::int64_t requested = 0; // the allocation the counting allocator denied (0: not known)
    std::int64_t in_use = 0;    // and the memory in use then
};

// The out_of_memory message (engine_messages.h) of a run of `config`: what ran
// out, without a suggestion (the planning layer adds one: with_suggestion).
EngineMessage out_of_memory_message(const RunConfig& config, const OutOfMemoryFacts& facts);
// `oom` (an out_of_memory message) with `suggestion` (a suggest_* message)
// inside, in place of any it had; an empty suggestion takes it out.
EngineMessage with_suggestion(const EngineMessage& oom, const EngineMessage& suggestion);

bool is_out_of_memory_error(const std::exception& e);

// Accelerate's find_executable_batch_size: calls fn(batch_size); on an
// out-of-memory error retries with int(batch_size * 0.9). Throws
// std::runtime_error("No executable batch size found, reached zero.") at zero.
// `on_retry` is told each new size (above zero) before it is tried.
void find_executable_batch_size(const std::function<void(std::int64_t)>& fn, std::int64_t starting_batch_size,
                                const std::function<void(std::int64_t, const std::string&)>& on_retry = {});

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
