#include "distributed/host_ranks.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <thread>

#include <torch/cuda.h>

#include "accum/engine_messages.h"
#include "accum/errors.h"
#include "checked_file.h"
#include "distributed/data_parallel.h"
#include "distributed/launcher.h"
#include "distributed/process_group.h"
#include "distributed/world.h"
#include "summaries.h"

namespace accum::dist {

namespace {

bool runs_on_cuda(const RunConfig& config) { return config.device != "cpu" && torch::cuda::is_available(); }

// The configuration written where ranks 1 … N−1 read it (--config), removed after the run.
class ConfigFile {
public:
    explicit ConfigFile(const RunConfig& config) {
        std::string pattern = (std::filesystem::temp_directory_path() / "accum-ranks-XXXXXX.json").string();
        const int fd = ::mkstemps(pattern.data(), 5);
        if (fd < 0) throw std::runtime_error("cannot create a file for the other ranks' configuration in " +
                                             std::filesystem::temp_directory_path().string());
        ::close(fd);
        path_ = pattern;
        try {
            io::write_file(path_, to_json_text(config) + "\n"); // WriteError: the run cannot start
        } catch (...) {
            ::unlink(path_.c_str());
            throw;
        }
    }
    ~ConfigFile() {
        std::error_code ec;
        std::filesystem::remove(path_, ec);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

} // namespace

// A failure of the process group as the summary says it: the error's text
// (which names this rank and, when known, the one at fault) and its facts.
EngineMessage distributed_message(const DistributedError& e) {
    auto message = make_message(message_code::distributed_failure,
                                {{"rank", std::to_string(e.rank())},
                                 {"kind", failure_kind_name(e.kind())},
                                 {"detail", error_text(e)}});
    if (e.peer() >= 0) message.args["peer"] = std::to_string(e.peer());
    return message;
}


SummaryRecord run_rank(const RunConfig& given, const WorldInfo& world, Sink& sink, const StopQuery& stop,
                       const TrainRank& train, std::function<bool()> abandon) {
    RunConfig config = given;
    // A rank that cannot join says why where the others wait for it (they stop
    // within seconds, naming it), then ends.
    auto refused = [&](int code, EngineMessage message) {
        auto summary = failed_summary(RunStatus::Error, code, std::move(message), world.world_size);
        announce_failure(world, config.dist_timeout_s, summary.message);
        return summary;
    };
    if (const auto problems = validate(config); !problems.empty())
        return refused(exit_code::invalid_arguments, problems_message(problems));
    // Ranks on one machine with CUDA: one device each, by local rank.
    if (runs_on_cuda(config) && (config.device == "auto" || config.device == "cuda") && torch::cuda::device_count() > 0)
        config.device = "cuda:" + std::to_string(world.local_rank % static_cast<int>(torch::cuda::device_count()));
    std::unique_ptr<DistributedState> state;
    try {
        GroupOptions options;
        options.world = world;
        options.backend = resolve_backend(config.backend, runs_on_cuda(config));
        options.timeout = parse_dist_timeout(config.dist_timeout_s);
        options.cuda_device = world.local_rank;
        // Joining gives up early when asked to stop (SIGTERM from a launcher, the
        // studio's Stop) or when the caller knows the others are gone.
        options.abandon = [&stop, abandon = std::move(abandon)] { return stop.requested() || (abandon && abandon()); };
        // A stop is agreed at the next gradient sync, within milliseconds; one
        // that has waited 2 s in a collective has a peer that will not answer
        // (stalled): give up instead of waiting out --dist-timeout.
        options.abort = [&stop] { return stop.requested_for() > std::chrono::seconds(2); };
        state = std::make_unique<DistributedState>(ProcessGroup::connect(options), world);
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
    // A failure of this rank's own (a write that failed, out of memory, bad
    // data): the others, waiting for it at the next sync, learn it at once. A
    // failure of the group is theirs as much as this rank's.
    if (summary.status != RunStatus::Completed && summary.status != RunStatus::Stopped &&
        summary.exit_code != exit_code::distributed_failure)
        state->group().announce_failure(summary.message);
    if (summary.status == RunStatus::Completed || summary.status == RunStatus::Stopped) {
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
    if (config.nnodes > 1)
        return failed_summary(RunStatus::Error, exit_code::invalid_arguments,
                              config_message("--nnodes: a run started here uses processes on this machine only; "
                                             "start each machine's ranks with accum-run --nnodes " +
                                             std::to_string(config.nnodes)),
                              world_size);
    if (program.empty() || ::access(program.c_str(), X_OK) != 0)
        return failed_summary(RunStatus::Error, exit_code::invalid_arguments,
                              make_message(message_code::worker_program_missing,
                                           {{"processes", std::to_string(config.nproc_per_node)},
                                            {"program", program}}),
                              world_size);
    if (const auto problems = validate(config); !problems.empty())
        return failed_summary(RunStatus::Error, exit_code::invalid_arguments, problems_message(problems), world_size);
    std::unique_ptr<ConfigFile> file;
    LaunchOptions options;
    try {
        file = std::make_unique<ConfigFile>(config);
        options.plan = {config.nproc_per_node, 1, 0, "127.0.0.1", pick_free_port("127.0.0.1")};
    } catch (const WriteError& e) {
        return failed_summary(RunStatus::Error, exit_code::write_failed, e.detail(), world_size);
    } catch (const std::exception& e) {
        return failed_summary(RunStatus::Error, exit_code::failure,
                              make_message(message_code::internal_error, {{"error", error_text(e)}}), world_size);
    }
    options.executable = program;
    options.arguments = {"train", "--config", file->path(), "--quiet"};
    for (int r = 1; r < config.nproc_per_node; ++r) options.local_ranks.push_back(r);
    options.forward_signals = false;
    options.stop_grace = std::chrono::seconds(3);
    std::atomic<bool> stop_workers{false};
    std::atomic<bool> workers_done{false};
    options.stop = [&] { return stop_workers.load(); };
    LaunchResult launched;
    std::thread launcher([&] {
        try {
            launched = launch_workers(options);
        } catch (const std::exception& e) {
            launched.exit_code = exit_code::invalid_arguments;
            launched.message = error_text(e);
        }
        workers_done = true;
    });
    SummaryRecord summary = run_rank(config, worker_world(options.plan, 0), sink, stop, train,
                                     [&] { return workers_done.load() || stop.requested(); });
    // The workers end with rank 0: by themselves after a run that ended well
    // (within a few seconds), else stopped now.
    const bool ended_well = summary.status == RunStatus::Completed || summary.status == RunStatus::Stopped;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(ended_well ? 5 : 0);
    while (!workers_done.load() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop_workers = true;
    launcher.join();
    if (!ended_well && !launched.message.empty() && summary.detail.code == message_code::distributed_failure) {
        summary.detail.args["workers"] = launched.message; // what became of ranks 1 … N−1
        summary.message = english_text(summary.detail);
    }
    return summary;
}


} // namespace accum::dist
// SPDX-License-Identifier: GPL-3.0-or-later
