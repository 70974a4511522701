#include "accum/run_config.h"
#include "accum/config_text.h"
#include "accum/option_table.h"
#include "accum/run_writer.h"
#include "config_fields.h"
#include "training_arguments.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

namespace accum {

namespace {

std::string join(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) {
        if (!out.empty()) out += ", ";
        out += n;
    }
    return out;
}

// 0.05, 1e+09, nan: as a person would write the value back.
std::string num(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
}

bool valid_device(const std::string& device) {
    if (device == "auto" || device == "cpu" || device == "cuda") return true;
    if (device.rfind("cuda:", 0) != 0 || device.size() == 5) return false;
    return std::all_of(device.begin() + 5, device.end(), [](unsigned char c) { return std::isdigit(c); });
}

} // namespace

bool looks_like_model_file(const std::string& text) {
    if (text.empty()) return false;
    auto ends_with = [&](std::string_view suffix) {
        return text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    return text.find('/') != std::string::npos || ends_with(".pt") || ends_with(".pth") || ends_with(".ts") || ends_with(".pt2") ||
           ends_with(".torchscript");
}

std::int64_t builtin_train_size(DatasetKind dataset) {
    switch (dataset) {
    case DatasetKind::FashionMnist: return kFashionMnistTrainSize;
    case DatasetKind::SyntheticPairs: return kSyntheticPairsTrainSize;
    case DatasetKind::SyntheticLm: return kSyntheticLmTrainSize;
    case DatasetKind::Csv:
    case DatasetKind::Tensors: return 0;
    }
    return 0;
}

std::optional<std::int64_t> parse_byte_size(const std::string& raw) {
    std::string text;
    for (char c : raw)
        if (!std::isspace(static_cast<unsigned char>(c))) text += c;
    if (text.empty()) return std::nullopt;
    std::size_t pos = 0;
    while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.')) ++pos;
    if (pos == 0) return std::nullopt;
    const std::string number = text.substr(0, pos);
    if (std::count(number.begin(), number.end(), '.') > 1) return std::nullopt;
    std::string unit = text.substr(pos);
    std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::tolower(c); });
    static const std::map<std::string, double> units{
        {"", 1.0},          {"b", 1.0},
        {"k", 1024.0},      {"kib", 1024.0},     {"kb", 1e3},
        {"m", 1048576.0},   {"mib", 1048576.0},  {"mb", 1e6},
        {"g", 1073741824.0},{"gib", 1073741824.0},{"gb", 1e9},
        {"tib", 1099511627776.0}, {"tb", 1e12},
    };
    const auto it = units.find(unit);
    if (it == units.end()) return std::nullopt;
    double value = 0;
    try {
        value = std::stod(number);
    } catch (...) {
        return std::nullopt;
    }
    const double bytes = value * it->second;
    if (!std::isfinite(bytes) || bytes < 0 || bytes > 9.0e18) return std::nullopt;
    return static_cast<std::int64_t>(std::llround(bytes));
}

std::string format_byte_size(std::int64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (std::abs(value) >= 1024.0 && unit < 4) {
        value /= 1024.0;
        ++unit;
    }
    std::ostringstream out;
    out.setf(std::ios::fixed);
    out.precision(unit == 0 ? 0 : 1);
    out << value << ' ' << units[unit];
    return out.str();
}

RunConfig for_measurement(RunConfig c) {
    c.output_dir.clear();
    c.metrics_file.clear();
    c.resume_from.clear();
    c.record_micro_steps = false;
    c.micro_step_delay_s = 0;
    c.report_to = "none";
    c.memory_budget = "0";
    c.quiet = true;
    c.nproc_per_node = 1;
    c.nnodes = 1;
    c.node_rank = 0;
    return c;
}

