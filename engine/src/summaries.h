#pragma once
// Summaries and messages that more than one layer makes (the session, hosting
// ranks, the planning layer). Torch-free.

#include <string>
#include <vector>

#include "accum/records.h"
#include "accum/run_config.h"

namespace accum {

// The first line of `text` (an exception's what(), whose later lines are a trace).
std::string first_line(const std::string& text);

// The configuration's problems as one message: the first, and the others after it.
EngineMessage problems_message(const std::vector<ConfigProblem>& problems);

// A free-form configuration error (config_error).
EngineMessage config_message(const std::string& text);

// The summary of a run that ended before training: `status`, exit code and message.
SummaryRecord failed_summary(RunStatus status, int code, EngineMessage message, int world_size = 1);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
