#include "runner/cli_options.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "accum/config_text.h"
#include "accum/run_writer.h"

namespace accum::cli {

namespace {

// A run made with benchmark switches set records them in its config.json beside
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

// The command line's options: a help text each. A value option sets the config
// key of its name through accum::set_option (the same table and checks as the
// JSON form); a flag sets a true/false key.
struct Option {
    std::string help;
    const char* flag_key = nullptr;   // set for flags: the key they set...
    const char* flag_value = "true";  // ...and to what
    bool takes_value() const { return flag_key == nullptr; }
};

Option value(std::string help) { return {std::move(help)}; }
// An enumerated option: its values, from the option table, then what it does.
template <typename E>
Option choice(const std::string& help) {
    std::string names;
    for (const auto& n : choice_names<E>()) names += (names.empty() ? "" : " | ") + n;
    return {names + (help.empty() ? "" : " (" + help + ")")};
}
Option flag(std::string help, const char* key, const char* to = "true") { return {std::move(help), key, to}; }

const std::map<std::string, Option>& options() {
    static const std::map<std::string, Option> o{
        {"mode", choice<Mode>("default pytorch")},
        {"dataset", choice<DatasetKind>("default fashion-mnist")},
        {"data", value("data directory (fashion-mnist), CSV file (csv) or file of named tensors, .pt or "
                       ".safetensors (tensors; a .safetensors file is mapped, not read)")},
        {"label-column", value("CSV column that holds the labels (default label)")},
        {"model", value("mlp | cnn | transformer | FILE.pt: a TorchScript module made with torch.jit.script or "
                        "torch.jit.trace (default mlp)")},
        {"batch-norm", flag("add BatchNorm layers (pitfall demo)", "batch-norm")},
        {"scheduler-per-micro-batch", flag("pitfall demo: step the scheduler after every micro-batch (pytorch mode)",
                                           "scheduler-per-micro-batch")},
        {"dropout", value("dropout probability (default 0)")},
        {"transformer-layers", value("encoder layers of the transformer (default 2)")},
        {"batch-size", value("micro-batch size B (default 64)")},
        {"accumulation-steps", value("gradient-accumulation steps K (default 4)")},
        {"epochs", value("epochs (default 3)")},
        {"max-steps", value("optimizer steps; overrides --epochs")},
        {"gradient-checkpointing", flag("recompute each layer's (block's) activations in backward instead of keeping them",
                                        "gradient-checkpointing")},
        {"lr", value("learning rate (default 0.05)")},
        {"optimizer", choice<OptimizerKind>("default sgd")},
        {"momentum", value("SGD momentum (default 0.9)")},
        {"weight-decay", value("weight decay (default 0)")},
        {"scheduler", choice<SchedulerKind>("default constant")},
        {"warmup-steps", value("linear warm-up, in optimizer steps")},
        {"warmup-ratio", value("with --warmup-steps 0: warm up over ceil(R x the run's optimizer steps)")},
        {"max-grad-norm", value("clip the gradient norm once per window (0 = off)")},
        {"skip-nonfinite", flag("skip an update whose loss or gradient is not finite instead of stopping", "skip-nonfinite")},
        {"mixed-precision", choice<MixedPrecision>("default no; the forward under autocast; fp16 needs CUDA")},
        {"bf16", flag("the Trainer's bf16=True: --mixed-precision bf16", "mixed-precision", "bf16")},
        {"fp16", flag("the Trainer's fp16=True: --mixed-precision fp16", "mixed-precision", "fp16")},
        {"loss-scaling", choice<LossScaling>("default none; dynamic scales the loss as GradScaler (on for fp16)")},
        {"loss-scale-init", value("the loss scaler's first scale (default 65536 = 2^16)")},
        {"scaler-per-micro-batch", flag("pitfall demo: unscale_ and update() the loss scaler after every micro-batch",
                                        "scaler-per-micro-batch")},
        {"loss-normalization", choice<LossNormalization>("default mean; tokens divides by the window's label tokens")},
        {"eval-strategy", choice<Strategy>("default epoch")},
        {"eval-steps", value("evaluate every N optimizer steps")},
        {"logging-steps", value("log every N optimizer steps (default 10)")},
        {"save-strategy", choice<Strategy>("checkpoints; default epoch; the last step is always saved, unless no")},
        {"save-steps", value("checkpoint every N optimizer steps")},
        {"save-total-limit", value("keep at most N checkpoints (0 = all)")},
        {"auto-find-batch-size", flag("on out of memory, retry with a smaller micro-batch", "auto-find-batch-size")},
        {"seed", value("random seed (default 0)")},
        {"shuffle", flag("shuffle every epoch (default)", "shuffle")},
        {"no-shuffle", flag("keep the data order", "shuffle", "false")},
        {"device", value("auto | cpu | cuda | cuda:N")},
        {"threads", value("threads for the run, kept (0 = chosen by measurement, adapted to other programs' load)")},
        {"cpu-kernels", choice<CpuKernels>("default fused: the engine's CPU kernels; aten: LibTorch's operators")},
        {"memory-budget", value("tensor-memory budget, e.g. 512MiB (0 = none)")},
        {"output-dir", value("where config.json, metrics.jsonl, summary.json go (default runs/<time>)")},
        {"overwrite-output-dir", flag("replace the run already in --output-dir (its files and checkpoints)",
                                      "overwrite-output-dir")},
        {"metrics", value("metrics JSON Lines file (default <output-dir>/metrics.jsonl)")},
        {"resume", value("continue from a checkpoint directory")},
        {"nproc-per-node", value("processes on this machine, data parallel like torchrun (default 1)")},
        {"nnodes", value("machines in a data-parallel run (default 1)")},
        {"node-rank", value("this machine's index among --nnodes (default 0)")},
        {"master-addr", value("host of rank 0 (default 127.0.0.1)")},
        {"master-port", value("port of rank 0's rendezvous (default 29500)")},
        {"backend", choice<Backend>("default auto: NCCL on CUDA where the build has it, else Gloo")},
        {"dist-timeout", value("seconds a rendezvous or an all-reduce may wait for a peer (default 60)")},
        {"sync-each-micro-batch", flag("pitfall demo: all-reduce the gradients after every backward, not once per window",
                                       "sync-each-micro-batch")},
        {"quiet", flag("print only the summary", "quiet")},
        {"micro-step-delay", value("seconds to wait after each micro-batch (teaching pace)")},
        {"report-to", value("none | tensorboard (default none; tensorboard: also TensorBoard event files, with the "
                            "Trainer's tags, in <output-dir>/runs/)")},
        {"disable-tqdm", flag("no progress bar on a terminal (the log's lines instead)", "disable-tqdm")},
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

// The placeholder --help shows for an option's value. The man page and the bash
// completion are generated from --help and read it: FILE, PATH and FILE.json
// complete file names, DIR directories. Options not listed show VALUE.
std::string metavar(const std::string& option) {
    static const std::map<std::string, std::string> m{
        {"mode", "MODE"},           {"dataset", "DATASET"},       {"data", "PATH"},
        {"label-column", "NAME"},   {"model", "MODEL"},           {"dropout", "P"},
        {"transformer-layers", "N"},
        {"batch-size", "B"},        {"accumulation-steps", "K"},  {"epochs", "N"},
        {"max-steps", "N"},         {"lr", "RATE"},               {"optimizer", "OPTIMIZER"},
        {"momentum", "M"},          {"weight-decay", "W"},        {"scheduler", "SCHEDULER"},
        {"warmup-steps", "N"},      {"max-grad-norm", "NORM"},    {"loss-normalization", "MODE"},
        {"eval-strategy", "WHEN"},  {"eval-steps", "N"},          {"logging-steps", "N"},
        {"save-strategy", "WHEN"},  {"save-steps", "N"},          {"save-total-limit", "N"},
        {"seed", "N"},              {"device", "DEVICE"},         {"threads", "N"},
        {"memory-budget", "SIZE"},  {"output-dir", "DIR"},        {"metrics", "FILE"},
        {"resume", "DIR"},          {"micro-step-delay", "SECONDS"}, {"warmup-ratio", "R"},
        {"report-to", "WHERE"},
    };
    const auto it = m.find(option);
    return it == m.end() ? "VALUE" : it->second;
}

} // namespace

std::string usage() {
    std::ostringstream out;
    out << "usage: accum-run [train] [options]\n"
           "       accum-run plan --target-batch N --memory-budget SIZE [options]\n"
           "       accum-run estimate [--json] [options]\n"
           "       accum-run devices | --version | --help\n\n"
           "Trains with gradient accumulation and writes config.json, metrics.jsonl and summary.json.\n"
           "plan proposes a micro-batch and K (with or without gradient checkpointing) under a memory budget;\n"
           "estimate predicts the run's memory by category without training.\n"
           "Options (also read from --config FILE.json with the same keys; flags win):\n";
    out << "  --config FILE.json\n      options as a JSON object\n";
    for (const auto& [name, o] : options())
        out << "  --" << name << (o.takes_value() ? " " + metavar(name) : "") << "\n      " << o.help << "\n";
    out << "  --target-batch N\n      (plan) effective batch to reach\n";
    out << "  --json\n      (estimate) print the estimate as a JSON object\n";
    out << "\nExit codes: 0 completed, 2 invalid arguments, 3 out of memory, 4 data missing or corrupt,\n"
           "5 diverged, 6 distributed failure (a peer lost, a rendezvous timed out, a port in use),\n"
           "7 a file of the run could not be written (disk full, I/O error, read-only or vanished directory;\n"
           "the message names the file and the reason), 130 interrupted.\n";
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
    // First pass: find --config, so that flags override the file.
    for (std::size_t j = i; j < args.size(); ++j) {
        const std::string& a = args[j];
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
    if (!parsed.config_file.empty()) {
        std::string error;
        const std::string text = read_file(parsed.config_file, error);
        if (!error.empty())
            parsed.problems.push_back({"config", error});
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
