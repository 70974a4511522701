#include "training/checkpoint.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <nlohmann/json.hpp>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/serialize.h>
#include <torch/utils.h>

#include "accum/errors.h"
#include "accum/run_directory.h"
#include "checked_file.h"
#include "training/hf_export.h"
#include "training/python_state.h"
#include "training/tensor_files.h"
#include "training/peft_export.h"

namespace accum {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// torch::save of a small tensor (a generator's state) into memory, then
// written with a checked call. LibTorch's writer into a file would throw from
// a destructor on a failed write, which ends the process.
std::string tensor_bytes(const torch::Tensor& tensor) {
    std::string bytes;
    torch::save(tensor, [&bytes](const void* data, std::size_t size) -> std::size_t {
        bytes.append(static_cast<const char*>(data), size);
        return size;
    }); // the file torch::save(tensor, path) writes
    return bytes;
}

// Removes the temporary directory of a checkpoint that was not finished.
class TemporaryDirectory {
public:
    explicit TemporaryDirectory(std::string path) : path_(std::move(path)) {}
    ~TemporaryDirectory() {
        if (!path_.empty()) io::remove_tree_quietly(path_);
    }
    TemporaryDirectory(const TemporaryDirectory&) = delete;
    TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
    void keep() { path_.clear(); }

private:
    std::string path_;
};


// Transformers' TrainerState as save_to_json writes it: its fields and no
// others (TrainerState.load_from_json passes every key to its constructor).
json trainer_state(const CheckpointFacts& facts, const json& log_state) {
    const auto& config = facts.config;
    auto from_log = [&log_state](const char* key, json fallback) {
        return log_state.contains(key) ? log_state.at(key) : fallback;
    };
    json control = {{"should_training_stop", false}, {"should_epoch_stop", false}, {"should_save", false},
                    {"should_evaluate", false}, {"should_log", false}};
    return json{{"best_global_step", nullptr},
                {"best_metric", from_log("best_metric", nullptr)},
                {"best_model_checkpoint", nullptr},
                {"epoch", facts.epoch},
                {"eval_steps", config.eval_steps},
                {"global_step", facts.progress.global_step},
                {"is_hyper_param_search", false},
                {"is_local_process_zero", true},
                {"is_world_process_zero", true},
                {"log_history", from_log("log_history", json::array())},
                {"logging_steps", config.logging_steps},
                {"max_steps", facts.total_updates},
                {"num_input_tokens_seen", 0},
                {"num_train_epochs", facts.num_epochs},
                {"save_steps", config.save_steps},
                {"stateful_callbacks", {{"TrainerControl", {{"args", control}, {"attributes", json::object()}}}}},
                {"total_flos", 0.0},
                {"train_batch_size", config.batch_size},
                {"trial_name", nullptr},
                {"trial_params", nullptr}};
}

} // namespace

ModelFiles run_model_files(Model& model, const RunConfig& config) {
    const auto meta = read_hf_metadata(config.model_file);
    auto out = model_files(model, meta);
    // A LoRA module: its adapter as PEFT saves it, instead of the whole model.
    if (meta.present()) use_peft_adapter_files(model, config.model_file, out);
    return out;
}

