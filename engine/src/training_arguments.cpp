// SPDX-License-Identifier: GPL-3.0-or-later
#include "training_arguments.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace accum::training_arguments {

namespace {

using nlohmann::json;

// TrainingArguments(output_dir=None).to_json_string() of Transformers 5.25: the
// value of each field a file leaves out, and the default a field that is not
// implemented must keep.
const json& defaults() {
    static const json d = json::parse(R"({
  "output_dir": null, "per_device_train_batch_size": 8, "num_train_epochs": 3.0, "max_steps": -1,
  "learning_rate": 5e-05, "lr_scheduler_type": "linear", "lr_scheduler_kwargs": null, "warmup_steps": 0,
  "optim": "adamw_torch_fused", "optim_args": null, "weight_decay": 0.0, "adam_beta1": 0.9, "adam_beta2": 0.999,
  "adam_epsilon": 1e-08, "optim_target_modules": null, "gradient_accumulation_steps": 1,
  "average_tokens_across_devices": true, "max_grad_norm": 1.0, "label_smoothing_factor": 0.0, "bf16": false,
  "fp16": false, "bf16_full_eval": false, "fp16_full_eval": false, "tf32": null, "activation_checkpointing": false,
  "activation_checkpointing_kwargs": null, "gradient_checkpointing": false, "gradient_checkpointing_kwargs": null,
  "torch_compile": false, "torch_compile_backend": null, "torch_compile_mode": null, "use_liger_kernel": false,
  "liger_kernel_config": null, "use_cache": false, "neftune_noise_alpha": null, "torch_empty_cache_steps": null,
  "auto_find_batch_size": false, "logging_strategy": "steps", "logging_steps": 500, "logging_first_step": false,
  "log_on_each_node": true, "logging_nan_inf_filter": true, "include_num_input_tokens_seen": "no",
  "log_level": "passive", "log_level_replica": "warning", "disable_tqdm": false, "report_to": [], "run_name": null,
  "project": "huggingface", "trackio_space_id": null, "trackio_bucket_id": null, "trackio_static_space_id": null,
  "eval_strategy": "no", "eval_steps": null, "eval_delay": 0, "per_device_eval_batch_size": 8,
  "prediction_loss_only": false, "eval_on_start": false, "eval_do_concat_batches": true,
  "eval_use_gather_object": false, "eval_accumulation_steps": null, "include_for_metrics": [],
  "batch_eval_metrics": false, "save_only_model": false, "save_strategy": "steps", "save_steps": 500,
  "save_on_each_node": false, "save_total_limit": null, "enable_jit_checkpoint": false, "push_to_hub": false,
  "hub_token": "<HUB_TOKEN>", "hub_private_repo": null, "hub_model_id": null, "hub_strategy": "every_save",
  "hub_always_push": false, "hub_revision": null, "load_best_model_at_end": false, "metric_for_best_model": null,
  "greater_is_better": null, "ignore_data_skip": false, "restore_callback_states_from_checkpoint": false,
  "full_determinism": false, "seed": 42, "data_seed": null, "use_cpu": false,
  "accelerator_config": {"split_batches": false, "dispatch_batches": null, "even_batches": true,
                         "use_seedable_sampler": true, "non_blocking": false, "gradient_accumulation_kwargs": null},
  "parallelism_config": null, "dataloader_drop_last": false, "dataloader_num_workers": 0,
  "dataloader_pin_memory": true, "dataloader_persistent_workers": false, "dataloader_prefetch_factor": null,
  "dataloader_multiprocessing_context": null, "dataloader_in_order": true, "remove_unused_columns": true,
  "label_names": null, "train_sampling_strategy": "random", "length_column_name": "length",
  "ddp_find_unused_parameters": null, "ddp_bucket_cap_mb": null, "ddp_broadcast_buffers": null,
  "ddp_static_graph": null, "ddp_backend": null, "ddp_timeout": 1800, "fsdp": null, "fsdp_config": null,
  "deepspeed": null, "debug": [], "skip_memory_metrics": true, "do_train": false, "do_eval": false,
  "do_predict": false, "resume_from_checkpoint": null, "local_rank": -1
})");
    return d;
}

