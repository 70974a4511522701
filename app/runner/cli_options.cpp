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

// The command line's options: the one table the parser, --help, the manual page
// and the bash completion are made from (cli_docs.h). A value option sets the
// config key of its name through accum::set_option (the same table and checks as
// the JSON form); a flag sets a true/false key.
struct Option {
    OptionDoc doc;                    // names[0] is the option's name; metavar "" for a flag
    const char* flag_key = nullptr;   // set for flags: the key they set...
    const char* flag_value = "true";  // ...and to what
    bool takes_value() const { return flag_key == nullptr; }
};

using Complete = OptionDoc::Complete;

// A value: its placeholder in --help, what it does, and what the completion
// offers for it (file or directory names, or nothing).
Option value(std::string metavar, std::string help, Complete complete = Complete::Nothing) {
    return {OptionDoc{{}, std::move(metavar), std::move(help), {}, complete, {}}, nullptr, "true"};
}
// A value among fixed words (completed), possibly beside a free form.
Option words(std::string metavar, std::vector<std::string> values, const std::string& more, const std::string& help) {
    std::string names;
    for (const auto& n : values) names += (names.empty() ? "" : " | ") + n;
    return {OptionDoc{{}, std::move(metavar), names + more + (help.empty() ? "" : " (" + help + ")"),
                      std::move(values), Complete::Nothing, {}},
            nullptr, "true"};
}
// An enumerated option: its values, from the option table, then what it does.
template <typename E>
Option choice(std::string metavar, const std::string& help) {
    return words(std::move(metavar), choice_names<E>(), "", help);
}
Option flag(std::string help, const char* key, const char* to = "true") {
    return {OptionDoc{{}, {}, std::move(help), {}, Complete::Nothing, {}}, key, to};
}

