// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed/host_ranks.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>

#include <torch/cuda.h>

#include "accum/engine_messages.h"
#include "checked_file.h"
#include "distributed/data_parallel.h"
#include "distributed/launcher.h"
#include "distributed/process_group.h"
#include "distributed/world.h"
#include "summaries.h"

namespace accum::dist {

namespace {

// A temporary file for the configuration ranks 1 … N−1 read (--config),
// removed with this.
struct ConfigFile {
    std::string path = (std::filesystem::temp_directory_path() / "accum-ranks-XXXXXX.json").string();
    ConfigFile() {
        const int fd = ::mkstemps(path.data(), 5);
        if (fd < 0) throw std::runtime_error("cannot create a file for the other ranks' configuration in " +
                                             std::filesystem::temp_directory_path().string());
        ::close(fd);
    }
    ~ConfigFile() {
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
};

} // namespace

EngineMessage distributed_message(const DistributedError& e) {
    auto message = make_message(message_code::distributed_failure,
                                {{"rank", std::to_string(e.rank())},
                                 {"kind", failure_kind_name(e.kind())},
                                 {"detail", error_text(e)}});
    if (e.peer() >= 0) message.args["peer"] = std::to_string(e.peer());
    return message;
}

SummaryRecord run_rank(RunConfig config, const WorldInfo& world, Sink& sink, const StopQuery& stop,
                       const TrainRank& train, std::function<bool()> abandon) {
    auto refused = [&](int code, EngineMessage message) {
        auto summary = failed_summary(RunStatus::Error, code, std::move(message), world.world_size);
        announce_failure(world, config.dist_timeout_s, summary.message);
        return summary;
    };
    if (const auto problems = validate(config); !problems.empty())
        return refused(exit_code::invalid_arguments, problems_message(problems));
    // Ranks on one machine with CUDA: one device each, by local rank.
    if ((config.device == "auto" || config.device == "cuda") && torch::cuda::device_count() > 0)
        config.device = "cuda:" + std::to_string(world.local_rank % static_cast<int>(torch::cuda::device_count()));
    std::unique_ptr<DistributedState> state;
    try {
        GroupOptions options;
        options.world = world;
        options.backend = resolve_backend(config.backend, config.device != "cpu" && torch::cuda::is_available());
        options.timeout = parse_dist_timeout(config.dist_timeout_s);
        options.cuda_device = world.local_rank;
        // Joining gives up early when asked to stop (SIGTERM from a launcher, the
        // studio's Stop) or when the caller knows the others are gone.
        options.abandon = [&stop, abandon = std::move(abandon)] { return stop.requested() || (abandon && abandon()); };
        // A stop is agreed at the next gradient sync, within milliseconds; one
        // that has waited 2 s in a collective has a peer that will not answer
        // (stalled): give up instead of waiting out --dist-timeout.
        options.abort = [&stop] { return stop.requested_for() > std::chrono::seconds(2); };
        state = std::make_unique<DistributedState>(ProcessGroup::connect(options));
    } catch (const ConfigError& e) {
        return refused(exit_code::invalid_arguments, e.detail());
    } catch (const DistributedError& e) {
        if (stop.requested())
            return failed_summary(RunStatus::Stopped, exit_code::interrupted,
                                  make_message(message_code::stopped_before_start), world.world_size);
        return failed_summary(RunStatus::Error, exit_code::distributed_failure, distributed_message(e),
                              world.world_size);
    }
    const DefaultStateScope scope(state.get());
    SummaryRecord summary = train(config, world.local_world_size);
    // A failure of this rank's own reaches the others at once; one of the group
    // is theirs as much as this rank's.
    if (summary.status != RunStatus::Completed && summary.status != RunStatus::Stopped) {
        if (summary.exit_code != exit_code::distributed_failure) state->group().announce_failure(summary.message);
    } else {
        try {
            state->group().barrier();
        } catch (const DistributedError& e) {
            // The work is done and saved; a peer that ended early is reported, not fatal.
            sink.on_log(std::string("note: the ranks did not meet at the end: ") + error_text(e));
        }
    }
    summary.world_size = world.world_size;
    return summary;
}

SummaryRecord host_ranks(const RunConfig& config, const std::string& program, Sink& sink, const StopQuery& stop,
                         const TrainRank& train) {
    const int world_size = static_cast<int>(config.world_size());
    auto refuse = [world_size](int code, EngineMessage message) {
        return failed_summary(RunStatus::Error, code, std::move(message), world_size);
    };
    if (config.nnodes > 1)
        return refuse(exit_code::invalid_arguments,
                      config_message("--nnodes: a run started here uses processes on this machine only; "
                                     "start each machine's ranks with accum-run --nnodes " +
                                     std::to_string(config.nnodes)));
    if (program.empty() || ::access(program.c_str(), X_OK) != 0)
        return refuse(exit_code::invalid_arguments,
                      make_message(message_code::worker_program_missing,
                                   {{"processes", std::to_string(config.nproc_per_node)}, {"program", program}}));
    if (const auto problems = validate(config); !problems.empty())
        return refuse(exit_code::invalid_arguments, problems_message(problems));
    std::optional<ConfigFile> file;
    LaunchOptions options;
    try {
        file.emplace();
        io::write_file(file->path, to_json_text(config) + "\n"); // WriteError: the run cannot start
        options.plan = {config.nproc_per_node, 1, 0, "127.0.0.1", pick_free_port("127.0.0.1")};
    } catch (const WriteError& e) {
        return refuse(exit_code::write_failed, e.detail());
    } catch (const std::exception& e) {
        return refuse(exit_code::failure, make_message(message_code::internal_error, {{"error", error_text(e)}}));
    }
    options.executable = program;
    options.arguments = {"train", "--config", file->path, "--quiet"};
    options.first_local_rank = 1;
    options.forward_signals = false;
    options.stop_grace = std::chrono::seconds(3);
    std::atomic<bool> stop_workers{false};
    options.stop = [&] { return stop_workers.load(); };
    // What became of ranks 1 … N−1 ("" when all of them ended well).
    auto launched = std::async(std::launch::async, [&options]() -> std::string {
        try {
            return launch_workers(options).message;
        } catch (const std::exception& e) {
            return error_text(e);
        }
    });
    const auto workers_done = [&] { return launched.wait_for(std::chrono::seconds(0)) == std::future_status::ready; };
    SummaryRecord summary = run_rank(config, worker_world(options.plan, 0), sink, stop, train,
                                     [&] { return workers_done() || stop.requested(); });
    const bool ended_well = summary.status == RunStatus::Completed || summary.status == RunStatus::Stopped;
    if (ended_well) launched.wait_for(std::chrono::seconds(5));
    stop_workers = true;
    const std::string workers = launched.get();
    if (!ended_well && !workers.empty() && summary.detail.code == message_code::distributed_failure) {
        summary.detail.args["workers"] = workers;
        summary.message = english_text(summary.detail);
    }
    return summary;
}

} // namespace accum::dist
