// SPDX-License-Identifier: GPL-3.0-or-later
// accum-run's one option table (accum/option_table.h): every option's name,
// aliases, help, placeholder and completion, and for a config key its field.
// The rows are in the order --help lists them: --config, the options by name,
// then plan's and estimate's own.
#include "accum/option_table.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "config_fields.h"

namespace accum {

namespace {

using nlohmann::json;
using Kind = Field::Kind;
using Complete = OptionRow::Complete;

std::string join(const std::vector<std::string>& names, const char* separator = ", ") {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : separator) + n;
    return out;
}

template <typename T>
constexpr Kind kind_of() {
    if constexpr (std::is_same_v<T, std::string> || std::is_enum_v<T>) return Kind::Text;
    else if constexpr (std::is_same_v<T, bool>) return Kind::Boolean;
    else if constexpr (std::is_floating_point_v<T>) return Kind::Real;
    else return Kind::Integer;
}

// The getter and setter of one RunConfig member; the row gives the key.
template <typename T>
Field make_field(T RunConfig::*member) {
    return Field{
        {},
        kind_of<T>(),
        [member](const RunConfig& c) {
            if constexpr (std::is_enum_v<T>) return json(to_string(c.*member));
            else return json(c.*member);
        },
        [member](RunConfig& c, const json& v, std::string& error) {
            if constexpr (std::is_same_v<T, std::string>) {
                if (!v.is_string()) { error = "expects a string"; return false; }
                c.*member = v.get<std::string>();
            } else if constexpr (std::is_enum_v<T>) {
                if (!v.is_string()) { error = "expects one of " + join(choice_names<T>()); return false; }
                const auto parsed = parse_choice<T>(v.get<std::string>());
                if (!parsed) {
                    error = "unknown value '" + v.get<std::string>() + "' (choose " + join(choice_names<T>()) + ")";
                    return false;
                }
                c.*member = *parsed;
            } else if constexpr (std::is_same_v<T, bool>) {
                if (!v.is_boolean()) { error = "expects true or false"; return false; }
                c.*member = v.get<bool>();
            } else if constexpr (std::is_floating_point_v<T>) {
                if (!v.is_number()) { error = "expects a number"; return false; }
                c.*member = v.get<T>();
            } else {
                if (!v.is_number_integer() && !v.is_number_unsigned()) {
                    error = "expects a whole number";
                    return false;
                }
                if constexpr (std::is_unsigned_v<T>) {
                    if (v.is_number_integer() && v.get<std::int64_t>() < 0) { error = "must not be negative"; return false; }
                    c.*member = v.get<T>();
                } else {
                    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
                        error = "is too large";
                        return false;
                    }
                    const auto wide = v.get<std::int64_t>();
                    if (wide < std::numeric_limits<T>::min() || wide > std::numeric_limits<T>::max()) {
                        error = "is out of range";
                        return false;
                    }
                    c.*member = static_cast<T>(wide);
                }
            }
            return true;
        },
        std::is_enum_v<T>};
}

// The built-in models' names: ModelKind's but File's, whose place a file's path takes.
std::vector<std::string> built_in_models() {
    auto names = choice_names<ModelKind>();
    names.erase(std::remove(names.begin(), names.end(), to_string(ModelKind::File)), names.end());
    return names;
}

// "model": a built-in model's name, or the path of a TorchScript file (which
// sets ModelKind::File); written back as the same.
Field model_field() {
    return Field{
        {}, Kind::Text,
        [](const RunConfig& c) { return json(c.model == ModelKind::File ? c.model_file : to_string(c.model)); },
        [](RunConfig& c, const json& v, std::string& error) {
            if (!v.is_string()) {
                error = "expects a model name or a TorchScript file";
                return false;
            }
            const auto text = v.get<std::string>();
            if (const auto kind = parse_choice<ModelKind>(text); kind && *kind != ModelKind::File) {
                c.model = *kind;
                c.model_file.clear();
                return true;
            }
            if (!looks_like_model_file(text)) {
                error = "unknown value '" + text + "' (choose " + join(built_in_models()) +
                        "), and no TorchScript file (a path with / or a name ending in .pt)";
                return false;
            }
            c.model = ModelKind::File;
            c.model_file = text;
            return true;
        },
        true};
}