CheckpointSaved save_checkpoint(const CheckpointParts& parts, const CheckpointFacts& facts,
                                const std::string& output_dir, int save_total_limit,
                                const std::vector<torch::Tensor>& rng_states) {
    const auto& progress = facts.progress;
    const auto& config = facts.config;
    const std::string name = "checkpoint-" + std::to_string(progress.global_step);
    const fs::path final_dir = fs::path(output_dir) / name;
    const fs::path tmp_dir = fs::path(output_dir) / ("." + name + ".tmp");
    if (rng_states.empty()) throw std::invalid_argument("save_checkpoint: no generator state to save");

    // The small files' bytes in memory; the tensors stay where they are and are
    // streamed to their files (tensor_files.h), one copy of each: the weights
    // in model.safetensors (a LoRA module's adapter in adapter_model.safetensors
    // instead, peft_export.h), the optimizer's state in optimizer.pt.
    const auto model_out = run_model_files(parts.model, config);
    std::vector<std::pair<std::string, std::string>> files = model_out.files; // config.json, the tokenizer's
    for (std::size_t r = 0; r < rng_states.size(); ++r)
        files.emplace_back(r == 0 ? std::string("rng_state.pt") : "rng_state_" + std::to_string(r) + ".pt",
                           tensor_bytes(rng_states[r]));
    // On CUDA, dropout draws from the device's generator: keep its state too
    // (this process's: rank 0's in a data-parallel run).
    if (parts.device.is_cuda()) {
        auto cuda_gen = at::globalContext().defaultGenerator(parts.device);
        torch::Tensor cuda_state;
        {
            std::lock_guard<std::mutex> lock(cuda_gen.mutex());
            cuda_state = cuda_gen.get_state();
        }
        files.emplace_back("cuda_rng_state.pt", tensor_bytes(cuda_state));
    }
    // The engine's own progress, which --resume needs and TrainerState has no field for.
    const json log_state = parts.log.state();
    json own;
    own["gradient_accumulation_steps"] = config.accumulation_steps;
    own["train_batch_size"] = config.batch_size;
    own["world_size"] = facts.world_size;
    own["progress"] = {{"epoch", progress.epoch},
                       {"next_index", progress.next_index},
                       {"micro_steps", progress.micro_steps_at_step},
                       {"samples_seen", progress.samples_at_step},
                       {"elapsed_s", facts.elapsed_s},
                       {"last_loss", std::isfinite(progress.last_loss) ? json(progress.last_loss) : json()}};
    own["scheduler"] = {{"step_count", parts.lr_scheduler.step_count()},
                        {"total_steps", parts.lr_scheduler.total_steps()},
                        {"last_lr", parts.lr_scheduler.current_lr()}};
    // The loss scaler's state_dict(), as PyTorch names its keys (none without scaling).
    if (const auto scaler = parts.scaler.impl().state_dict())
        own["scaler"] = {{"scale", scaler->scale},
                         {"growth_factor", scaler->growth_factor},
                         {"backoff_factor", scaler->backoff_factor},
                         {"growth_interval", scaler->growth_interval},
                         {"_growth_tracker", scaler->growth_tracker}};
    own["log"] = log_state;
    files.emplace_back(kEngineStateFile, own.dump(2) + "\n");
    files.emplace_back("trainer_state.json", trainer_state(facts, log_state).dump(2) + "\n");

    // Written into .checkpoint-N.tmp/, each file synced, then renamed: the
    // directory is complete or absent. A failure removes the temporary
    // directory and leaves the earlier checkpoints as they were; its message
    // names the file as the checkpoint will call it (checkpoint-N/optimizer.pt).
    io::remove_tree(tmp_dir.string()); // a stale one, from a run killed while saving
    io::create_directory(tmp_dir.string(), final_dir.string());
    TemporaryDirectory unfinished(tmp_dir.string());
    auto in_tmp = [&](const char* file) { return (tmp_dir / file).string(); };
    auto shown = [&](const char* file) { return (final_dir / file).string(); };
    if (!model_out.tensors.empty())
        write_safetensors(in_tmp("model.safetensors"), shown("model.safetensors"), model_out.tensors);
    for (const auto& [file, tensors] : model_out.tensor_files)
        write_safetensors((tmp_dir / file).string(), (final_dir / file).string(), tensors);
    // The optimizer's and scheduler's state_dict() as PyTorch's own, under the
    // Trainer's names: Trainer.train(resume_from_checkpoint=...) loads them, and so does --resume.
    write_torch_save(in_tmp("optimizer.pt"), shown("optimizer.pt"), python_optimizer_state(parts, config));
    write_torch_save(in_tmp("scheduler.pt"), shown("scheduler.pt"), python_scheduler_state(parts, config));
    for (const auto& [file, bytes] : files)
        io::write_file((tmp_dir / file).string(), bytes, (final_dir / file).string());
    io::sync_directory(tmp_dir.string(), final_dir.string());
    io::remove_tree(final_dir.string()); // this step's, saved again (a stop right after a periodic save)
    io::rename_path(tmp_dir.string(), final_dir.string(), tmp_dir.string());
    unfinished.keep();
    io::sync_directory(output_dir);

    CheckpointSaved saved{final_dir.string(), {}};
    if (save_total_limit > 0) {
        auto all = checkpoints_in(output_dir); // oldest first
        while (static_cast<int>(all.size()) > save_total_limit) {
            // The new checkpoint is complete: an old one that cannot go is a note, not a failure.
            try {
                io::remove_tree(all.front());
            } catch (const WriteError& e) {
                saved.notes.push_back(std::string("--save-total-limit: ") + e.what());
                break;
            }
            all.erase(all.begin());
        }
    }
    return saved;
}

