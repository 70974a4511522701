#pragma once
// JSON Lines form of the records (the accum-run metrics file), and reading it back.

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "accum/records.h"

namespace accum {

std::string to_json_line(const StepRecord& r);
std::string to_json_line(const EvalRecord& r);
std::string to_json_line(const MemoryRecord& r);
std::string to_json_line(const SummaryRecord& r);
std::string to_json_line(const MicroStepRecord& r);

using AnyRecord = std::variant<StepRecord, EvalRecord, MemoryRecord, SummaryRecord, MicroStepRecord>;

// Parses one line; std::nullopt with `error` set when the line is not a record.
std::optional<AnyRecord> parse_json_line(const std::string& line, std::string& error);

std::optional<RunStatus> parse_run_status(const std::string& text);

// For a run resumed into the directory of its metrics file: the file's complete
// records up to optimizer step `step` (the checkpoint's), in order, as lines. A
// run killed with -9 may have logged steps after its checkpoint and left half a
// line; those, unreadable lines and the old summary are left out.
std::vector<std::string> records_through_step(const std::string& metrics_path, std::int64_t step);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