// A row's documentation, without its name and role.
// A value: its placeholder, what it does, and what the completion offers for it.
OptionRow value(std::string metavar, std::string help, Complete complete = Complete::Nothing) {
    OptionRow r;
    r.metavar = std::move(metavar);
    r.help = std::move(help);
    r.complete = complete;
    return r;
}
// A value among fixed words (completed), possibly beside a free form (`more`).
OptionRow words(std::string metavar, std::vector<std::string> values, const std::string& more, const std::string& help) {
    OptionRow r = value(std::move(metavar), join(values, " | ") + more + (help.empty() ? "" : " (" + help + ")"));
    r.values = std::move(values);
    return r;
}
// An enumerated option: its values, from the enum's names, then what it does.
template <typename E>
OptionRow choice(std::string metavar, const std::string& help) {
    return words(std::move(metavar), choice_names<E>(), "", help);
}
// A switch: takes no value.
OptionRow flag(std::string help) { return value({}, std::move(help)); }

struct Entry {
    OptionRow row;
    std::optional<Field> field; // a config key's
};

// A config key: a switch among them sets itself to true.
Entry key(const char* name, Field field, OptionRow doc, std::vector<std::string> aliases = {}) {
    doc.name = name;
    doc.role = OptionRow::Role::ConfigKey;
    doc.aliases = std::move(aliases);
    if (!doc.takes_value()) {
        doc.sets_key = name;
        doc.sets_value = "true";
    }
    field.key = name;
    return {std::move(doc), std::move(field)};
}
template <typename T>
Entry key(const char* name, T RunConfig::*member, OptionRow doc, std::vector<std::string> aliases = {}) {
    return key(name, make_field(member), std::move(doc), std::move(aliases));
}
// A switch that sets another key to a value.
Entry sets(const char* name, const char* key, const char* to, std::string help) {
    OptionRow r = flag(std::move(help));
    r.name = name;
    r.role = OptionRow::Role::Flag;
    r.sets_key = key;
    r.sets_value = to;
    return {std::move(r), std::nullopt};
}
// accum-run's own (runner/cli_options.cpp reads it).
Entry runner(const char* name, OptionRow doc) {
    doc.name = name;
    doc.role = OptionRow::Role::Runner;
    return {std::move(doc), std::nullopt};
}

// Where a run writes or how it shows, not what it trains (OptionRow::shapes_training).
Entry setting(Entry e) {
    e.row.shapes_training = false;
    return e;
}