std::map<std::string, Option> make_options() {
    std::map<std::string, Option> o{
        {"mode", choice<Mode>("MODE", "default pytorch")},
        {"dataset", choice<DatasetKind>("DATASET", "default fashion-mnist")},
        {"data", value("PATH", "data directory (fashion-mnist), CSV file (csv) or file of named tensors, .pt or "
                               ".safetensors (tensors; a .safetensors file is mapped, not read)", Complete::File)},
        {"label-column", value("NAME", "CSV column that holds the labels (default label)")},
        {"model", words("MODEL", {"mlp", "cnn", "transformer"}, " | FILE.pt: a TorchScript module made with "
                        "torch.jit.script or torch.jit.trace (default mlp)", "")},
        {"batch-norm", flag("add BatchNorm layers (pitfall demo)", "batch-norm")},
        {"scheduler-per-micro-batch", flag("pitfall demo: step the scheduler after every micro-batch (pytorch mode)",
                                           "scheduler-per-micro-batch")},
        {"dropout", value("P", "dropout probability (default 0)")},
        {"transformer-layers", value("N", "encoder layers of the transformer (default 2)")},
        {"batch-size", value("B", "micro-batch size B (default 64)")},
        {"accumulation-steps", value("K", "gradient-accumulation steps K (default 4)")},
        {"epochs", value("N", "epochs (default 3)")},
        {"max-steps", value("N", "optimizer steps; overrides --epochs")},
        {"gradient-checkpointing", flag("recompute each layer's (block's) activations in backward instead of keeping them",
                                        "gradient-checkpointing")},
        {"lr", value("RATE", "learning rate (default 0.05)")},
        {"optimizer", choice<OptimizerKind>("OPTIMIZER", "default sgd")},
        {"momentum", value("M", "SGD momentum (default 0.9)")},
        {"weight-decay", value("W", "weight decay (default 0)")},
        {"scheduler", choice<SchedulerKind>("SCHEDULER", "default constant")},
        {"warmup-steps", value("N", "linear warm-up, in optimizer steps")},
        {"warmup-ratio", value("R", "with --warmup-steps 0: warm up over ceil(R x the run's optimizer steps)")},
        {"max-grad-norm", value("NORM", "clip the gradient norm once per window (0 = off)")},
        {"skip-nonfinite", flag("skip an update whose loss or gradient is not finite instead of stopping", "skip-nonfinite")},
        {"mixed-precision", choice<MixedPrecision>("VALUE", "default no; the forward under autocast; fp16 needs CUDA")},
        {"bf16", flag("the Trainer's bf16=True: --mixed-precision bf16", "mixed-precision", "bf16")},
        {"fp16", flag("the Trainer's fp16=True: --mixed-precision fp16", "mixed-precision", "fp16")},
        {"loss-scaling", choice<LossScaling>("VALUE", "default none; dynamic scales the loss as GradScaler (on for fp16)")},
        {"loss-scale-init", value("VALUE", "the loss scaler's first scale (default 65536 = 2^16)")},
        {"scaler-per-micro-batch", flag("pitfall demo: unscale_ and update() the loss scaler after every micro-batch",
                                        "scaler-per-micro-batch")},
        {"loss-normalization", choice<LossNormalization>("MODE", "default mean; tokens divides by the window's label tokens")},
        {"eval-strategy", choice<Strategy>("WHEN", "default epoch")},
        {"eval-steps", value("N", "evaluate every N optimizer steps")},
        {"logging-steps", value("N", "log every N optimizer steps (default 10)")},
        {"save-strategy", choice<Strategy>("WHEN", "checkpoints; default epoch; the last step is always saved, unless no")},
        {"save-steps", value("N", "checkpoint every N optimizer steps")},
        {"save-total-limit", value("N", "keep at most N checkpoints (0 = all)")},
        {"auto-find-batch-size", flag("on out of memory, retry with a smaller micro-batch", "auto-find-batch-size")},
        {"seed", value("N", "random seed (default 0)")},
        {"shuffle", flag("shuffle every epoch (default)", "shuffle")},
        {"no-shuffle", flag("keep the data order", "shuffle", "false")},
        {"device", words("DEVICE", {"auto", "cpu", "cuda"}, " | cuda:N", "")},
        {"threads", value("N", "threads for the run, kept (0 = chosen by measurement, adapted to other programs' load)")},
        {"cpu-kernels", choice<CpuKernels>("VALUE", "default fused: the engine's CPU kernels; aten: LibTorch's operators")},
        {"memory-budget", value("SIZE", "tensor-memory budget, e.g. 512MiB (0 = none)")},
        {"output-dir", value("DIR", "where accum_config.json, metrics.jsonl, summary.json go (default runs/<time>)",
                             Complete::Directory)},
        {"overwrite-output-dir", flag("replace the run already in --output-dir (its files and checkpoints)",
                                      "overwrite-output-dir")},
        {"metrics", value("FILE", "metrics JSON Lines file (default <output-dir>/metrics.jsonl)", Complete::File)},
        {"resume", value("DIR", "continue from a checkpoint directory, or a run directory's newest checkpoint "
                                "(without --config: with the options of the run's record, accum_config.json)",
                         Complete::Directory)},
        {"nproc-per-node", value("VALUE", "processes on this machine, data parallel like torchrun (default 1)")},
        {"nnodes", value("VALUE", "machines in a data-parallel run (default 1)")},
        {"node-rank", value("VALUE", "this machine's index among --nnodes (default 0)")},
        {"master-addr", value("VALUE", "host of rank 0 (default 127.0.0.1)")},
        {"master-port", value("VALUE", "port of rank 0's rendezvous (default 29500)")},
        {"backend", choice<Backend>("VALUE", "default auto: NCCL on CUDA where the build has it, else Gloo")},
        {"dist-timeout", value("VALUE", "seconds a rendezvous or an all-reduce may wait for a peer (default 60)")},
        {"sync-each-micro-batch", flag("pitfall demo: all-reduce the gradients after every backward, not once per window",
                                       "sync-each-micro-batch")},
        {"quiet", flag("print only the summary", "quiet")},
        {"micro-step-delay", value("SECONDS", "seconds to wait after each micro-batch (teaching pace)")},
        {"report-to", words("WHERE", {"none", "tensorboard"}, "",
                            "default none; tensorboard: also TensorBoard event files, with the Trainer's tags, in "
                            "<output-dir>/runs/")},
        {"disable-tqdm", flag("no progress bar on a terminal (the log's lines instead)", "disable-tqdm")},
    };
    // A --model file: the values above, or a TorchScript file (.pt) or a directory on the way to one.
    o.at("model").doc.complete = Complete::File;
    o.at("model").doc.file_extension = "pt";
    for (auto& [name, option] : o) option.doc.names = {name};
    return o;
}

const std::map<std::string, Option>& options() {
    static const std::map<std::string, Option> o = make_options();
    return o;
}

