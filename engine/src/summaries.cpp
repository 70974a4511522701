#include "summaries.h"

#include <cmath>

#include "accum/engine_messages.h"

namespace accum {

std::string first_line(const std::string& text) {
    const auto nl = text.find('\n');
    return nl == std::string::npos ? text : text.substr(0, nl);
}

EngineMessage problems_message(const std::vector<ConfigProblem>& problems) {
    std::string more;
    for (std::size_t i = 1; i < problems.size(); ++i) more += (more.empty() ? "" : "; ") + problems[i].to_string();
    auto message = make_message(message_code::invalid_configuration,
                                {{"option", problems[0].option}, {"problem", problems[0].message}});
    if (!more.empty()) message.args["more"] = more;
    return message;
}

EngineMessage config_message(const std::string& text) {
    return make_message(message_code::config_error, {{"detail", text}});
}

SummaryRecord failed_summary(RunStatus status, int code, EngineMessage message, int world_size) {
    SummaryRecord summary;
    summary.final_loss = std::nan("");
    summary.status = status;
    summary.exit_code = code;
    set_message(summary, std::move(message));
    summary.world_size = world_size;
    return summary;
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