const std::vector<Entry>& entries() {
    using R = RunConfig;
    static const std::vector<Entry> e{
        runner("config", value("FILE.json", "options as a JSON object", Complete::File)),
        key("accumulation-steps", &R::accumulation_steps, value("K", "gradient-accumulation steps K (default 4)"),
            {"gradient-accumulation-steps"}),
        key("auto-find-batch-size", &R::auto_find_batch_size, flag("on out of memory, retry with a smaller micro-batch")),
        key("backend", &R::backend, choice<Backend>("VALUE", "default auto: NCCL on CUDA where the build has it, else Gloo")),
        key("batch-norm", &R::batch_norm, flag("add BatchNorm layers (pitfall demo)")),
        key("batch-size", &R::batch_size, value("B", "micro-batch size B (default 64)")),
        sets("bf16", "mixed-precision", "bf16", "the Trainer's bf16=True: --mixed-precision bf16"),
        key("cpu-kernels", &R::cpu_kernels,
            choice<CpuKernels>("VALUE", "default fused: the engine's CPU kernels; aten: LibTorch's operators")),
        key("data", &R::data_path,
            value("PATH", "data directory (fashion-mnist), CSV file (csv) or file of named tensors, .pt or "
                          ".safetensors (tensors; a .safetensors file is mapped, not read)", Complete::File)),
        key("dataset", &R::dataset, choice<DatasetKind>("DATASET", "default fashion-mnist")),
        setting(key("device", &R::device, words("DEVICE", {"auto", "cpu", "cuda"}, " | cuda:N", ""))),
        setting(key("disable-tqdm", &R::disable_tqdm, flag("no progress bar on a terminal (the log's lines instead)"))),
        key("dist-timeout", &R::dist_timeout_s,
            value("VALUE", "seconds a rendezvous or an all-reduce may wait for a peer (default 60)")),
        key("dropout", &R::dropout, value("P", "dropout probability (default 0)")),
        key("epochs", &R::epochs, value("N", "epochs (default 3)")),
        key("eval-steps", &R::eval_steps, value("N", "evaluate every N optimizer steps")),
        key("eval-strategy", &R::eval_strategy, choice<Strategy>("WHEN", "default epoch")),
        sets("fp16", "mixed-precision", "fp16", "the Trainer's fp16=True: --mixed-precision fp16"),
        key("gradient-checkpointing", &R::gradient_checkpointing,
            flag("recompute each layer's (block's) activations in backward instead of keeping them")),
        key("label-column", &R::label_column, value("NAME", "CSV column that holds the labels (default label)")),
        key("logging-steps", &R::logging_steps, value("N", "log every N optimizer steps (default 10)")),
        key("loss-normalization", &R::loss_normalization,
            choice<LossNormalization>("MODE", "default mean; tokens divides by the window's label tokens")),
        key("loss-scale-init", &R::loss_scale_init, value("VALUE", "the loss scaler's first scale (default 65536 = 2^16)")),
        key("loss-scaling", &R::loss_scaling,
            choice<LossScaling>("VALUE", "default none; dynamic scales the loss as GradScaler (on for fp16)")),
        key("lr", &R::learning_rate, value("RATE", "learning rate (default 0.05)"), {"learning-rate"}),
        key("master-addr", &R::master_addr, value("VALUE", "host of rank 0 (default 127.0.0.1)")),
        key("master-port", &R::master_port, value("VALUE", "port of rank 0's rendezvous (default 29500)")),
        key("max-grad-norm", &R::max_grad_norm, value("NORM", "clip the gradient norm once per window (0 = off)")),
        key("max-steps", &R::max_steps, value("N", "optimizer steps; overrides --epochs")),
        key("memory-budget", &R::memory_budget, value("SIZE", "tensor-memory budget, e.g. 512MiB (0 = none)")),
        setting(key("metrics", &R::metrics_file,
            value("FILE", "metrics JSON Lines file (default <output-dir>/metrics.jsonl)", Complete::File))),
        key("micro-step-delay", &R::micro_step_delay_s,
            value("SECONDS", "seconds to wait after each micro-batch (teaching pace)")),
        key("mixed-precision", &R::mixed_precision,
            choice<MixedPrecision>("VALUE", "default no; the forward under autocast; fp16 needs CUDA")),
        key("mode", &R::mode, choice<Mode>("MODE", "default pytorch")),
        // The values above, or a TorchScript file (.pt) or a directory on the way to one.
        key("model", model_field(), [] {
            OptionRow r = words("MODEL", built_in_models(),
                                " | FILE.pt: a TorchScript module made with torch.jit.script or torch.jit.trace "
                                "(default mlp)", "");
            r.complete = Complete::File;
            r.file_extension = "pt";
            return r;
        }()),
        key("momentum", &R::momentum, value("M", "SGD momentum (default 0.9)")),
        key("nnodes", &R::nnodes, value("VALUE", "machines in a data-parallel run (default 1)")),
        sets("no-shuffle", "shuffle", "false", "keep the data order"),
        key("node-rank", &R::node_rank, value("VALUE", "this machine's index among --nnodes (default 0)")),
        key("nproc-per-node", &R::nproc_per_node,
            value("VALUE", "processes on this machine, data parallel like torchrun (default 1)")),
        key("optimizer", &R::optimizer, choice<OptimizerKind>("OPTIMIZER", "default sgd")),
        setting(key("output-dir", &R::output_dir,
            value("DIR", "where accum_config.json, metrics.jsonl, summary.json go (default runs/<time>)",
                  Complete::Directory))),
        key("overwrite-output-dir", &R::overwrite_output_dir,
            flag("replace the run already in --output-dir (its files and checkpoints)")),
        setting(key("quiet", &R::quiet, flag("print only the summary"))),
        setting(key("report-to", &R::report_to,
            words("WHERE", {"none", "tensorboard"}, "",
                  "default none; tensorboard: also TensorBoard event files, with the Trainer's tags, in "
                  "<output-dir>/runs/"))),
        setting(key("resume", &R::resume_from,
            value("DIR", "continue from a checkpoint directory, or a run directory's newest checkpoint "
                         "(without --config: with the options of the run's record, accum_config.json)",
                  Complete::Directory))),
        key("save-steps", &R::save_steps, value("N", "checkpoint every N optimizer steps")),
        key("save-strategy", &R::save_strategy,
            choice<Strategy>("WHEN", "checkpoints; default epoch; the last step is always saved, unless no")),
        key("save-total-limit", &R::save_total_limit, value("N", "keep at most N checkpoints (0 = all)")),
        key("scaler-per-micro-batch", &R::scaler_per_micro_batch,
            flag("pitfall demo: unscale_ and update() the loss scaler after every micro-batch")),
        key("scheduler", &R::scheduler, choice<SchedulerKind>("SCHEDULER", "default constant")),
        key("scheduler-per-micro-batch", &R::scheduler_per_micro_batch,
            flag("pitfall demo: step the scheduler after every micro-batch (pytorch mode)")),
        key("seed", &R::seed, value("N", "random seed (default 0)")),
        key("shuffle", &R::shuffle, flag("shuffle every epoch (default)")),
        key("skip-nonfinite", &R::skip_nonfinite,
            flag("skip an update whose loss or gradient is not finite instead of stopping")),
        key("sync-each-micro-batch", &R::sync_each_micro_batch,
            flag("pitfall demo: all-reduce the gradients after every backward, not once per window")),
        setting(key("threads", &R::threads,
            value("N", "threads for the run, kept (0 = chosen by measurement, adapted to other programs' load)"))),
        key("transformer-layers", &R::transformer_layers, value("N", "encoder layers of the transformer (default 2)")),
        key("warmup-ratio", &R::warmup_ratio,
            value("R", "with --warmup-steps 0: warm up over ceil(R x the run's optimizer steps)")),
        key("warmup-steps", &R::warmup_steps, value("N", "linear warm-up, in optimizer steps")),
        key("weight-decay", &R::weight_decay, value("W", "weight decay (default 0)")),
        runner("target-batch", value("N", "(plan) effective batch to reach")),
        runner("json", flag("(estimate) print the estimate as a JSON object")),
        runner("noise-scale", value("N", "(plan) a measured gradient noise scale: where --target-batch sits against it")),
        runner("noise-scale-from",
               value("DIR", "(plan) the noise scale a finished run measured (its summary.json)", Complete::Directory)),
    };
    return e;
}

} // namespace

const std::vector<OptionRow>& option_table() {
    static const std::vector<OptionRow> rows = [] {
        std::vector<OptionRow> r;
        for (const auto& e : entries()) r.push_back(e.row);
        return r;
    }();
    return rows;
}

const std::vector<Field>& config_fields() {
    static const std::vector<Field> fields = [] {
        std::vector<Field> f;
        for (const auto& e : entries())
            if (e.field) f.push_back(*e.field);
        return f;
    }();
    return fields;
}

const OptionRow* find_option_row(const std::string& name) {
    for (const auto& row : option_table())
        if (row.name == name || std::find(row.aliases.begin(), row.aliases.end(), name) != row.aliases.end())
            return &row;
    return nullptr;
}

const OptionRow* find_option_key(const std::string& key) {
    std::string name = key;
    std::replace(name.begin(), name.end(), '_', '-');
    return find_option_row(name);
}

const Field* find_field(const std::string& key) {
    const OptionRow* row = find_option_key(key);
    if (!row || row->role != OptionRow::Role::ConfigKey) return nullptr;
    for (const auto& f : config_fields())
        if (f.key == row->name) return &f;
    return nullptr;
}

} // namespace accum