// Fields of earlier Transformers that its files may still hold (read as their
// successors, or ignored), with the value that changes nothing.
const json& earlier_fields() {
    static const json d = json::parse(R"({
  "overwrite_output_dir": false, "warmup_ratio": 0.0, "evaluation_strategy": "no", "logging_dir": null,
  "group_by_length": false, "no_cuda": false, "use_mps_device": false, "past_index": -1, "mp_parameters": "",
  "per_gpu_train_batch_size": null, "per_gpu_eval_batch_size": null, "push_to_hub_model_id": null,
  "push_to_hub_organization": null, "push_to_hub_token": null, "use_ipex": false, "jit_mode_eval": false,
  "dataloader_persistent_workers": false, "gradient_checkpointing_kwargs": null, "include_inputs_for_metrics": false,
  "eval_do_concat_batches": true, "fp16_backend": "auto", "half_precision_backend": "auto", "fp16_opt_level": "O1",
  "optim_target_modules": null, "torchdynamo": null, "ray_scope": "last", "split_batches": null,
  "dispatch_batches": null, "include_tokens_per_second": false, "use_legacy_prediction_loop": false,
  "batch_eval_metrics": false, "eval_on_start": false, "use_liger_kernel": false, "average_tokens_across_devices": false,
  "tp_size": 0, "fsdp_min_num_params": 0, "fsdp_transformer_layer_cls_to_wrap": null, "accelerator_config": null,
  "hub_always_push": false, "hub_revision": null, "gradient_checkpointing": false, "full_determinism": false,
  "torch_compile": false, "log_level": "passive", "xpu_backend": null, "sharded_ddp": [], "bf16_full_eval": false,
  "tpu_num_cores": null, "tpu_metrics_debug": false
})");
    return d;
}

// Fields that do not change what is trained (reporting, the hub, workers,
// speed-only switches): accepted, and named once when set off their default.
const std::set<std::string>& ignored_fields() {
    static const std::set<std::string> s{
        "average_tokens_across_devices", "torch_compile", "torch_compile_backend", "torch_compile_mode",
        "use_liger_kernel", "liger_kernel_config", "use_cache", "torch_empty_cache_steps", "logging_first_step",
        "log_on_each_node", "logging_nan_inf_filter", "include_num_input_tokens_seen", "log_level",
        "log_level_replica", "run_name", "project", "trackio_space_id", "trackio_bucket_id",
        "trackio_static_space_id", "per_device_eval_batch_size", "prediction_loss_only", "eval_on_start",
        "eval_do_concat_batches", "eval_use_gather_object", "eval_accumulation_steps", "include_for_metrics",
        "batch_eval_metrics", "save_only_model", "save_on_each_node", "enable_jit_checkpoint", "push_to_hub",
        "hub_token", "hub_private_repo", "hub_model_id", "hub_strategy", "hub_always_push", "hub_revision",
        "metric_for_best_model", "greater_is_better", "restore_callback_states_from_checkpoint", "full_determinism",
        "dataloader_num_workers", "dataloader_pin_memory", "dataloader_persistent_workers",
        "dataloader_prefetch_factor", "dataloader_multiprocessing_context", "dataloader_in_order",
        "remove_unused_columns", "label_names", "length_column_name", "ddp_find_unused_parameters",
        "ddp_bucket_cap_mb", "ddp_broadcast_buffers", "ddp_static_graph", "ddp_timeout", "debug",
        "skip_memory_metrics", "do_train", "do_eval", "do_predict", "local_rank",
        // earlier Transformers
        "logging_dir", "past_index", "mp_parameters", "push_to_hub_model_id", "push_to_hub_organization",
        "push_to_hub_token", "use_ipex", "jit_mode_eval", "include_inputs_for_metrics", "fp16_backend",
        "half_precision_backend", "fp16_opt_level", "torchdynamo", "ray_scope", "include_tokens_per_second",
        "use_legacy_prediction_loop", "xpu_backend", "tpu_metrics_debug", "use_mps_device", "per_gpu_eval_batch_size"};
    return s;
}

// The value as the file spells it, for messages.
std::string shown(const json& v) { return v.dump(); }

bool is_whole(const json& v) {
    return v.is_number_integer() || v.is_number_unsigned() ||
           (v.is_number_float() && std::isfinite(v.get<double>()) && v.get<double>() == std::floor(v.get<double>()));
}

// "momentum=0.9,nesterov=False" → {momentum: "0.9", nesterov: "False"}
std::map<std::string, std::string> parse_optim_args(const std::string& text) {
    std::map<std::string, std::string> out;
    std::stringstream s(text);
    for (std::string item; std::getline(s, item, ',');) {
        const auto trim = [](std::string t) {
            t.erase(0, t.find_first_not_of(" \t"));
            t.erase(t.find_last_not_of(" \t") + 1);
            return t;
        };
        const auto eq = item.find('=');
        if (eq == std::string::npos) out[trim(item)] = "";
        else out[trim(item.substr(0, eq))] = trim(item.substr(eq + 1));
    }
    return out;
}