std::vector<ConfigProblem> validate(const RunConfig& c) {
    std::vector<ConfigProblem> p;
    auto add = [&p](const char* option, std::string message) { p.push_back({option, std::move(message)}); };

    if (c.dataset == DatasetKind::Csv && c.data_path.empty())
        add("data", "the csv dataset needs --data FILE.csv");
    if (c.dataset == DatasetKind::Csv && c.label_column.empty())
        add("label-column", "must name the CSV column that holds the labels");
    if (c.model == ModelKind::Cnn && c.dataset != DatasetKind::FashionMnist)
        add("model", "the cnn needs image data (--dataset fashion-mnist); use mlp or transformer for " +
                         to_string(c.dataset));
    if (c.dataset == DatasetKind::Tensors && c.data_path.empty())
        add("data", "the tensors dataset needs --data FILE.pt (named tensors saved with torch.save)");
    if (c.model == ModelKind::Transformer && c.batch_norm)
        add("batch-norm", "only the mlp and cnn have a BatchNorm variant");
    if (c.model == ModelKind::File) {
        // What the engine builds into its own models cannot be added to a module that comes made.
        const std::string file = c.model_file.empty() ? std::string("a TorchScript file") : c.model_file;
        if (c.model_file.empty()) add("model", "file needs the path of the TorchScript file (--model model.pt)");
        if (c.batch_norm) add("batch-norm", "only the mlp and cnn have a BatchNorm variant; " + file + " is as it was saved");
        if (c.dropout != 0.0)
            add("dropout", "applies to the built-in models; " + file + " keeps the dropout it was saved with "
                           "(a traced module keeps it as it was in training or eval mode when traced)");
        if (c.gradient_checkpointing)
            add("gradient-checkpointing", "cannot apply to " + file + ": the engine recomputes blocks of its own "
                                          "models, and a TorchScript module's graph (or a .pt2 package's compiled "
                                          "step) runs as it was saved");
    }
    if (c.scheduler_per_micro_batch && c.mode != Mode::Pytorch)
        add("scheduler-per-micro-batch", "is a pitfall demo of the plain loop; use it with --mode pytorch "
                                         "(the Accelerator and the Trainer step the scheduler only on sync)");
    if (!(c.dropout >= 0.0 && c.dropout < 1.0))
        add("dropout", "must be in [0, 1), got " + num(c.dropout));
    if (c.transformer_layers < 1 || c.transformer_layers > 48)
        add("transformer-layers", "must be a number of encoder layers from 1 to 48, got " +
                                      std::to_string(c.transformer_layers));
    else if (c.transformer_layers != 2 && c.model != ModelKind::Transformer)
        add("transformer-layers", "only applies to --model transformer (the model is " + to_string(c.model) + ")");

    if (c.batch_size <= 0)
        add("batch-size", "must be a positive number of samples per micro-batch, got " + std::to_string(c.batch_size));
    else if (c.batch_size > 1000000)
        add("batch-size", "is absurdly large (" + std::to_string(c.batch_size) + "); use at most 1000000");
    if (c.accumulation_steps <= 0)
        add("accumulation-steps", "must be at least 1 (1 = no accumulation), got " + std::to_string(c.accumulation_steps));
    else if (c.accumulation_steps > 100000)
        add("accumulation-steps", "is absurdly large (" + std::to_string(c.accumulation_steps) + "); use at most 100000");
    if (c.epochs < 0) add("epochs", "must not be negative, got " + std::to_string(c.epochs));
    if (c.max_steps < 0) add("max-steps", "must not be negative, got " + std::to_string(c.max_steps));
    if (c.epochs == 0 && c.max_steps == 0)
        add("epochs", "set --epochs or --max-steps (both are unset), otherwise the run has no length");
    if (c.epochs > 100000) add("epochs", "is absurdly large (" + std::to_string(c.epochs) + ")");

    if (!std::isfinite(c.learning_rate) || c.learning_rate <= 0)
        add("lr", "must be a positive finite learning rate, got " + num(c.learning_rate));
    else if (c.learning_rate > 100)
        add("lr", "is absurdly large (" + num(c.learning_rate) + "); use at most 100");
    if (!std::isfinite(c.momentum) || c.momentum < 0 || c.momentum >= 1)
        add("momentum", "must be in [0, 1), got " + num(c.momentum));
    if (!std::isfinite(c.weight_decay) || c.weight_decay < 0)
        add("weight-decay", "must be zero or positive, got " + num(c.weight_decay));
    if (c.warmup_steps < 0) add("warmup-steps", "must not be negative, got " + std::to_string(c.warmup_steps));
    if (!(c.warmup_ratio >= 0 && c.warmup_ratio <= 1))
        add("warmup-ratio", "must be in [0, 1] (a share of the run's optimizer steps), got " + num(c.warmup_ratio));
    if (!std::isfinite(c.max_grad_norm) || c.max_grad_norm < 0)
        add("max-grad-norm", "must be zero (no clipping) or positive, got " + num(c.max_grad_norm));

    if (c.eval_strategy == Strategy::Steps && c.eval_steps <= 0)
        add("eval-steps", "must be positive with --eval-strategy steps, got " + std::to_string(c.eval_steps));
    if (c.eval_steps < 0) add("eval-steps", "must not be negative, got " + std::to_string(c.eval_steps));
    else if (c.eval_steps > 0 && c.eval_strategy != Strategy::Steps)
        add("eval-steps", "only applies with --eval-strategy steps (it is " + to_string(c.eval_strategy) + ")");
    if (c.save_steps > 0 && c.save_strategy != Strategy::Steps)
        add("save-steps", "only applies with --save-strategy steps (it is " + to_string(c.save_strategy) + ")");
    if (c.logging_steps <= 0)
        add("logging-steps", "must be at least 1, got " + std::to_string(c.logging_steps));
    if (c.save_strategy == Strategy::Steps && c.save_steps <= 0)
        add("save-steps", "must be positive with --save-strategy steps, got " + std::to_string(c.save_steps));
    if (c.save_total_limit < 0)
        add("save-total-limit", "must not be negative, got " + std::to_string(c.save_total_limit));

    if (!valid_device(c.device))
        add("device", "unknown device '" + c.device + "' (choose auto, cpu, cuda or cuda:N)");
    if (c.threads < 0 || c.threads > 1024)
        add("threads", "must be 0 (automatic) or a thread count up to 1024, got " + std::to_string(c.threads));
    if (!parse_byte_size(c.memory_budget))
        add("memory-budget", "cannot read '" + c.memory_budget + "' as a size (examples: 512MiB, 2GiB, 0 for none)");
    if (!std::isfinite(c.micro_step_delay_s) || c.micro_step_delay_s < 0 || c.micro_step_delay_s > 60)
        add("micro-step-delay", "must be between 0 and 60 seconds");

    if (c.mixed_precision == MixedPrecision::Fp16 && (c.device == "cpu"))
        add("mixed-precision", std::string(kFp16NeedsCuda));
    if (!std::isfinite(c.loss_scale_init) || c.loss_scale_init <= 0)
        add("loss-scale-init", "must be a positive scale, got " + num(c.loss_scale_init));
    else if (c.loss_scale_init > static_cast<double>(std::numeric_limits<float>::max()))
        add("loss-scale-init", "must fit a float32 (at most 3.4e38, e.g. 2^127 = 1.7e38), got " + num(c.loss_scale_init));
    if (c.scaler_per_micro_batch && !c.uses_loss_scaler())
        add("scaler-per-micro-batch", "is a pitfall of the loss scaler; use it with --loss-scaling dynamic");
    else if (c.scaler_per_micro_batch && c.mode != Mode::Pytorch)
        add("scaler-per-micro-batch", "is a pitfall demo of the plain loop; use it with --mode pytorch "
                                      "(the Accelerator and the Trainer unscale and update once per window)");

    if (c.nproc_per_node < 1 || c.nproc_per_node > 256)
        add("nproc-per-node", "must be a number of processes from 1 to 256, got " + std::to_string(c.nproc_per_node));
    if (c.nnodes < 1 || c.nnodes > 4096)
        add("nnodes", "must be a number of machines from 1 to 4096, got " + std::to_string(c.nnodes));
    if (c.node_rank < 0 || c.node_rank >= std::max(1, c.nnodes))
        add("node-rank", "must be from 0 to --nnodes - 1 (" + std::to_string(c.nnodes - 1) + "), got " +
                             std::to_string(c.node_rank));
    if (c.master_addr.empty()) add("master-addr", "must name the master's host (e.g. 127.0.0.1)");
    if (c.master_port < 0 || c.master_port > 65535)
        add("master-port", "must be a TCP port from 0 to 65535, got " + std::to_string(c.master_port));
    if (!std::isfinite(c.dist_timeout_s) || c.dist_timeout_s <= 0 || c.dist_timeout_s > 86400)
        add("dist-timeout", "must be a number of seconds above 0 and up to 86400, got " + num(c.dist_timeout_s));
    if (c.auto_find_batch_size && c.world_size() > 1)
        add("auto-find-batch-size", "cannot retry with a smaller micro-batch in a run of several processes "
                                    "(--nproc-per-node, --nnodes); find one with accum-run plan first");
    if (c.report_to != "none" && c.report_to != "tensorboard")
        add("report-to", "unknown value '" + c.report_to + "' (choose none, tensorboard)");
    return p;
}

