#include "runner/cli_options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "accum/config_text.h"
#include "accum/noise_scale_advice.h"
#include "accum/option_table.h"
#include "accum/records.h"
#include "accum/run_directory.h"
#include "accum/run_writer.h"

namespace accum::cli {

namespace {

// A run made with benchmark switches set records them in its accum_config.json beside
// the options (RunWriter, kBenchSwitchesKey). They are no options (switches are
// read from the environment only), so --config takes them out, and notes each
// that this process's environment does not set alike: the run would not be the
// recorded one. A text that is not a JSON object is left to from_json_text to name.
std::string without_bench_switches(const std::string& text, const std::string& file, std::vector<std::string>& notes) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
        return text;
    }
    const std::string key(kBenchSwitchesKey);
    if (!j.is_object() || !j.contains(key) || !j[key].is_object()) return text;
    for (const auto& [name, value] : j[key].items()) {
        const std::string recorded = value.is_string() ? value.get<std::string>() : value.dump();
        const char* here = std::getenv(name.c_str());
        if (here != nullptr && recorded == here) continue;
        notes.push_back(file + " records " + name + "=" + recorded + " (\"" + key +
                        "\"), a benchmark switch of the run that wrote it; switches are read from the "
                        "environment only, and here " +
                        (here != nullptr ? name + "=" + here : name + " is not set"));
    }
    j.erase(key);
    return j.dump();
}

bool to_int(const std::string& text, std::int64_t& out) {
    const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && r.ec == std::errc() && r.ptr == text.data() + text.size();
}

bool to_double(const std::string& text, double& out) {
    char* end = nullptr;
    out = std::strtod(text.c_str(), &end);
    return !text.empty() && end == text.c_str() + text.size();
}

// The command line's options are the engine's one option table (accum/option_table.h):
// a value option sets the config key of its name through accum::set_option (the
// same checks as the JSON form), a switch sets the key its row names, and the
// runner's own rows are read here (runner_option). --help, the manual page and
// the bash completion are made from the same rows (program_doc).
OptionDoc doc_of(const OptionRow& row) {
    const auto complete = row.complete == OptionRow::Complete::File        ? OptionDoc::Complete::File
                          : row.complete == OptionRow::Complete::Directory ? OptionDoc::Complete::Directory
                                                                           : OptionDoc::Complete::Nothing;
    return {{row.name}, row.metavar, row.help, row.values, complete, row.file_extension};
}

// A runner's row (OptionRow::Role::Runner): what it sets in `parsed`.
void runner_option(ParsedArguments& parsed, const std::string& name, const std::string& value, bool has_inline_value) {
    if (name == "config") return; // read by the first pass: the options given beside it win
    if (name == "noise-scale-from") {
        std::string error;
        if (const auto measured = read_noise_scale(value, error)) parsed.noise_scale = *measured;
        else parsed.problems.push_back({name, error});
    } else if (name == "noise-scale") {
        if (!to_double(value, parsed.noise_scale) || !std::isfinite(parsed.noise_scale) || parsed.noise_scale <= 0)
            parsed.problems.push_back({name, "expects a positive number of samples, got '" + value + "'"});
    } else if (name == "target-batch") {
        if (!to_int(value, parsed.target_batch) || parsed.target_batch <= 0)
            parsed.problems.push_back({name, "expects a positive whole number, got '" + value + "'"});
    } else if (name == "json") {
        if (has_inline_value) parsed.problems.push_back({name, "takes no value"});
        else if (parsed.command != "estimate")
            parsed.problems.push_back({name, "only applies to accum-run estimate"});
        parsed.json = true;
    } else {
        parsed.problems.push_back({name, "is a row of the option table that accum-run does not read (a bug: please report it)"});
    }
}

