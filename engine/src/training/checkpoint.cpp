#include "training/checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include <fcntl.h>
#include <unistd.h>

#include <ATen/CPUGeneratorImpl.h>
#include <nlohmann/json.hpp>
#include <torch/serialize.h>

#include "accum/errors.h"
#include "training/run_context.h"

namespace accum {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void fsync_path(const fs::path& p) {
    const int fd = ::open(p.c_str(), O_RDONLY);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

std::int64_t checkpoint_step(const fs::path& p) {
    static const std::regex re("checkpoint-([0-9]+)");
    std::smatch m;
    const std::string name = p.filename().string();
    if (std::regex_match(name, m, re)) return std::stoll(m[1]);
    return -1;
}

bool complete(const fs::path& dir) {
    for (const char* f : {"model.pt", "optimizer.pt", "rng_state.pt", "trainer_state.json"})
        if (!fs::exists(dir / f)) return false;
    return true;
}

} // namespace

std::string save_checkpoint(RunContext& ctx, const std::string& output_dir, const std::vector<std::string>& log_history,
                            double best_metric, int save_total_limit) {
    const fs::path final_dir = fs::path(output_dir) / ("checkpoint-" + std::to_string(ctx.progress.global_step));
    const fs::path tmp_dir = fs::path(output_dir) / (".checkpoint-" + std::to_string(ctx.progress.global_step) + ".tmp");
    fs::remove_all(tmp_dir);
    fs::create_directories(tmp_dir);
    {
        torch::serialize::OutputArchive archive;
        ctx.model->save(archive);
        archive.save_to((tmp_dir / "model.pt").string());
    }
    {
        torch::serialize::OutputArchive archive;
        ctx.optimizer->save(archive);
        archive.save_to((tmp_dir / "optimizer.pt").string());
    }
    {
        auto gen = at::detail::getDefaultCPUGenerator();
        torch::Tensor state;
        {
            std::lock_guard<std::mutex> lock(gen.mutex());
            state = gen.get_state();
        }
        torch::save(state, (tmp_dir / "rng_state.pt").string());
    }
    json state;
    state["global_step"] = ctx.progress.global_step;
    state["epoch"] = ctx.fractional_epoch(ctx.progress.next_index);
    state["progress"] = {{"epoch", ctx.progress.epoch},
                         {"next_index", ctx.progress.next_index},
                         {"micro_steps", ctx.progress.micro_steps_at_step},
                         {"samples_seen", ctx.progress.samples_at_step},
                         {"elapsed_s", ctx.elapsed_s()},
                         {"last_loss", std::isfinite(ctx.progress.last_loss) ? json(ctx.progress.last_loss) : json()}};
    state["scheduler"] = {{"step_count", ctx.lr_scheduler->step_count()},
                          {"total_steps", ctx.lr_scheduler->total_steps()},
                          {"last_lr", ctx.lr_scheduler->current_lr()}};
    state["max_steps"] = ctx.total_updates();
    state["num_train_epochs"] = ctx.num_epochs();
    state["logging_steps"] = ctx.config.logging_steps;
    state["eval_steps"] = ctx.config.eval_steps;
    state["save_steps"] = ctx.config.save_steps;
    state["train_batch_size"] = ctx.config.batch_size;
    state["gradient_accumulation_steps"] = ctx.config.accumulation_steps;
    state["best_metric"] = std::isfinite(best_metric) ? json(best_metric) : json();
    json history = json::array();
    for (const auto& h : log_history) history.push_back(json::parse(h));
    state["log_history"] = history;
    {
        std::ofstream f(tmp_dir / "trainer_state.json");
        f << state.dump(2) << "\n";
    }
    for (const auto& entry : fs::directory_iterator(tmp_dir)) fsync_path(entry.path());
    fsync_path(tmp_dir);
    fs::remove_all(final_dir);
    fs::rename(tmp_dir, final_dir);
    fsync_path(output_dir);

    if (save_total_limit > 0) {
        std::vector<fs::path> all;
        for (const auto& entry : fs::directory_iterator(output_dir))
            if (entry.is_directory() && checkpoint_step(entry.path()) >= 0) all.push_back(entry.path());
        std::sort(all.begin(), all.end(),
                  [](const fs::path& a, const fs::path& b) { return checkpoint_step(a) < checkpoint_step(b); });
        while (static_cast<int>(all.size()) > save_total_limit) {
            fs::remove_all(all.front());
            all.erase(all.begin());
        }
    }
    return final_dir.string();
}

std::string latest_checkpoint(const std::string& dir) {
    if (!fs::is_directory(dir)) return {};
    if (complete(dir)) return dir;
    std::string best;
    std::int64_t best_step = -1;
    for (const auto& entry : fs::directory_iterator(dir)) {
        const auto step = checkpoint_step(entry.path());
        if (entry.is_directory() && step > best_step && complete(entry.path())) {
            best_step = step;
            best = entry.path().string();
        }
    }
    return best;
}

std::int64_t checkpoint_global_step(const std::string& checkpoint_dir) {
    if (checkpoint_dir.empty()) return -1;
    try {
        std::ifstream f(fs::path(checkpoint_dir) / "trainer_state.json");
        return json::parse(f).at("global_step").get<std::int64_t>();
    } catch (const std::exception&) {
        return -1;
    }
}

void load_checkpoint(RunContext& ctx, const std::string& requested, std::vector<std::string>* log_history) {
    const std::string dir = latest_checkpoint(requested);
    if (dir.empty())
        throw DataError("--resume: " + requested + " holds no complete checkpoint (checkpoint-N with model.pt, "
                        "optimizer.pt, rng_state.pt, trainer_state.json)");
    json state;
    try {
        std::ifstream f(fs::path(dir) / "trainer_state.json");
        state = json::parse(f);
        if (state.at("gradient_accumulation_steps").get<std::int64_t>() != ctx.config.accumulation_steps ||
            state.at("train_batch_size").get<std::int64_t>() != ctx.config.batch_size)
            throw ConfigError("--resume: " + dir + " was written with micro-batch " +
                            std::to_string(state.at("train_batch_size").get<std::int64_t>()) + " × " +
                            std::to_string(state.at("gradient_accumulation_steps").get<std::int64_t>()) +
                            "; resume with the same --batch-size and --accumulation-steps");
        torch::serialize::InputArchive model_archive;
        model_archive.load_from((fs::path(dir) / "model.pt").string(), ctx.device);
        ctx.model->load(model_archive);
        torch::serialize::InputArchive optimizer_archive;
        optimizer_archive.load_from((fs::path(dir) / "optimizer.pt").string(), ctx.device);
        ctx.optimizer->load(optimizer_archive);
        torch::Tensor rng;
        torch::load(rng, (fs::path(dir) / "rng_state.pt").string());
        auto gen = at::detail::getDefaultCPUGenerator();
        {
            std::lock_guard<std::mutex> lock(gen.mutex());
            gen.set_state(rng);
        }
        const auto& p = state.at("progress");
        ctx.progress.epoch = p.at("epoch").get<std::int64_t>();
        ctx.progress.next_index = p.at("next_index").get<std::int64_t>();
        ctx.progress.global_step = state.at("global_step").get<std::int64_t>();
        ctx.progress.micro_steps = p.at("micro_steps").get<std::int64_t>();
        ctx.progress.samples_seen = p.at("samples_seen").get<std::int64_t>();
        ctx.progress.micro_steps_at_step = ctx.progress.micro_steps;
        ctx.progress.samples_at_step = ctx.progress.samples_seen;
        ctx.progress.elapsed_before_s = p.at("elapsed_s").get<double>();
        ctx.progress.last_loss = p.at("last_loss").is_number() ? p.at("last_loss").get<double>() : std::nan("");
        ctx.lr_scheduler->set_step_count(state.at("scheduler").at("step_count").get<std::int64_t>());
        if (ctx.progress.next_index >= ctx.micro_batches_per_epoch()) {
            ctx.progress.next_index = 0;
            ++ctx.progress.epoch;
        }
        if (log_history)
            for (const auto& h : state.at("log_history")) log_history->push_back(h.dump());
    } catch (const DataError&) {
        throw;
    } catch (const ConfigError&) {
        throw;
    } catch (const std::exception& e) {
        throw DataError("--resume: " + dir + " is not a usable checkpoint: " + e.what());
    }
}

} // namespace accum