// ---------------------------------------------------------------- JSON

namespace {

using nlohmann::json;

// A whole text as one number of type T (std::from_chars: no sign of '+', no spaces).
template <typename T>
bool text_to_number(const std::string& text, const char* expected, json& value, std::string& error) {
    T number{};
    const char* end = text.data() + text.size();
    const auto r = std::from_chars(text.data(), end, number);
    if (text.empty() || r.ec != std::errc() || r.ptr != end) {
        error = std::string("expects ") + expected + ", got '" + text + "'";
        return false;
    }
    value = number;
    return true;
}

// Command-line text → the JSON value the field's setter expects.
bool text_to_json(Field::Kind kind, const std::string& text, json& value, std::string& error) {
    switch (kind) {
    case Field::Kind::Text:
        value = text;
        return true;
    case Field::Kind::Boolean:
        if (text != "true" && text != "false") {
            error = "expects true or false, got '" + text + "'";
            return false;
        }
        value = text == "true";
        return true;
    case Field::Kind::Integer:
        return text_to_number<std::int64_t>(text, "a whole number", value, error);
    case Field::Kind::Real:
        return text_to_number<double>(text, "a number", value, error);
    }
    return false;
}

} // namespace

bool set_option(RunConfig& config, const std::string& key, const std::string& text, std::string& error) {
    const Field* field = find_field(key);
    if (!field) {
        error = "is not a known option";
        return false;
    }
    json value;
    if (!text_to_json(field->kind, text, value, error)) return false;
    if (field->set(config, value, error)) return true;
    if (!field->choice) error += ", got " + text;
    return false;
}