class Mapper {
public:
    Mapper(const json& fields, std::vector<ConfigProblem>& problems) : f_(fields), problems_(problems) {}

    const json& at(const std::string& key) const {
        static const json null;
        const auto it = f_.find(key);
        return it == f_.end() ? null : *it;
    }
    bool has(const std::string& key) const { return f_.contains(key); }

    void refuse(const std::string& key, const std::string& why) {
        problems_.push_back({"config", "TrainingArguments' " + key + " = " + shown(at(key)) + ": " + why});
    }
    void refuse_unimplemented(const std::string& key, const std::string& what = {}) {
        refuse(key, (what.empty() ? std::string("is not implemented by the engine") : what) +
                        " (only its default " + shown(default_of(key)) + " is)");
    }
    static json default_of(const std::string& key) {
        if (defaults().contains(key)) return defaults()[key];
        if (earlier_fields().contains(key)) return earlier_fields()[key];
        return json();
    }

    // A whole number ≥ `min`, into `out`; else refused naming the field.
    bool whole(const std::string& key, std::int64_t min, std::int64_t& out) {
        const json& v = at(key);
        if (!v.is_number() || !is_whole(v)) {
            refuse(key, "expects a whole number");
            return false;
        }
        const double d = v.get<double>();
        if (d < static_cast<double>(min) || d > 1e15) {
            refuse(key, "must be at least " + std::to_string(min));
            return false;
        }
        out = static_cast<std::int64_t>(d);
        return true;
    }
    bool number(const std::string& key, double& out) {
        const json& v = at(key);
        if (!v.is_number()) {
            refuse(key, "expects a number");
            return false;
        }
        out = v.get<double>();
        return true;
    }
    bool boolean(const std::string& key, bool& out) {
        const json& v = at(key);
        if (v.is_null()) return true; // unset: keeps the value
        if (!v.is_boolean()) {
            refuse(key, "expects true or false");
            return false;
        }
        out = v.get<bool>();
        return true;
    }
    // A strategy: "no", "steps" or "epoch" ("best" is the Trainer's and not the engine's).
    void strategy(const std::string& key, Strategy& out) {
        const json& v = at(key);
        const auto parsed = v.is_string() ? parse_choice<Strategy>(v.get<std::string>()) : std::nullopt;
        if (!parsed) {
            refuse(key, "is not implemented (the engine's strategies: no, steps, epoch)");
            return;
        }
        out = *parsed;
    }
    // An interval in steps: a whole number, or for a strategy other than steps
    // nothing (Transformers ignores it then). A value below 1 is a ratio of the
    // run's steps in Transformers, which the engine does not implement.
    void interval(const std::string& key, bool applies, std::int64_t& out) {
        const json& v = at(key);
        if (!applies || v.is_null()) return;
        if (v.is_number() && v.get<double>() > 0 && v.get<double>() < 1) {
            refuse(key, "a ratio of the run's optimizer steps is not implemented; give a whole number of steps");
            return;
        }
        whole(key, 1, out);
    }

private:
    const json& f_;
    std::vector<ConfigProblem>& problems_;
};

// Fields that are not implemented and must keep a value that changes nothing.
// Each entry: the field and the values accepted besides its default.
const std::map<std::string, std::vector<json>>& default_only() {
    static const std::map<std::string, std::vector<json>> m{
        {"lr_scheduler_kwargs", {json::object()}},
        {"optim_target_modules", {}},
        {"label_smoothing_factor", {}},
        {"bf16_full_eval", {}},
        {"fp16_full_eval", {}},
        {"tf32", {false}},
        {"activation_checkpointing_kwargs", {json::object()}},
        {"gradient_checkpointing_kwargs", {json::object()}},
        {"neftune_noise_alpha", {}},
        {"eval_delay", {}},
        {"load_best_model_at_end", {}},
        {"ignore_data_skip", {}},
        {"parallelism_config", {}},
        {"fsdp", {"", json::array()}},
        {"fsdp_config", {json::object()}},
        {"deepspeed", {}},
        {"dataloader_drop_last", {}},
        {"group_by_length", {}},
        {"tp_size", {}},
        {"fsdp_min_num_params", {}},
        {"fsdp_transformer_layer_cls_to_wrap", {}},
        {"sharded_ddp", {"", json()}},
        {"split_batches", {false}},
        {"dispatch_batches", {false}},
        {"tpu_num_cores", {}},
        {"per_gpu_train_batch_size", {}},
    };
    return m;
}

