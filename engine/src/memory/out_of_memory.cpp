#include "memory/out_of_memory.h"

#include <stdexcept>

#include <c10/util/Exception.h>

#include "accum/engine_messages.h"
#include "accum/errors.h"

namespace accum {

namespace {
// The arguments of an out_of_memory message that are the run's facts; the rest
// belong to its suggestion.
constexpr const char* kFactArguments[] = {"batch_size", "accumulation_steps", "budget", "peak",
                                          "error",      "requested",          "in_use", "reached_zero"};
} // namespace

EngineMessage out_of_memory_message(const RunConfig& config, const OutOfMemoryFacts& facts) {
    std::map<std::string, std::string> args;
    args["batch_size"] = std::to_string(config.batch_size);
    args["accumulation_steps"] = std::to_string(config.accumulation_steps);
    if (facts.budget > 0) args["budget"] = format_byte_size(facts.budget);
    args["peak"] = format_byte_size(facts.peak);
    args["error"] = facts.detail;
    if (facts.requested > 0) {
        args["requested"] = format_byte_size(facts.requested);
        args["in_use"] = format_byte_size(facts.in_use);
    }
    return make_message(message_code::out_of_memory, std::move(args));
}

EngineMessage with_suggestion(const EngineMessage& oom, const EngineMessage& suggestion) {
    auto args = suggestion.args;
    for (const char* name : kFactArguments)
        if (const auto it = oom.args.find(name); it != oom.args.end()) args[name] = it->second;
    if (!suggestion.code.empty()) args["suggestion"] = suggestion.code;
    return make_message(message_code::out_of_memory, std::move(args));
}

bool is_out_of_memory_error(const std::exception& e) {
    if (dynamic_cast<const c10::OutOfMemoryError*>(&e)) return true;
    // Older CUDA builds report "CUDA out of memory" as a plain c10::Error.
    return std::string(e.what()).find("out of memory") != std::string::npos;
}

void find_executable_batch_size(const std::function<void(std::int64_t)>& fn, std::int64_t batch_size,
                                const std::function<void(std::int64_t, const std::string&)>& on_retry) {
    while (true) {
        if (batch_size == 0) throw std::runtime_error("No executable batch size found, reached zero.");
        try {
            fn(batch_size);
            return;
        } catch (const std::exception& e) {
            if (!is_out_of_memory_error(e)) throw;
            batch_size = static_cast<std::int64_t>(static_cast<double>(batch_size) * 0.9);
            if (on_retry && batch_size > 0) on_retry(batch_size, error_text(e));
        }
    }
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
