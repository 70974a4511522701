#include "training/checkpoint.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <utility>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <nlohmann/json.hpp>
#include <torch/serialize.h>

#include "accum/errors.h"
#include "accum/run_directory.h"
#include "checked_file.h"

namespace accum {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// LibTorch's serialisation into bytes in memory. The zip writer writes into a
// string, which cannot fail (but for memory); a writer that fails half-way, as
// a file on a full disk does, makes LibTorch throw from a destructor and end
// the process.
using ByteWriter = std::function<std::size_t(const void*, std::size_t)>;

ByteWriter appending_to(std::string& bytes) {
    return [&bytes](const void* data, std::size_t size) -> std::size_t {
        bytes.append(static_cast<const char*>(data), size);
        return size;
    };
}

std::string archive_bytes(torch::serialize::OutputArchive& archive) {
    std::string bytes;
    archive.save_to(appending_to(bytes));
    return bytes;
}

std::string tensor_bytes(const torch::Tensor& tensor) {
    std::string bytes;
    torch::save(tensor, appending_to(bytes)); // the file torch::save(tensor, path) writes
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

} // namespace

CheckpointSaved save_checkpoint(const CheckpointParts& parts, const CheckpointFacts& facts,
                                const std::string& output_dir, int save_total_limit,
                                const std::vector<torch::Tensor>& rng_states) {
    const auto& progress = facts.progress;
    const auto& config = facts.config;
    const std::string name = "checkpoint-" + std::to_string(progress.global_step);
    const fs::path final_dir = fs::path(output_dir) / name;
    const fs::path tmp_dir = fs::path(output_dir) / ("." + name + ".tmp");
    if (rng_states.empty()) throw std::invalid_argument("save_checkpoint: no generator state to save");

    // Every file's bytes, in memory first; then written with checked calls only.
    std::vector<std::pair<std::string, std::string>> files;
    {
        torch::serialize::OutputArchive archive;
        parts.model.save(archive);
        files.emplace_back("model.pt", archive_bytes(archive));
    }
    // A model from a TorchScript file: the trained module too, for Python's torch.jit.load.
    if (auto module = parts.model.torchscript_bytes(); !module.empty())
        files.emplace_back(kTrainedModuleFile, std::move(module));
    {
        torch::serialize::OutputArchive archive;
        parts.optimizer.impl().save(archive);
        files.emplace_back("optimizer.pt", archive_bytes(archive));
    }
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
    json state = parts.log.state(); // the Trainer's log_history and best_metric
    state["global_step"] = progress.global_step;
    state["epoch"] = facts.epoch;
    state["progress"] = {{"epoch", progress.epoch},
                         {"next_index", progress.next_index},
                         {"micro_steps", progress.micro_steps_at_step},
                         {"samples_seen", progress.samples_at_step},
                         {"elapsed_s", facts.elapsed_s},
                         {"last_loss", std::isfinite(progress.last_loss) ? json(progress.last_loss) : json()}};
    state["scheduler"] = {{"step_count", parts.lr_scheduler.step_count()},
                          {"total_steps", parts.lr_scheduler.total_steps()},
                          {"last_lr", parts.lr_scheduler.current_lr()}};
    // The loss scaler's state_dict(), as PyTorch names its keys (none without scaling).
    if (const auto scaler = parts.scaler.impl().state_dict())
        state["scaler"] = {{"scale", scaler->scale},
                           {"growth_factor", scaler->growth_factor},
                           {"backoff_factor", scaler->backoff_factor},
                           {"growth_interval", scaler->growth_interval},
                           {"_growth_tracker", scaler->growth_tracker}};
    state["max_steps"] = facts.total_updates;
    state["num_train_epochs"] = facts.num_epochs;
    state["logging_steps"] = config.logging_steps;
    state["eval_steps"] = config.eval_steps;
    state["save_steps"] = config.save_steps;
    state["train_batch_size"] = config.batch_size;
    state["gradient_accumulation_steps"] = config.accumulation_steps;
    state["world_size"] = facts.world_size;
    files.emplace_back("trainer_state.json", state.dump(2) + "\n");

    // Written into .checkpoint-N.tmp/, each file synced, then renamed: the
    // directory is complete or absent. A failure removes the temporary
    // directory and leaves the earlier checkpoints as they were; its message
    // names the file as the checkpoint will call it (checkpoint-N/model.pt).
    io::remove_tree(tmp_dir.string()); // a stale one, from a run killed while saving
    io::create_directory(tmp_dir.string(), final_dir.string());
    TemporaryDirectory unfinished(tmp_dir.string());
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

Progress load_checkpoint(const CheckpointParts& parts, const RunConfig& config, int rank, int world_size,
                         std::int64_t micro_batches_per_epoch, const std::string& requested) {
    const std::string dir = latest_checkpoint(requested);
    if (dir.empty())
        throw DataError("--resume: " + requested + " holds no complete checkpoint (checkpoint-N with model.pt, "
                        "optimizer.pt, rng_state.pt, trainer_state.json)");
    json state;
    try {
        std::ifstream f(fs::path(dir) / "trainer_state.json");
        state = json::parse(f);
        if (state.at("gradient_accumulation_steps").get<std::int64_t>() != config.accumulation_steps ||
            state.at("train_batch_size").get<std::int64_t>() != config.batch_size)
            throw ConfigError("--resume: " + dir + " was written with micro-batch " +
                            std::to_string(state.at("train_batch_size").get<std::int64_t>()) + " × " +
                            std::to_string(state.at("gradient_accumulation_steps").get<std::int64_t>()) +
                            "; resume with the same --batch-size and --accumulation-steps");
        const auto saved_world = state.contains("world_size") ? state.at("world_size").get<int>() : 1;
        if (saved_world != world_size)
            throw ConfigError("--resume: " + dir + " was written by a run of " + std::to_string(saved_world) +
                              (saved_world == 1 ? " process" : " processes") + ", this one has " +
                              std::to_string(world_size) +
                              "; resume with the same number (--nproc-per-node × --nnodes), as its data order and "
                              "RNG states belong to it");
        torch::serialize::InputArchive model_archive;
        model_archive.load_from((fs::path(dir) / "model.pt").string(), parts.device);
        parts.model.load(model_archive);
        torch::serialize::InputArchive optimizer_archive;
        optimizer_archive.load_from((fs::path(dir) / "optimizer.pt").string(), parts.device);
        parts.optimizer.impl().load(optimizer_archive);
        torch::Tensor rng;
        const auto own = fs::path(dir) / ("rng_state_" + std::to_string(rank) + ".pt");
        torch::load(rng, (rank > 0 && fs::exists(own) ? own : fs::path(dir) / "rng_state.pt").string());
        auto gen = at::detail::getDefaultCPUGenerator();
        {
            std::lock_guard<std::mutex> lock(gen.mutex());
            gen.set_state(rng);
        }
        if (parts.device.is_cuda() && fs::exists(fs::path(dir) / "cuda_rng_state.pt")) {
            torch::Tensor cuda_rng;
            torch::load(cuda_rng, (fs::path(dir) / "cuda_rng_state.pt").string());
            auto cuda_gen = at::globalContext().defaultGenerator(parts.device);
            std::lock_guard<std::mutex> lock(cuda_gen.mutex());
            cuda_gen.set_state(cuda_rng);
        }
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
        parts.log.restore(state);
        return progress;
    } catch (const DataError&) {
        throw;
    } catch (const ConfigError&) {
        throw;
    } catch (const std::exception& e) {
        throw DataError("--resume: " + dir + " is not a usable checkpoint: " + e.what());
    }
}

} // namespace accum