// Fields the mapping below reads.
const std::set<std::string>& mapped_fields() {
    static const std::set<std::string> s{
        "output_dir", "overwrite_output_dir", "per_device_train_batch_size", "gradient_accumulation_steps",
        "num_train_epochs", "max_steps", "learning_rate", "lr_scheduler_type", "warmup_steps", "warmup_ratio",
        "optim", "optim_args", "weight_decay", "adam_beta1", "adam_beta2", "adam_epsilon", "max_grad_norm", "bf16",
        "fp16", "activation_checkpointing", "gradient_checkpointing", "auto_find_batch_size", "logging_strategy",
        "logging_steps", "disable_tqdm", "report_to", "eval_strategy", "evaluation_strategy", "eval_steps",
        "save_strategy", "save_steps", "save_total_limit", "seed", "data_seed", "use_cpu", "no_cuda",
        "accelerator_config", "train_sampling_strategy", "ddp_backend", "resume_from_checkpoint"};
    return s;
}

} // namespace

bool is_field(const std::string& key) {
    return defaults().contains(key) || earlier_fields().contains(key) || ignored_fields().count(key) != 0 ||
           mapped_fields().count(key) != 0 || default_only().count(key) != 0;
}

json apply(const json& object, RunConfig& c, std::vector<ConfigProblem>& problems, std::vector<std::string>& ignored) {
    // The file over Transformers' defaults, as TrainingArguments(**object) reads it.
    json f = defaults();
    json rest = json::object();
    for (const auto& [key, value] : object.items()) {
        if (is_field(key)) f[key] = value;
        else rest[key] = value;
    }
    Mapper m(f, problems);

    // The Trainer's style: a TrainingArguments file describes a Trainer run.
    c.mode = Mode::Trainer;

    if (const auto& v = m.at("output_dir"); v.is_string()) c.output_dir = v.get<std::string>();
    else if (!v.is_null()) m.refuse("output_dir", "expects a directory name");
    m.boolean("overwrite_output_dir", c.overwrite_output_dir);

    m.whole("per_device_train_batch_size", 1, c.batch_size);
    m.whole("gradient_accumulation_steps", 1, c.accumulation_steps);

    // max_steps > 0 decides the length; num_train_epochs counts only without it.
    std::int64_t max_steps = -1;
    if (const auto& v = m.at("max_steps"); v.is_number_integer() && v.get<std::int64_t>() <= 0) max_steps = 0;
    else m.whole("max_steps", 1, max_steps);
    if (max_steps >= 0) c.max_steps = max_steps;
    if (const auto& v = m.at("num_train_epochs"); !v.is_number() || v.get<double>() < 0)
        m.refuse("num_train_epochs", "expects a number of epochs");
    else if (is_whole(v))
        c.epochs = static_cast<std::int64_t>(v.get<double>());
    else if (c.max_steps <= 0)
        m.refuse("num_train_epochs", "a fraction of an epoch is not implemented; give a whole number of epochs, "
                                     "or max_steps");

    m.number("learning_rate", c.learning_rate);
    m.number("weight_decay", c.weight_decay);
    if (const auto& v = m.at("max_grad_norm"); v.is_null()) c.max_grad_norm = 0.0;
    else m.number("max_grad_norm", c.max_grad_norm);

    // Warm-up: warmup_steps ≥ 1 is a number of steps (int() of it); below 1 a
    // ratio of the run's optimizer steps (get_warmup_steps). An earlier file's
    // warmup_ratio counts when warmup_steps is 0, as it did then.
    c.warmup_steps = 0;
    c.warmup_ratio = 0.0;
    if (double w = 0; m.number("warmup_steps", w)) {
        if (!std::isfinite(w) || w < 0) m.refuse("warmup_steps", "must not be negative");
        else if (w >= 1) c.warmup_steps = static_cast<std::int64_t>(w);
        else c.warmup_ratio = w;
    }
    if (m.has("warmup_ratio") && c.warmup_steps == 0 && c.warmup_ratio == 0.0) {
        if (double r = 0; m.number("warmup_ratio", r)) {
            if (!(r >= 0 && r <= 1)) m.refuse("warmup_ratio", "must be in [0, 1]");
            else c.warmup_ratio = r;
        }
    }
    const auto& scheduler = m.at("lr_scheduler_type");
    const std::string scheduler_name = scheduler.is_string() ? scheduler.get<std::string>() : "";
    if (scheduler_name == "linear") c.scheduler = SchedulerKind::Linear;
    else if (scheduler_name == "cosine") c.scheduler = SchedulerKind::Cosine;
    else if (scheduler_name == "constant_with_warmup") c.scheduler = SchedulerKind::Constant;
    else if (scheduler_name == "constant") {
        // get_constant_schedule: no warm-up, whatever warmup_steps says.
        c.scheduler = SchedulerKind::Constant;
        if (c.warmup_steps > 0 || c.warmup_ratio > 0) ignored.push_back("warmup_steps (lr_scheduler_type constant)");
        c.warmup_steps = 0;
        c.warmup_ratio = 0.0;
    } else
        m.refuse("lr_scheduler_type", "is not implemented (the engine's: linear, cosine, constant, constant_with_warmup)");

    // The optimizer: LibTorch's AdamW (torch.optim.AdamW's defaults) or SGD.
    const auto& optim = m.at("optim");
    const std::string optim_name = optim.is_string() ? optim.get<std::string>() : "";
    const bool adamw = optim_name == "adamw_torch" || optim_name == "adamw_torch_fused";
    if (adamw) c.optimizer = OptimizerKind::AdamW;
    else if (optim_name == "sgd") {
        c.optimizer = OptimizerKind::Sgd;
        c.momentum = 0.0; // torch.optim.SGD's default, which the Trainer passes on
    } else
        m.refuse("optim", "is not implemented (the engine's: adamw_torch, adamw_torch_fused, sgd)");
    if (const auto& v = m.at("optim_args"); !v.is_null()) {
        const auto args = v.is_string() ? parse_optim_args(v.get<std::string>()) : std::map<std::string, std::string>{};
        bool ok = v.is_string() && optim_name == "sgd";
        for (const auto& [name, text] : args) {
            if (!ok) break;
            char* end = nullptr;
            const double value = std::strtod(text.c_str(), &end);
            if (name == "momentum" && !text.empty() && *end == '\0') c.momentum = value;
            else ok = false;
        }
        if (!ok) m.refuse("optim_args", "is not implemented, except momentum=M with optim sgd");
    }
    if (adamw) {
        // LibTorch's AdamW betas and eps, the same as torch.optim.AdamW's defaults.
        const std::pair<const char*, double> engine_values[] = {
            {"adam_beta1", 0.9}, {"adam_beta2", 0.999}, {"adam_epsilon", 1e-8}};
        for (const auto& [key, value] : engine_values) {
            const auto& v = m.at(key);
            if (!v.is_number() || v.get<double>() != value)
                m.refuse(key, "is not implemented: the engine's AdamW uses " + shown(json(value)));
        }
    }

    bool bf16 = false, fp16 = false;
    m.boolean("bf16", bf16);
    m.boolean("fp16", fp16);
    if (bf16 && fp16) m.refuse("fp16", "and bf16 are both true; choose one");
    else c.mixed_precision = bf16 ? MixedPrecision::Bf16 : fp16 ? MixedPrecision::Fp16 : MixedPrecision::No;

    bool checkpointing = false, alias = false;
    m.boolean("activation_checkpointing", checkpointing);
    m.boolean("gradient_checkpointing", alias);
    c.gradient_checkpointing = checkpointing || alias;
    for (const char* key : {"activation_checkpointing_kwargs", "gradient_checkpointing_kwargs"}) {
        // use_reentrant chooses how torch.utils.checkpoint recomputes, not what.
        if (const auto& v = m.at(key); v.is_object() && v.size() == 1 && v.contains("use_reentrant"))
            f[key] = nullptr;
    }
    m.boolean("auto_find_batch_size", c.auto_find_batch_size);
    m.boolean("disable_tqdm", c.disable_tqdm);

    // Logging: every logging_steps steps; another strategy is a matter of the
    // log only, so it is named as ignored.
    if (const auto& v = m.at("logging_strategy"); v != json("steps")) ignored.push_back("logging_strategy");
    m.interval("logging_steps", true, c.logging_steps);

    // report_to: [] or "none" → none; tensorboard; any other integration is not the engine's.
    {
        const auto& v = m.at("report_to");
        std::vector<std::string> names;
        bool ok = true;
        if (v.is_string()) names.push_back(v.get<std::string>());
        else if (v.is_array())
            for (const auto& n : v) n.is_string() ? names.push_back(n.get<std::string>()) : void(ok = false);
        else ok = v.is_null();
        std::set<std::string> wanted;
        for (const auto& n : names)
            if (n != "none") wanted.insert(n);
        if (!ok || wanted.size() > 1 || (wanted.size() == 1 && *wanted.begin() != "tensorboard"))
            m.refuse("report_to", "is not implemented (the engine writes tensorboard, or nothing: \"none\" or [])");
        else c.report_to = wanted.empty() ? "none" : "tensorboard";
    }

    if (m.has("evaluation_strategy") && !object.contains("eval_strategy")) f["eval_strategy"] = f["evaluation_strategy"];
    m.strategy("eval_strategy", c.eval_strategy);
    c.eval_steps = 0;
    // Transformers' __post_init__: eval_steps unset with eval_strategy steps is logging_steps.
    if (c.eval_strategy == Strategy::Steps && m.at("eval_steps").is_null()) c.eval_steps = c.logging_steps;
    m.interval("eval_steps", c.eval_strategy == Strategy::Steps, c.eval_steps);
    m.strategy("save_strategy", c.save_strategy);
    c.save_steps = 0;
    m.interval("save_steps", c.save_strategy == Strategy::Steps, c.save_steps);
    if (const auto& v = m.at("save_total_limit"); v.is_null()) c.save_total_limit = 0;
    else m.whole("save_total_limit", 0, c.save_total_limit);

    if (std::int64_t seed = 0; m.whole("seed", 0, seed)) c.seed = static_cast<std::uint64_t>(seed);
    // One seed drives the engine's initialisation and its data order.
    if (const auto& v = m.at("data_seed"); !v.is_null() && v != m.at("seed"))
        m.refuse("data_seed", "is not implemented: the engine's data order follows seed (set data_seed null)");

    bool cpu = false, no_cuda = false;
    m.boolean("use_cpu", cpu);
    if (m.has("no_cuda")) m.boolean("no_cuda", no_cuda);
    if (cpu || no_cuda) c.device = "cpu";
    if (const auto& v = m.at("ddp_backend"); !v.is_null()) {
        const auto parsed = v.is_string() ? parse_choice<Backend>(v.get<std::string>()) : std::nullopt;
        if (!parsed) m.refuse("ddp_backend", "is not implemented (the engine's: gloo, nccl)");
        else c.backend = *parsed;
    }
    if (const auto& v = m.at("resume_from_checkpoint"); v.is_string()) c.resume_from = v.get<std::string>();
    else if (!v.is_null()) m.refuse("resume_from_checkpoint", "expects a checkpoint directory");

    // The sampler: random is a new permutation every epoch, sequential the data's order.
    if (const auto& v = m.at("train_sampling_strategy"); v == json("random")) c.shuffle = true;
    else if (v == json("sequential")) c.shuffle = false;
    else m.refuse("train_sampling_strategy", "is not implemented (the engine's: random, sequential)");

    // The Accelerator's options that change the batches: at their defaults only.
    if (const auto& v = m.at("accelerator_config"); v.is_object()) {
        const json& d = defaults()["accelerator_config"];
        for (const char* key : {"split_batches", "dispatch_batches", "even_batches", "gradient_accumulation_kwargs"}) {
            const json value = v.contains(key) ? v[key] : d[key];
            if (value != d[key] && !(std::string(key) == "dispatch_batches" && value == json(false)))
                problems.push_back({"config", std::string("TrainingArguments' accelerator_config.") + key + " = " +
                                                  shown(value) + ": is not implemented by the engine (only its "
                                                  "default " + shown(d[key]) + " is)"});
        }
    } else if (!v.is_null())
        m.refuse("accelerator_config", "expects an object");

    for (const auto& [key, accepted] : default_only()) {
        if (!m.has(key)) continue;
        const json& v = f[key];
        bool ok = v == Mapper::default_of(key);
        for (const auto& a : accepted) ok = ok || v == a;
        if (!ok) m.refuse_unimplemented(key);
    }

    for (const auto& key : ignored_fields())
        if (object.contains(key) && object[key] != Mapper::default_of(key)) ignored.push_back(key);
    return rest;
}

} // namespace accum::training_arguments