// The runner's own options, which are no config keys: one per command.
const std::vector<OptionDoc>& runner_options() {
    static const std::vector<OptionDoc> o{
        {{"config"}, "FILE.json", "options as a JSON object", {}, Complete::File, {}},
        {{"target-batch"}, "N", "(plan) effective batch to reach", {}, Complete::Nothing, {}},
        {{"json"}, "", "(estimate) print the estimate as a JSON object", {}, Complete::Nothing, {}},
        {{"noise-scale"}, "N", "(plan) a measured gradient noise scale: where --target-batch sits against it",
         {}, Complete::Nothing, {}},
        {{"noise-scale-from"}, "DIR", "(plan) the noise scale a finished run measured (its summary.json)", {},
         Complete::Directory, {}},
    };
    return o;
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
    section.options.push_back(runner_options()[0]);
    for (const auto& [name, o] : options()) section.options.push_back(o.doc);
    section.options.push_back(runner_options()[1]);
    section.options.push_back(runner_options()[2]);
    section.options.push_back(runner_options()[3]);
    section.options.push_back(runner_options()[4]);
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
            if (a == "--config") {
                if (j + 1 >= args.size()) {
                    parsed.problems.push_back({"config", "needs a file name"});
                    break;
                }
                parsed.config_file = args[j + 1];
            } else {
                parsed.config_file = a.substr(9);
            }
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

    std::set<std::string> given; // the options named on the command line
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
            const auto switch_it = previous.rfind("--", 0) == 0 && previous.find('=') == std::string::npos
                                       ? options().find(previous.substr(2))
                                       : options().end();
            if (switch_it != options().end() && !switch_it->second.takes_value())
                parsed.problems.push_back({switch_it->first, "takes no value (a switch: it applies when given alone), got '" +
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
        if (name == "config") {
            if (!has_inline_value) ++i;
            continue;
        }
        if (name == "noise-scale" || name == "noise-scale-from") {
            if (!has_inline_value) {
                if (i + 1 >= args.size()) {
                    parsed.problems.push_back({name, "needs a value"});
                    continue;
                }
                value = args[++i];
            }
            std::string error;
            if (name == "noise-scale-from") {
                if (const auto measured = read_noise_scale(value, error)) parsed.noise_scale = *measured;
                else parsed.problems.push_back({name, error});
            } else if (!to_double(value, parsed.noise_scale) || !std::isfinite(parsed.noise_scale) ||
                       parsed.noise_scale <= 0) {
                parsed.problems.push_back({name, "expects a positive number of samples, got '" + value + "'"});
            }
            continue;
        }
        if (name == "target-batch") {
            if (!has_inline_value) {
                if (i + 1 >= args.size()) {
                    parsed.problems.push_back({name, "needs a value"});
                    continue;
                }
                value = args[++i];
            }
            if (!to_int(value, parsed.target_batch) || parsed.target_batch <= 0)
                parsed.problems.push_back({name, "expects a positive whole number, got '" + value + "'"});
            continue;
        }
        if (name == "json") {
            if (has_inline_value) parsed.problems.push_back({name, "takes no value"});
            else if (parsed.command != "estimate")
                parsed.problems.push_back({name, "only applies to accum-run estimate"});
            parsed.json = true;
            continue;
        }
        if (name == "learning-rate") name = "lr"; // the Python spellings, as the JSON form accepts them
        if (name == "gradient-accumulation-steps") name = "accumulation-steps";
        given.insert(name);
        const auto it = options().find(name);
        if (it == options().end()) {
            parsed.problems.push_back({name, "is not a known option (see accum-run --help)"});
            continue;
        }
        const Option& option = it->second;
        if (option.takes_value() && !has_inline_value) {
            // "--lr --epochs 3": the value is missing, not "--epochs".
            const bool next_is_option = i + 1 < args.size() && args[i + 1].rfind("--", 0) == 0;
            if (i + 1 >= args.size() || next_is_option) {
                parsed.problems.push_back({name, "needs a value"});
                continue;
            }
            value = args[++i];
        } else if (!option.takes_value() && has_inline_value) {
            parsed.problems.push_back({name, "takes no value"});
            continue;
        }
        std::string error;
        const bool ok = option.takes_value() ? set_option(parsed.config, name, value, error)
                                             : set_option(parsed.config, option.flag_key, option.flag_value, error);
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
                   // Where the run writes and how it shows, not what it trains.
                   for (const char* where : {"resume", "output-dir", "metrics", "quiet", "disable-tqdm", "device",
                                             "threads", "report-to"})
                       if (n == where) return true;
                   return false;
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
    return parsed;
}

} // namespace accum::cli
// SPDX-License-Identifier: GPL-3.0-or-later