std::string read_file(const std::string& path, std::string& error) {
    std::ifstream in(path);
    if (!in) {
        error = "cannot open " + path;
        return {};
    }
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

ProgramDoc program_doc() {
    ProgramDoc doc;
    doc.name = "accum-run";
    doc.summary = "train a model with gradient accumulation, headless";
    doc.synopsis = {"[train] [options]", "plan --target-batch N --memory-budget SIZE [options]",
                    "plan --target-batch N --noise-scale N | --noise-scale-from DIR [--memory-budget SIZE] [options]",
                    "estimate [--json] [options]", "devices | --version | --help"};
    doc.commands = {"train", "plan", "estimate", "devices"};
    doc.description = {
        "Trains with gradient accumulation and writes accum_config.json (the run's options), metrics.jsonl and\n"
        "summary.json.\n"
        "plan proposes a micro-batch and K (with or without gradient checkpointing) under a memory budget,\n"
        "and weighs the target effective batch against a measured gradient noise scale;\n"
        "estimate predicts the run's memory by category without training."};
    OptionSection section{"Options", "also read from --config FILE.json with the same keys; flags win", {}};
    for (const auto& row : option_table()) section.options.push_back(doc_of(row));
    doc.sections = {section};
    doc.exit_codes = {{exit_code::completed, "completed"},
                      {exit_code::failure, "internal error (a bug: please report it)"},
                      {exit_code::invalid_arguments, "invalid arguments"},
                      {exit_code::out_of_memory, "out of memory"},
                      {exit_code::data_error, "data missing or corrupt, or a checkpoint that cannot be resumed"},
                      {exit_code::diverged, "diverged"},
                      {exit_code::distributed_failure,
                       "distributed failure (a peer lost, a rendezvous timed out, a port in use)"},
                      {exit_code::write_failed,
                       "a file of the run could not be written (disk full, I/O error, read-only or vanished "
                       "directory; the message names the file and the reason)"},
                      {exit_code::interrupted, "interrupted"}};
    return doc;
}

std::string usage() {
    const ProgramDoc doc = program_doc();
    std::ostringstream out;
    for (std::size_t i = 0; i < doc.synopsis.size(); ++i)
        out << (i == 0 ? "usage: " : "       ") << doc.name << " " << doc.synopsis[i] << "\n";
    for (const auto& paragraph : doc.description) out << "\n" << paragraph << "\n";
    for (const auto& section : doc.sections) {
        out << section.title << (section.note.empty() ? "" : " (" + section.note + ")") << ":\n";
        for (const auto& o : section.options)
            out << "  --" << o.names.at(0) << (o.metavar.empty() ? "" : " " + o.metavar) << "\n      " << o.help << "\n";
    }
    // The exit codes as one paragraph, wrapped before 100 columns.
    std::string line = "Exit codes:";
    out << "\n";
    for (std::size_t i = 0; i < doc.exit_codes.size(); ++i) {
        std::istringstream words(std::to_string(doc.exit_codes[i].first) + " " + doc.exit_codes[i].second +
                                 (i + 1 < doc.exit_codes.size() ? "," : "."));
        for (std::string w; words >> w;) {
            if (line.size() + 1 + w.size() > 100) {
                out << line << "\n";
                line.clear();
            }
            line += (line.empty() ? "" : " ") + w;
        }
    }
    out << line << "\n";
    return out.str();
}

ParsedArguments parse_arguments(const std::vector<std::string>& args) {
    ParsedArguments parsed;
    std::size_t i = 0;
    if (!args.empty() && !args[0].empty() && args[0][0] != '-') {
        const std::string& c = args[0];
        if (c == "train" || c == "plan" || c == "estimate" || c == "devices" || c == "help")
            parsed.command = c;
        else
            parsed.problems.push_back({"", "unknown command '" + c + "' (choose train, plan, estimate, devices)"});
        i = 1;
    }
    // First pass: find --config, so that flags override the file (and --resume,
    // whose run's record stands in for a --config not given).
    std::string resume_arg;
    for (std::size_t j = i; j < args.size(); ++j) {
        const std::string& a = args[j];
        if (a == "--resume" && j + 1 < args.size()) resume_arg = args[j + 1];
        if (a.rfind("--resume=", 0) == 0) resume_arg = a.substr(9);
        if (a == "--config" || a.rfind("--config=", 0) == 0) {
            const bool inline_value = a != "--config";
            if (inline_value ? a.size() == 9 : j + 1 >= args.size() || args[j + 1].rfind("--", 0) == 0) {
                parsed.problems.push_back({"config", "needs a file name"});
                break;
            }
            parsed.config_file = inline_value ? a.substr(9) : args[j + 1];
        }
    }
    // --resume without --config continues the run with the options of its own
    // record (accum_config.json, or an older run's config.json); those given here win.
    const bool resume_alone = parsed.config_file.empty() && !resume_arg.empty() && parsed.command == "train";
    std::string record_dir;
    if (resume_alone) parsed.config_file = run_record_for_resume(resume_arg);
    if (resume_alone && !parsed.config_file.empty()) {
        record_dir = std::filesystem::path(parsed.config_file).parent_path().string();
        parsed.record_note = "--resume " + resume_arg + " without --config: the run's options are its record's, " +
                             parsed.config_file + " (options given here win)";
    }
    if (!parsed.config_file.empty()) {
        std::string error;
        const std::string text = read_file(parsed.config_file, error);
        if (!error.empty())
            parsed.problems.push_back({"config", error});
        else if (is_model_config(text))
            parsed.problems.push_back({"config", parsed.config_file + " is a model's config (it names \"model_type\" "
                                                 "or \"architectures\"), not a run's options; a run directory keeps "
                                                 "those in " + kRunRecordFile});
        else {
            std::vector<ConfigProblem> problems;
            std::vector<std::string> ignored;
            parsed.config = read_config_text(without_bench_switches(text, parsed.config_file, parsed.notes),
                                             parsed.config, problems, ignored);
            if (const auto note = ignored_fields_note(ignored); !note.empty())
                parsed.notes.push_back(parsed.config_file + ": " + note);
            for (auto& p : problems) {
                p.message += " [" + parsed.config_file + "]";
                parsed.problems.push_back(p);
            }
        }
    }

    const std::size_t from_command_line = parsed.problems.size(); // the config file's come first
    std::set<std::string> given; // the options named on the command line
    std::map<std::string, std::string> typed_as; // an option given under an alias: the alias
    for (; i < args.size(); ++i) {
        std::string arg = args[i];
        if (arg == "--help" || arg == "-h") {
            parsed.command = "help";
            continue;
        }
        if (arg == "--version") {
            parsed.command = "version";
            continue;
        }
        if (arg.rfind("--", 0) != 0) {
            // "--gradient-checkpointing yes": the word belongs to the switch before it.
            const std::string previous = i > 0 ? args[i - 1] : std::string();
            const OptionRow* switch_row = previous.rfind("--", 0) == 0 && previous.find('=') == std::string::npos
                                              ? find_option_row(previous.substr(2))
                                              : nullptr;
            if (switch_row && !switch_row->takes_value())
                parsed.problems.push_back({switch_row->name, "takes no value (a switch: it applies when given alone), got '" +
                                                                 arg + "'"});
            else
                parsed.problems.push_back({"", "unexpected argument '" + arg + "' (options start with --)"});
            continue;
        }
        std::string name = arg.substr(2), value;
        bool has_inline_value = false;
        if (const auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
            has_inline_value = true;
        }
        const OptionRow* row = find_option_row(name);
        if (!row) {
            given.insert(name);
            parsed.problems.push_back({name, "is not a known option (see accum-run --help)"});
            continue;
        }
        typed_as[row->name] = name; // the last spelling given
        name = row->name; // an alias (--learning-rate, the Python spelling) as its option
        const bool runner = row->role == OptionRow::Role::Runner;
        if (!runner) given.insert(name);
        if (row->takes_value() && !has_inline_value) {
            // "--lr --epochs 3": the value is missing, not "--epochs".
            const bool next_is_option = i + 1 < args.size() && args[i + 1].rfind("--", 0) == 0;
            if (i + 1 >= args.size() || next_is_option) {
                if (name != "config") parsed.problems.push_back({name, "needs a value"}); // the first pass said it
                continue;
            }
            value = args[++i];
        }
        if (runner) {
            runner_option(parsed, name, value, has_inline_value);
            continue;
        }
        if (!row->takes_value() && has_inline_value) {
            parsed.problems.push_back({name, "takes no value"});
            continue;
        }
        std::string error;
        const bool ok = row->takes_value() ? set_option(parsed.config, name, value, error)
                                           : set_option(parsed.config, row->sets_key, row->sets_value, error);
        if (!ok) parsed.problems.push_back({name, error});
    }
    if (!record_dir.empty()) {
        // The run continues in its own directory, wherever its record says it was
        // started from; its start's --overwrite-output-dir is no part of resuming.
        if (!given.count("output-dir")) parsed.config.output_dir = record_dir;
        if (!given.count("overwrite-output-dir")) parsed.config.overwrite_output_dir = false;
        // A strategy given here without its step count: the record's count was
        // for the record's strategy, and goes with it.
        if (given.count("save-strategy") && !given.count("save-steps") && parsed.config.save_strategy != Strategy::Steps)
            parsed.config.save_steps = 0;
        if (given.count("eval-strategy") && !given.count("eval-steps") && parsed.config.eval_strategy != Strategy::Steps)
            parsed.config.eval_steps = 0;
    } else if (resume_alone && std::all_of(given.begin(), given.end(), [](const std::string& n) {
                   const OptionRow* row = find_option_row(n);
                   return row && !row->shapes_training; // where the run writes and how it shows
               })) {
        // Nothing says what the run was: the defaults would train another run.
        parsed.problems.push_back(
            {"resume", resume_arg + " holds no run record (" + kRunRecordFile + ", or an older run's " +
                           kOlderRunRecordFile + " that is not a model's config) to take the run's options from; "
                           "give them as the run was started: --config FILE --resume " + resume_arg +
                           ", or its options on the command line"});
    }
    if (parsed.command == "train" || parsed.command == "plan" || parsed.command == "estimate") {
        // Options that failed to parse are reported once; validation adds the rest.
        for (auto& p : validate(parsed.config)) {
            bool already = false;
            for (const auto& q : parsed.problems) already = already || q.option == p.option;
            if (!already) parsed.problems.push_back(p);
        }
    }
    const bool target_reported = std::any_of(parsed.problems.begin(), parsed.problems.end(),
                                             [](const ConfigProblem& p) { return p.option == "target-batch"; });
    if (parsed.command == "plan" && parsed.target_batch <= 0 && !target_reported)
        parsed.problems.push_back({"target-batch", "plan needs --target-batch N (the effective batch to reach)"});
    // A problem of the command line's is named as the person typed it, the
    // option's own name beside an alias (a config file's keep the file's names).
    for (auto p = parsed.problems.begin() + static_cast<std::ptrdiff_t>(from_command_line); p != parsed.problems.end(); ++p)
        if (const auto typed = typed_as.find(p->option); typed != typed_as.end() && typed->second != p->option)
            p->option = typed->second + " (--" + p->option + ")";
    return parsed;
}

} // namespace accum::cli
// SPDX-License-Identifier: GPL-3.0-or-later