std::string to_json_text(const RunConfig& config) {
    json j = json::object();
    for (const auto& f : config_fields()) j[f.key] = f.get(config);
    return j.dump(2) + "\n";
}

RunConfig from_json_text(const std::string& text, const RunConfig& base, std::vector<ConfigProblem>& problems) {
    std::vector<std::string> ignored;
    return read_config_text(text, base, problems, ignored);
}

std::string ignored_fields_note(const std::vector<std::string>& ignored) {
    if (ignored.empty()) return {};
    return "TrainingArguments fields that do not change training, ignored: " + join(ignored);
}

RunConfig read_config_text(const std::string& text, const RunConfig& base, std::vector<ConfigProblem>& problems,
                           std::vector<std::string>& ignored) {
    return read_config_text(text, base, ConfigTextForm::Recognised, problems, ignored);
}

RunConfig read_config_text(const std::string& text, const RunConfig& base, ConfigTextForm form,
                           std::vector<ConfigProblem>& problems, std::vector<std::string>& ignored) {
    RunConfig config = base;
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) { // parse_error, or out_of_range for a number that overflows
        problems.push_back({"config", std::string("is not valid JSON: ") + e.what()});
        return config;
    }
    if (!j.is_object()) {
        problems.push_back({"config", "must hold a JSON object of option names and values"});
        return config;
    }
    // Transformers' TrainingArguments: its fields first, then any keys beside
    // them that are options (so an option in such a file wins).
    // A switch's row (bf16, no-shuffle) is an option too: a file that names one
    // beside options is not TrainingArguments, whose defaults would come with it.
    const auto is_option = [](const std::string& key) {
        const OptionRow* row = find_option_key(key);
        return row && row->role != OptionRow::Role::Runner;
    };
    const bool is_training_arguments = form == ConfigTextForm::TrainingArguments ||
                                       (form == ConfigTextForm::Recognised && training_arguments::recognise(j, is_option));
    if (form == ConfigTextForm::Options)
        for (const auto& [key, value] : j.items())
            if (training_arguments::is_field(key) && !is_option(key)) {
                problems.push_back({key, "is a field of TrainingArguments, not an option: TrainingArguments are "
                                         "read as a whole file of them (with their defaults) only where stated"});
                return config;
            }
    if (is_training_arguments) j = training_arguments::apply(j, config, problems, ignored);
    // The options the file names, by their rows' names: one named twice (an
    // alias beside it: "lr" and "learning_rate"), or a switch that sets one of
    // them (or that another switch sets), is a conflict, not an order of keys.
    std::map<std::string, std::string> named; // option → the key that names it
    for (const auto& [raw_key, value] : j.items())
        if (const OptionRow* row = find_option_key(raw_key); row && row->role == OptionRow::Role::ConfigKey)
            if (const auto [first, fresh] = named.emplace(row->name, raw_key); !fresh)
                problems.push_back({row->name, "\"" + raw_key + "\" conflicts with \"" + first->second +
                                                   "\" in the same file: both name --" + row->name});
    for (const auto& [raw_key, value] : j.items()) {
        // What a run's record (accum_config.json) holds beside the options (the
        // benchmark switches its run was made with, run_writer.h): not an option.
        if (raw_key == kBenchSwitchesKey) continue;
        const OptionRow* row = find_option_key(raw_key);
        // A switch that sets another key (TrainingArguments' bf16=True, --no-shuffle):
        // true applies it, false leaves the key as it is.
        if (row && row->role == OptionRow::Role::Flag) {
            std::string error;
            const bool on = value.is_boolean() && value.get<bool>();
            if (!value.is_boolean())
                problems.push_back({row->name, "expects true or false (in the config file, got " + value.dump() + ")"});
            else if (on && !named.emplace(row->sets_key, raw_key).second)
                problems.push_back({row->name, "conflicts with \"" + named.at(row->sets_key) +
                                                   "\" in the same file: both set " + row->sets_key});
            else if (on && !set_option(config, row->sets_key, row->sets_value, error))
                problems.push_back({row->name, error + " (in the config file)"});
            continue;
        }
        if (row && row->role == OptionRow::Role::Runner) {
            problems.push_back({row->name, "is an option of accum-run's command line, not a config key (in the config file)"});
            continue;
        }
        const Field* field = find_field(raw_key);
        if (!field) {
            problems.push_back({raw_key.empty() ? std::string("\"\"") : raw_key,
                                is_training_arguments ? "is neither a field of TrainingArguments nor an option (in the "
                                                        "config file)"
                                                      : "is not a known option (in the config file)"});
            continue;
        }
        std::string error;
        if (!field->set(config, value, error))
            problems.push_back({field->key, error + " (in the config file, got " + value.dump() + ")"});
    }
    return config;
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
