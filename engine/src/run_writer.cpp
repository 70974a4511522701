#include "accum/run_writer.h"

#include <cstdlib>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "accum/errors.h"
#include "accum/metrics_io.h"
#include "accum/run_directory.h"
#include "checked_file.h"
#include "tensorboard_writer.h"

namespace accum {

namespace fs = std::filesystem;

bool write_file_atomically(const std::string& path, const std::string& text, std::string* error) {
    try {
        io::write_file_atomically(path, text);
        return true;
    } catch (const WriteError& e) {
        if (error) *error = e.what();
        return false;
    }
}

std::vector<std::pair<std::string, std::string>> model_switches_set() {
    std::vector<std::pair<std::string, std::string>> set;
    for (const char* name : kModelSwitches)
        if (const char* value = std::getenv(name); value != nullptr && *value != '\0') set.emplace_back(name, value);
    return set;
}

bool RunWriter::open(const RunConfig& config, std::string& error) {
    directory_ = config.output_dir;
    failed_ = false;
    summary_error_.clear();
    const fs::path dir(config.output_dir);
    metrics_path_ = config.metrics_file.empty() ? (dir / "metrics.jsonl").string() : config.metrics_file;
    std::vector<std::string> kept;
    std::error_code ec;
    if (!config.resume_from.empty() && fs::exists(metrics_path_, ec)) {
        // The records up to the step the run resumes from. A checkpoint whose step
        // cannot be read is refused by the run (checkpoint.cpp): its records stay.
        const auto step = checkpoint_global_step(checkpoint_to_resume(config.resume_from));
        kept = records_through_step(metrics_path_, step >= 0 ? step : std::numeric_limits<std::int64_t>::max());
    }
    std::string text;
    for (const auto& line : kept) text += line + '\n';
    try {
        io::append_to_file(metrics_path_, text, /*truncate=*/true);
    } catch (const WriteError& e) {
        error = std::string(config.metrics_file.empty() ? "--output-dir: " : "--metrics: ") + e.what();
        return false;
    }
    // The options, and the model switches in force: a reader of the run (or
    // accum-run --config) sees that the model was not the options' alone.
    std::string config_text = to_json_text(config);
    switches_note_.clear();
    if (const auto switches = model_switches_set(); !switches.empty()) {
        auto j = nlohmann::json::parse(config_text);
        auto& recorded = j[std::string(kBenchSwitchesKey)] = nlohmann::json::object();
        std::string set;
        for (const auto& [name, value] : switches) {
            recorded[name] = value;
            set += (set.empty() ? "" : ", ") + name + "=" + value;
        }
        // An environment's value need not be UTF-8: such bytes are written as U+FFFD.
        config_text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        const bool one = switches.size() == 1;
        switches_note_ = set + (one ? " is set: a benchmark switch" : " are set: benchmark switches") +
                         " that change" + (one ? "s" : "") +
                         " how the CNN's gradient checkpointing runs; recorded in " + kRunRecordFile + " (\"" +
                         std::string(kBenchSwitchesKey) + "\")";
    }
    std::string why;
    if (!write_file_atomically((dir / kRunRecordFile).string(), config_text, &why)) {
        error = "--output-dir: " + why;
        return false;
    }
    tensorboard_.reset();
    if (config.report_to == "tensorboard") {
        if (config.output_dir.empty()) {
            error = "--report-to tensorboard: needs a run directory (--output-dir) for its event files";
            return false;
        }
        try {
            tensorboard_ = std::make_unique<tensorboard::EventWriter>(config);
        } catch (const WriteError& e) {
            error = std::string("--report-to tensorboard: ") + e.what();
            return false;
        }
    }
    return true;
}

void RunWriter::write(const std::string& line) {
    if (metrics_path_.empty() || failed_) return;
    try {
        io::append_to_file(metrics_path_, line + '\n');
    } catch (const WriteError&) {
        failed_ = true; // the run ends with this error; what follows is not written
        throw;
    }
}

void RunWriter::on_micro_step(const MicroStepRecord& r) { write(to_json_line(r)); }
void RunWriter::on_step(const StepRecord& r) {
    write(to_json_line(r));
    if (tensorboard_) tensorboard_->on_step(r);
}
void RunWriter::on_eval(const EvalRecord& r) {
    write(to_json_line(r));
    if (tensorboard_) tensorboard_->on_eval(r);
}
void RunWriter::on_memory(const MemoryRecord& r) { write(to_json_line(r)); }

void RunWriter::on_detail(const std::string& text) {
    if (directory_.empty()) return;
    try {
        io::append_to_file((fs::path(directory_) / "log.txt").string(), text + '\n');
    } catch (const WriteError&) {
    }
}

void RunWriter::on_summary(const SummaryRecord& r) {
    // The run is over: a failure here is reported (summary_error), not thrown.
    const auto line = to_json_line(r);
    try {
        if (!metrics_path_.empty()) {
            io::append_to_file(metrics_path_, line + '\n');
            io::sync_file(metrics_path_);
        }
    } catch (const WriteError& e) {
        summary_error_ = e.what();
    }
    if (tensorboard_) {
        tensorboard_->on_summary(r);
        const auto& tb_error = static_cast<const tensorboard::EventWriter&>(*tensorboard_).summary_error();
        if (summary_error_.empty() && !tb_error.empty()) summary_error_ = tb_error;
    }
    if (directory_.empty()) return;
    std::string why;
    if (!write_file_atomically((fs::path(directory_) / "summary.json").string(), line + "\n", &why) &&
        summary_error_.empty())
        summary_error_ = why;
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
