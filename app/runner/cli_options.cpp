#include "runner/cli_options.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

namespace accum::cli {

namespace {

bool to_int(const std::string& text, std::int64_t& out) {
    const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && r.ec == std::errc() && r.ptr == text.data() + text.size();
}

bool to_double(const std::string& text, double& out) {
    if (text.empty()) return false;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
    return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

struct Option {
    std::string help;
    bool takes_value = true;
    std::function<bool(RunConfig&, const std::string&, std::string&)> apply;
};

Option text(std::string help, std::string RunConfig::*member) {
    return {std::move(help), true, [member](RunConfig& c, const std::string& v, std::string&) {
                c.*member = v;
                return true;
            }};
}

template <typename T>
Option integer(std::string help, T RunConfig::*member) {
    return {std::move(help), true, [member](RunConfig& c, const std::string& v, std::string& error) {
                std::int64_t n = 0;
                if (!to_int(v, n)) {
                    error = "expects a whole number, got '" + v + "'";
                    return false;
                }
                if constexpr (std::is_unsigned_v<T>) {
                    if (n < 0) {
                        error = "must not be negative, got " + v;
                        return false;
                    }
                }
                if (n < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
                    (std::is_same_v<T, int> && n > std::numeric_limits<int>::max())) {
                    error = "is out of range: " + v;
                    return false;
                }
                c.*member = static_cast<T>(n);
                return true;
            }};
}

Option real(std::string help, double RunConfig::*member) {
    return {std::move(help), true, [member](RunConfig& c, const std::string& v, std::string& error) {
                double d = 0;
                if (!to_double(v, d)) {
                    error = "expects a number, got '" + v + "'";
                    return false;
                }
                c.*member = d;
                return true;
            }};
}

Option flag(std::string help, bool RunConfig::*member, bool value) {
    return {std::move(help), false, [member, value](RunConfig& c, const std::string&, std::string&) {
                c.*member = value;
                return true;
            }};
}

const std::map<std::string, Option>& options() {
    static const std::map<std::string, Option> o{
        {"mode", text("pytorch | accelerator | trainer (default pytorch)", &RunConfig::mode)},
        {"dataset", text("fashion-mnist | synthetic-pairs | synthetic-lm | csv", &RunConfig::dataset)},
        {"data", text("data directory (fashion-mnist) or CSV file", &RunConfig::data_path)},
        {"label-column", text("CSV column that holds the labels (default label)", &RunConfig::label_column)},
        {"model", text("mlp | cnn | transformer", &RunConfig::model)},
        {"batch-norm", flag("add BatchNorm layers (pitfall demo)", &RunConfig::batch_norm, true)},
        {"scheduler-per-micro-batch", flag("pitfall demo: step the scheduler after every micro-batch (pytorch mode)", &RunConfig::scheduler_per_micro_batch, true)},
        {"dropout", real("dropout probability (default 0)", &RunConfig::dropout)},
        {"batch-size", integer("micro-batch size B (default 64)", &RunConfig::batch_size)},
        {"accumulation-steps", integer("gradient-accumulation steps K (default 4)", &RunConfig::accumulation_steps)},
        {"epochs", integer("epochs (default 3)", &RunConfig::epochs)},
        {"max-steps", integer("optimizer steps; overrides --epochs", &RunConfig::max_steps)},
        {"lr", real("learning rate (default 0.05)", &RunConfig::learning_rate)},
        {"optimizer", text("sgd | adamw", &RunConfig::optimizer)},
        {"momentum", real("SGD momentum (default 0.9)", &RunConfig::momentum)},
        {"weight-decay", real("weight decay (default 0)", &RunConfig::weight_decay)},
        {"scheduler", text("constant | linear | cosine", &RunConfig::scheduler)},
        {"warmup-steps", integer("linear warm-up, in optimizer steps", &RunConfig::warmup_steps)},
        {"max-grad-norm", real("clip the gradient norm once per window (0 = off)", &RunConfig::max_grad_norm)},
        {"skip-nonfinite", flag("skip an update whose loss or gradient is not finite instead of stopping", &RunConfig::skip_nonfinite, true)},
        {"loss-normalization", text("mean | tokens", &RunConfig::loss_normalization)},
        {"eval-strategy", text("epoch | steps | no", &RunConfig::eval_strategy)},
        {"eval-steps", integer("evaluate every N optimizer steps", &RunConfig::eval_steps)},
        {"logging-steps", integer("log every N optimizer steps (default 10)", &RunConfig::logging_steps)},
        {"save-strategy", text("epoch | steps | no (checkpoints)", &RunConfig::save_strategy)},
        {"save-steps", integer("checkpoint every N optimizer steps", &RunConfig::save_steps)},
        {"save-total-limit", integer("keep at most N checkpoints (0 = all)", &RunConfig::save_total_limit)},
        {"auto-find-batch-size", flag("on out of memory, retry with a smaller micro-batch", &RunConfig::auto_find_batch_size, true)},
        {"seed", integer("random seed (default 0)", &RunConfig::seed)},
        {"shuffle", flag("shuffle every epoch (default)", &RunConfig::shuffle, true)},
        {"no-shuffle", flag("keep the data order", &RunConfig::shuffle, false)},
        {"device", text("auto | cpu | cuda | cuda:N", &RunConfig::device)},
        {"threads", integer("intra-op threads (0 = chosen by measurement)", &RunConfig::threads)},
        {"memory-budget", text("tensor-memory budget, e.g. 512MiB (0 = none)", &RunConfig::memory_budget)},
        {"output-dir", text("where config.json, metrics.jsonl, summary.json go (default runs/<time>)", &RunConfig::output_dir)},
        {"metrics", text("metrics JSON Lines file (default <output-dir>/metrics.jsonl)", &RunConfig::metrics_file)},
        {"resume", text("continue from a checkpoint directory", &RunConfig::resume_from)},
        {"quiet", flag("print only the summary", &RunConfig::quiet, true)},
        {"micro-step-delay", real("seconds to wait after each micro-batch (teaching pace)", &RunConfig::micro_step_delay_s)},
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

std::string usage() {
    std::ostringstream out;
    out << "usage: accum-run [train] [options]\n"
           "       accum-run plan --target-batch N --memory-budget SIZE [options]\n"
           "       accum-run devices | --version | --help\n\n"
           "Trains with gradient accumulation and writes config.json, metrics.jsonl and summary.json.\n"
           "Options (also read from --config FILE.json with the same keys; flags win):\n";
    out << "  --config FILE.json\n      options as a JSON object\n";
    for (const auto& [name, o] : options())
        out << "  --" << name << (o.takes_value ? " VALUE" : "") << "\n      " << o.help << "\n";
    out << "  --target-batch N\n      (plan) effective batch to reach\n";
    out << "\nExit codes: 0 completed, 2 invalid arguments, 3 out of memory, 4 data missing or corrupt,\n"
           "5 diverged, 130 interrupted.\n";
    return out.str();
}

ParsedArguments parse_arguments(const std::vector<std::string>& args) {
    ParsedArguments parsed;
    std::size_t i = 0;
    if (!args.empty() && !args[0].empty() && args[0][0] != '-') {
        const std::string& c = args[0];
        if (c == "train" || c == "plan" || c == "devices" || c == "help")
            parsed.command = c;
        else
            parsed.problems.push_back({"command", "unknown command '" + c + "' (choose train, plan, devices)"});
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
            parsed.config = from_json_text(text, parsed.config, problems);
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
            parsed.problems.push_back({"arguments", "unexpected argument '" + arg + "' (options start with --)"});
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
        if (name == "learning-rate") name = "lr";
        if (name == "gradient-accumulation-steps") name = "accumulation-steps";
        const auto it = options().find(name);
        if (it == options().end()) {
            parsed.problems.push_back({name, "is not a known option (see accum-run --help)"});
            continue;
        }
        const Option& option = it->second;
        if (option.takes_value && !has_inline_value) {
            // "--lr --epochs 3": the value is missing, not "--epochs".
            const bool next_is_option = i + 1 < args.size() && args[i + 1].rfind("--", 0) == 0;
            if (i + 1 >= args.size() || next_is_option) {
                parsed.problems.push_back({name, "needs a value"});
                continue;
            }
            value = args[++i];
        } else if (!option.takes_value && has_inline_value) {
            parsed.problems.push_back({name, "takes no value"});
            continue;
        }
        std::string error;
        if (!option.apply(parsed.config, value, error)) parsed.problems.push_back({name, error});
    }
    if (parsed.command == "train" || parsed.command == "plan") {
        // Options that failed to parse are reported once; validation adds the rest.
        for (auto& p : validate(parsed.config)) {
            bool already = false;
            for (const auto& q : parsed.problems) already = already || q.option == p.option;
            if (!already) parsed.problems.push_back(p);
        }
    }
    if (parsed.command == "plan" && parsed.target_batch <= 0)
        parsed.problems.push_back({"target-batch", "plan needs --target-batch N (the effective batch to reach)"});
    return parsed;
}

} // namespace accum::cli