namespace {

json read_json(const fs::path& file) {
    std::ifstream f(file);
    if (!f) throw std::runtime_error("cannot be opened");
    return json::parse(f);
}

// "F is missing" for the first file a complete checkpoint has that `dir` lacks,
// or "": the weights are model.safetensors, a LoRA run's adapter_model.safetensors,
// or an earlier engine's model.pt.
std::string missing_file(const fs::path& dir) {
    std::error_code ec;
    if (!fs::exists(dir / "model.safetensors", ec) && !fs::exists(dir / kAdapterWeightsFile, ec) &&
        !fs::exists(dir / kLegacyModelFile, ec))
        return "model.safetensors (or a LoRA run's adapter_model.safetensors) is missing";
    for (const char* f : {"optimizer.pt", "rng_state.pt", "trainer_state.json"})
        if (!fs::exists(dir / f, ec)) return std::string(f) + " is missing";
    return {};
}

// Why the checkpoint in `dir` cannot be resumed from, or "" when it is intact:
// a file missing, a JSON state that does not parse or lacks its step, a torch
// archive whose records cannot all be read (a truncated or overwritten file).
// Reads every record and loads nothing, so an older checkpoint can be judged
// without touching the run's model.
std::string checkpoint_problem(const fs::path& dir) {
    if (auto missing = missing_file(dir); !missing.empty()) return missing;
    std::error_code ec;
    std::string file = "trainer_state.json";
    try {
        (void)read_json(dir / file).at("global_step").get<std::int64_t>();
        file = kEngineStateFile;
        if (fs::exists(dir / file, ec)) (void)read_json(dir / file).at("progress").at("epoch").get<std::int64_t>();
        for (const char* weights : {"model.safetensors", kAdapterWeightsFile}) {
            file = weights;
            if (fs::exists(dir / file, ec)) (void)read_safetensors_mapped((dir / file).string());
        }
        for (const char* archive : {kLegacyModelFile, kEngineOptimizerFile, "optimizer.pt", "scheduler.pt", "rng_state.pt"}) {
            file = archive;
            if (!fs::exists(dir / file, ec)) continue;
            caffe2::serialize::PyTorchStreamReader reader((dir / file).string());
            for (const auto& record : reader.getAllRecords()) (void)reader.getRecord(record);
        }
    } catch (const std::exception& e) {
        return file + ": " + error_text(e);
    }
    return {};
}

// The model's parameters and buffers from model.safetensors (model_files' names,
// hf_export.h): every parameter must be there, in its shape; a buffer may be
// absent (a non-persistent one, left out of the model's state_dict()).
void load_model_weights(Model& model, const RunConfig& config, const std::string& file) {
    const auto meta = read_hf_metadata(config.model_file);
    std::map<std::string, torch::Tensor> mine;
    for (const auto& p : model.named_parameters()) mine.emplace(p.key(), p.value());
    for (const auto& b : model.named_buffers()) mine.emplace(b.key(), b.value());
    std::set<std::string> loaded;
    torch::NoGradGuard no_grad;
    for (const auto& [name, saved] : read_safetensors_mapped(file)) {
        const auto found = mine.find(engine_name(meta, name));
        if (found == mine.end()) throw std::runtime_error("it holds " + name + ", which this run's model does not have");
        if (found->second.sizes() != saved.sizes())
            throw std::runtime_error(name + " has the shape " + c10::str(saved.sizes()) + ", this run's model " +
                                     c10::str(found->second.sizes()));
        found->second.copy_(saved); // from the file's mapping, tensor by tensor
        loaded.insert(found->first);
    }
    for (const auto& p : model.named_parameters())
        if (loaded.count(p.key()) == 0) throw std::runtime_error("it has no weights for the parameter " + p.key());
}

// The refusal of a damaged checkpoint: what is wrong with it, and the newest
// intact checkpoint before it in the same run directory, to resume from instead.
DataError unusable_checkpoint(const fs::path& dir, const std::string& problem) {
    std::string reason = problem; // LibTorch's may end with a full stop
    while (!reason.empty() && (reason.back() == '.' || reason.back() == ' ')) reason.pop_back();
    std::string message = "--resume: " + dir.string() + " is not a usable checkpoint: " + reason;
    // "--resume checkpoint-5" names one in the working directory.
    const fs::path run_dir = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
    const auto all = checkpoints_in(run_dir.string()); // oldest first
    std::string intact;
    bool older = false; // checkpoints after `dir` in the list are newer than it
    for (auto it = all.rbegin(); it != all.rend() && intact.empty(); ++it) {
        if (fs::path(*it).filename() == dir.filename()) {
            older = true;
            continue;
        }
        if (older && checkpoint_problem(*it).empty()) intact = *it;
    }
    if (intact.empty())
        message += "; no earlier checkpoint in " + run_dir.string() + " is intact";
    else
        message += "; the newest intact checkpoint is " + intact + " (step " +
                   std::to_string(checkpoint_global_step(intact)) + "): continue from it with --resume " + intact;
    return DataError(message);
}

} // namespace

Progress load_checkpoint(const CheckpointParts& parts, const RunConfig& config, int rank, int world_size,
                         std::int64_t micro_batches_per_epoch, const std::string& requested) {
    const fs::path dir = checkpoint_to_resume(requested);
    if (dir.empty())
        throw DataError("--resume: " + requested + " holds no checkpoint (checkpoint-N with model.safetensors "
                        "or adapter_model.safetensors, optimizer.pt, rng_state.pt, trainer_state.json)");
    if (const auto missing = missing_file(dir); !missing.empty()) throw unusable_checkpoint(dir, missing);
    std::string reading = "trainer_state.json"; // the file the reason belongs to
    json state;
    try {
        const json trainer = read_json(dir / "trainer_state.json");
        // The engine's own keys: accum_state.json; a checkpoint written before
        // it existed kept them in trainer_state.json.
        const bool own_file = fs::exists(dir / kEngineStateFile);
        reading = own_file ? kEngineStateFile : "trainer_state.json";
        if (own_file) {
            state = read_json(dir / kEngineStateFile);
            state["global_step"] = trainer.at("global_step");
        } else {
            state = trainer;
        }
        if (state.at("gradient_accumulation_steps").get<std::int64_t>() != config.accumulation_steps ||
            state.at("train_batch_size").get<std::int64_t>() != config.batch_size)
            throw ConfigError("--resume: " + dir.string() + " was written with micro-batch " +
                            std::to_string(state.at("train_batch_size").get<std::int64_t>()) + " × " +
                            std::to_string(state.at("gradient_accumulation_steps").get<std::int64_t>()) +
                            "; resume with the same --batch-size and --accumulation-steps");
        const auto saved_world = state.contains("world_size") ? state.at("world_size").get<int>() : 1;
        if (saved_world != world_size)
            throw ConfigError("--resume: " + dir.string() + " was written by a run of " + std::to_string(saved_world) +
                              (saved_world == 1 ? " process" : " processes") + ", this one has " +
                              std::to_string(world_size) +
                              "; resume with the same number (--nproc-per-node × --nnodes), as its data order and "
                              "RNG states belong to it");
        // An earlier engine's checkpoint: model.pt and the optimizer as LibTorch's
        // archives (accum_optimizer.pt, or optimizer.pt before that file existed).
        const bool legacy = fs::exists(dir / kLegacyModelFile);
        if (legacy) {
            reading = kLegacyModelFile;
            torch::serialize::InputArchive model_archive;
            model_archive.load_from((dir / kLegacyModelFile).string(), parts.device);
            parts.model.load(model_archive);
            torch::serialize::InputArchive optimizer_archive;
            const auto engine_optimizer = dir / kEngineOptimizerFile;
            const auto optimizer_file = fs::exists(engine_optimizer) ? engine_optimizer : dir / "optimizer.pt";
            reading = optimizer_file.filename().string();
            optimizer_archive.load_from(optimizer_file.string(), parts.device);
            parts.optimizer.impl().load(optimizer_archive);
        } else {
            // A LoRA run's checkpoint holds the adapter alone: the frozen base
            // is this run's module's (an older one holds the whole model).
            const bool whole = fs::exists(dir / "model.safetensors");
            reading = whole ? "model.safetensors" : kAdapterWeightsFile;
            if (whole)
                load_model_weights(parts.model, config, (dir / reading).string());
            else
                load_peft_adapter(parts.model, config.model_file, (dir / reading).string());
            reading = "optimizer.pt";
            restore_python_optimizer_state(parts, config, read_torch_save((dir / reading).string()));
        }
        torch::Tensor rng;
        const auto own = dir / ("rng_state_" + std::to_string(rank) + ".pt");
        const auto rng_file = rank > 0 && fs::exists(own) ? own : dir / "rng_state.pt";
        reading = rng_file.filename().string();
        torch::load(rng, rng_file.string());
        auto gen = at::detail::getDefaultCPUGenerator();
        {
            std::lock_guard<std::mutex> lock(gen.mutex());
            gen.set_state(rng);
        }
        if (parts.device.is_cuda() && fs::exists(dir / "cuda_rng_state.pt")) {
            reading = "cuda_rng_state.pt";
            torch::Tensor cuda_rng;
            torch::load(cuda_rng, (dir / "cuda_rng_state.pt").string());
            auto cuda_gen = at::globalContext().defaultGenerator(parts.device);
            std::lock_guard<std::mutex> lock(cuda_gen.mutex());
            cuda_gen.set_state(cuda_rng);
        }
        reading = own_file ? kEngineStateFile : "trainer_state.json";
        const auto& p = state.at("progress");
        Progress progress;
        progress.epoch = p.at("epoch").get<std::int64_t>();
        progress.next_index = p.at("next_index").get<std::int64_t>();
        progress.global_step = state.at("global_step").get<std::int64_t>();
        progress.micro_steps = p.at("micro_steps").get<std::int64_t>();
        progress.samples_seen = p.at("samples_seen").get<std::int64_t>();
        progress.micro_steps_at_step = progress.micro_steps;
        progress.samples_at_step = progress.samples_seen;
        progress.elapsed_before_s = p.at("elapsed_s").get<double>();
        progress.last_loss = p.at("last_loss").is_number() ? p.at("last_loss").get<double>() : std::nan("");
        parts.lr_scheduler.set_step_count(state.at("scheduler").at("step_count").get<std::int64_t>());
        // A checkpoint written without loss scaling leaves the scaler at its initial scale.
        if (parts.scaler.is_enabled() && state.contains("scaler")) {
            const auto& s = state.at("scaler");
            parts.scaler.load_state_dict(GradScalerState{
                s.at("scale").get<double>(), s.at("growth_factor").get<double>(), s.at("backoff_factor").get<double>(),
                s.at("growth_interval").get<std::int64_t>(), s.at("_growth_tracker").get<std::int64_t>()});
        }
        if (progress.next_index >= micro_batches_per_epoch) {
            progress.next_index = 0;
            ++progress.epoch;
        }
        parts.log.restore(own_file ? state.at("log") : state);
        return progress;
    } catch (const DataError&) {
        throw;
    } catch (const ConfigError&) {
        throw;
    } catch (const std::exception& e) {
        // The reason without LibTorch's C++ backtrace; the whole text goes to the run's log.
        // A damaged file is named by what is wrong with it; files that read whole
        // but do not load belong to another run (its --model, its --optimizer),
        // and an earlier checkpoint of that run would not load either.
        const std::string damage = checkpoint_problem(dir);
        DataError refusal =
            !damage.empty()
                ? unusable_checkpoint(dir, damage)
                : DataError("--resume: " + dir.string() + " does not fit this run: " + reading + ": " + error_text(e) +
                            "; resume with the --model and --optimizer it was written with");
        refusal.set_log_text("--resume: reading " + (dir / reading).string() + ": " + e.what());
        throw refusal;
    }
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
