#include "accum/session.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <c10/util/Exception.h>
#include <torch/cuda.h>
#include <torch/utils.h>
#include <torch/version.h>

#include "accum/engine_messages.h"
#include "accum/errors.h"
#include "accum/memory_planner.h"
#include "checked_file.h"
#include "distributed/data_parallel.h"
#include "distributed/launcher.h"
#include "distributed/process_group.h"
#include "kernels/kernels.h"
#include "memory/counting_allocator.h"
#include "memory/cuda_memory.h"
#include "memory/estimate_guard.h"
#include "memory/out_of_memory.h"
#include "styles/styles.h"
#include "switches.h"
#include "training/control.h"
#include "training/run_context.h"

namespace accum {

struct Session::Control {
    RunControl control;
    std::string worker_program;
};

Session::Session() : control_(std::make_unique<Control>()) {}
Session::~Session() = default;

void Session::pause() { control_->control.pause(); }
void Session::resume() { control_->control.resume(); }
void Session::step_once() { control_->control.step_once(); }
bool Session::is_paused() const { return control_->control.paused(); }
void Session::set_worker_program(std::string program) { control_->worker_program = std::move(program); }

namespace {

std::string first_line(const std::string& text) {
    const auto nl = text.find('\n');
    return nl == std::string::npos ? text : text.substr(0, nl);
}

// What an out-of-memory run leaves for its message and suggestion.
struct OutOfMemoryFacts {
    std::int64_t budget = 0;    // the configured budget (0: none)
    std::int64_t peak = 0;      // tensor memory the run reached
    std::string detail;         // LibTorch's own first line
    std::int64_t requested = 0; // the allocation the counting allocator denied (0: not known)
    std::int64_t in_use = 0;    // and the memory in use then
};

// The out-of-memory message (engine_messages.h): what ran out, with `suggestion`
// (a suggest_* message) inside; none while auto_find_batch_size retries.
EngineMessage out_of_memory_message(const RunConfig& config, const OutOfMemoryFacts& oom,
                                    const EngineMessage& suggestion = {}) {
    auto args = suggestion.args;
    args["batch_size"] = std::to_string(config.batch_size);
    args["accumulation_steps"] = std::to_string(config.accumulation_steps);
    if (oom.budget > 0) args["budget"] = format_byte_size(oom.budget);
    args["peak"] = format_byte_size(oom.peak);
    args["error"] = oom.detail;
    if (oom.requested > 0) {
        args["requested"] = format_byte_size(oom.requested);
        args["in_use"] = format_byte_size(oom.in_use);
    }
    if (!suggestion.code.empty()) args["suggestion"] = suggestion.code;
    return make_message(message_code::out_of_memory, std::move(args));
}

// The suggestion of micro-batch b × k for an effective batch that is `target` or the nearest above.
EngineMessage suggest(const char* code, std::int64_t b, std::int64_t k, std::int64_t target) {
    return make_message(code, {{"suggested_batch_size", std::to_string(b)},
                               {"suggested_accumulation_steps", std::to_string(k)},
                               {"effective_batch", std::to_string(b * k)},
                               {"exact", b * k == target ? "yes" : ""}});
}

// The suggestion an out-of-memory summary carries: a smaller micro-batch with
// more accumulation steps for the same effective batch, with or without
// gradient checkpointing. Under a configured budget it is measured
// (plan_memory: a probe of each lever and a short run of each pick, seconds),
// because a guess can run out of memory again — the CNN at 256 × 1 under 40 MiB
// halved to 128 × 2, which needs 45 MiB — and the studio applies it in one click.
// Without a budget, or when measuring is cut short (a stop, a probe's failure, a
// plan that does not finish), the guess is half the micro-batch.
void suggest_after_out_of_memory(const RunConfig& config, const OutOfMemoryFacts& oom, SummaryRecord& summary,
                                 Sink& sink, RunControl& control) {
    const std::int64_t b = config.batch_size, k = config.accumulation_steps;
    if (b <= 1) {
        set_message(summary, out_of_memory_message(config, oom, make_message(message_code::suggest_batch_one)));
        return;
    }
    std::int64_t nb = (b + 1) / 2;
    while (nb > 1 && (b * k) % nb != 0) --nb; // keep micro-batch × K equal to the effective batch when it divides
    const std::int64_t nk = (b * k + nb - 1) / nb;
    summary.suggested_batch_size = nb;
    summary.suggested_accumulation_steps = nk;
    set_message(summary, out_of_memory_message(config, oom, suggest(message_code::suggest_halved, nb, nk, b * k)));
    if (oom.budget <= 0 || measuring_memory() || control.stop_requested()) return;

    const auto target = config.effective_batch();
    sink.on_log("out of memory: measuring which micro-batch reaches effective batch " + std::to_string(target) +
                " under the " + format_byte_size(oom.budget) + " budget");
    const auto plan = plan_memory(
        config, target, oom.budget, [&](const std::string& step) { sink.on_log("  " + step); },
        [&] { return control.stop_requested(); });
    if (plan.verified) {
        summary.suggested_batch_size = plan.batch_size;
        summary.suggested_accumulation_steps = plan.accumulation_steps;
        summary.suggested_gradient_checkpointing = plan.gradient_checkpointing;
        auto measured = suggest(message_code::suggest_measured, plan.batch_size, plan.accumulation_steps, target);
        measured.args["measured_peak"] = format_byte_size(plan.verified_peak_bytes);
        if (plan.gradient_checkpointing) measured.args["checkpointing"] = "yes";
        if (!plan.why.code.empty()) { // why this lever: its code and its arguments
            measured.args.insert(plan.why.args.begin(), plan.why.args.end());
            measured.args["why"] = plan.why.code;
        }
        set_message(summary, out_of_memory_message(config, oom, measured));
    } else if (plan.nothing_fits) {
        summary.suggested_batch_size = 0;
        summary.suggested_accumulation_steps = 0;
        auto nothing_fits = make_message(message_code::suggest_nothing_fits, plan.reason.args);
        nothing_fits.args["plan"] = plan.reason.code;
        set_message(summary, out_of_memory_message(config, oom, nothing_fits));
    }
}

bool runs_on_cuda(const RunConfig& config) { return config.device != "cpu" && torch::cuda::is_available(); }

// Memory from here on is counted as device memory and the budget applies: on the
// CPU through the counting allocator, on CUDA as the caching allocator's memory
// fraction. The model was built before counting began; its parameters move into
// counted storage, as they would sit in device memory.
void prepare_memory(RunContext& ctx, std::int64_t budget) {
    if (ctx.device.is_cuda()) {
        // Every run sets the fraction: a budget from an earlier run in this process
        // (the studio) must not stay in force.
        const auto total = memory::cuda_stats(ctx.device.index()).device_total;
        const double fraction = budget > 0 && total > 0 ? std::min(1.0, static_cast<double>(budget) / total) : 1.0;
        memory::cuda_set_memory_fraction(fraction, ctx.device.index());
        memory::cuda_reset_peak(ctx.device.index());
    } else {
        memory::set_cpu_budget(budget);
        memory::reset_run_peak();
    }
    torch::NoGradGuard guard;
    for (auto& p : ctx.model->parameters()) p.set_data(p.clone());
}

// On stop or divergence: a checkpoint of the last finished optimizer step (the
// weights never include a half window), unless one exists already. Its path is
// the message's argument `checkpoint` (none when none was written), or why not
// `checkpoint_error`.
void checkpoint_on_the_way_out(RunContext& ctx, std::map<std::string, std::string>& args) {
    try {
        if (auto saved = ctx.save_checkpoint(); !saved.empty()) args["checkpoint"] = std::move(saved);
    } catch (const std::exception& e) {
        args["checkpoint_error"] = first_line(e.what());
    }
}

// The counters of the summary, from what the run did.
void summarise(const RunContext* ctx, std::chrono::steady_clock::time_point wall_start, SummaryRecord& summary) {
    if (ctx) {
        summary.optimizer_steps = ctx->progress.global_step;
        summary.micro_steps = ctx->progress.micro_steps;
        summary.samples_seen = ctx->progress.samples_seen;
        summary.train_runtime_s = ctx->elapsed_s();
        summary.final_loss = ctx->progress.last_loss;
        summary.peak_memory_bytes = ctx->run_peak_memory_bytes();
    } else {
        summary.train_runtime_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    }
    summary.samples_per_second =
        summary.train_runtime_s > 0 ? static_cast<double>(summary.samples_seen) / summary.train_runtime_s : 0.0;
}

// The configuration's problems as one message: the first, and the others after it.
EngineMessage problems_message(const std::vector<ConfigProblem>& problems) {
    std::string more;
    for (std::size_t i = 1; i < problems.size(); ++i) more += (more.empty() ? "" : "; ") + problems[i].to_string();
    auto message = make_message(message_code::invalid_configuration,
                                {{"option", problems[0].option}, {"problem", problems[0].message}});
    if (!more.empty()) message.args["more"] = more;
    return message;
}

// A failure of the process group as the summary says it: the error's text
// (which names this rank and, when known, the one at fault) and its facts.
EngineMessage distributed_message(const DistributedError& e) {
    auto message = make_message(message_code::distributed_failure,
                                {{"rank", std::to_string(e.rank())},
                                 {"kind", dist::failure_kind_name(e.kind())},
                                 {"detail", e.what()}});
    if (e.peer() >= 0) message.args["peer"] = std::to_string(e.peer());
    return message;
}

// `local_processes`: the ranks of this run on this machine, which share its cores.
SummaryRecord run_once(const RunConfig& config, Sink& sink, RunControl& control, OutOfMemoryFacts* oom = nullptr,
                       int local_processes = 1) {
    SummaryRecord summary;
    summary.final_loss = std::nan("");
    summary.cpu_kernels = to_string(config.cpu_kernels);
    if (const auto* state = dist::default_state()) summary.world_size = state->world_size();
    if (control.stop_requested()) {
        summary.status = RunStatus::Stopped;
        summary.exit_code = exit_code::interrupted;
        set_message(summary, make_message(message_code::stopped_before_start));
        return summary;
    }
    const auto problems = validate(config);
    if (!problems.empty()) {
        summary.status = RunStatus::Error;
        summary.exit_code = exit_code::invalid_arguments;
        set_message(summary, problems_message(problems));
        return summary;
    }

    // ACCUM_COUNTING_ALLOCATOR=0 leaves LibTorch's allocator alone (for the
    // allocator-overhead benchmark; memory figures and budgets are then 0/off).
    static const bool counting_allocator = !switched_off("ACCUM_COUNTING_ALLOCATOR");
    if (counting_allocator) memory::install_counting_allocator();
    // Declared before the run's context, so it runs after the context (model,
    // optimizer, data) is gone: the blocks kept for reuse go back to the system.
    struct ReleaseCachedBlocks {
        ~ReleaseCachedBlocks() { memory::release_cached_blocks(); }
    } release_cached_blocks;
    const int cores =
        std::max(1, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) / std::max(1, local_processes));
    apply_threads(choose_threads(config, runs_on_cuda(config), cores));
    const auto budget = parse_byte_size(config.memory_budget).value_or(0);
    std::unique_ptr<RunContext> ctx;
    const auto wall_start = std::chrono::steady_clock::now();
    try {
        memory::set_cpu_budget(0);
        ctx = std::make_unique<RunContext>(config, sink, control); // data are loaded uncounted
        summary.device = ctx->device.str();
        memory::CountingScope counting; // from here on, tensor memory counts (and the budget applies)
        prepare_memory(*ctx, budget);
        ctx->emit_memory_record();
        run_style(*ctx);
        if (ctx->stopped()) {
            summary.status = RunStatus::Stopped;
            summary.exit_code = exit_code::interrupted;
            auto message = make_message(message_code::stopped, {{"step", std::to_string(ctx->progress.global_step)}});
            checkpoint_on_the_way_out(*ctx, message.args);
            set_message(summary, std::move(message));
        } else {
            summary.status = RunStatus::Completed;
            auto message =
                make_message(message_code::completed, {{"steps", std::to_string(ctx->progress.global_step)}});
            if (ctx->skipped_updates > 0) message.args["skipped"] = std::to_string(ctx->skipped_updates);
            if (ctx->overflow_skips > 0) message.args["overflow_skipped"] = std::to_string(ctx->overflow_skips);
            set_message(summary, std::move(message));
        }
    } catch (const DataError& e) {
        summary.status = RunStatus::Error;
        summary.exit_code = exit_code::data_error;
        set_message(summary, e.detail());
    } catch (const ConfigError& e) {
        summary.status = RunStatus::Error;
        summary.exit_code = exit_code::invalid_arguments;
        set_message(summary, e.detail());
    } catch (const DistributedError& e) {
        summary.status = RunStatus::Error;
        summary.exit_code = exit_code::distributed_failure;
        set_message(summary, distributed_message(e));
    } catch (const WriteError& e) {
        // A checkpoint or a record could not be written: the run ends here, the
        // checkpoint's temporary directory removed, the earlier ones as they
        // were. No checkpoint on the way out: the disk that refused one would.
        summary.status = RunStatus::Error;
        summary.exit_code = exit_code::write_failed;
        set_message(summary, e.detail());
    } catch (const DivergedError& e) {
        summary.status = RunStatus::Diverged;
        summary.exit_code = exit_code::diverged;
        auto message = e.detail(); // "diverged: …"
        if (ctx) checkpoint_on_the_way_out(*ctx, message.args);
        set_message(summary, std::move(message));
    } catch (const std::exception& e) {
        if (is_out_of_memory_error(e)) {
            summary.status = RunStatus::OutOfMemory;
            summary.exit_code = exit_code::out_of_memory;
            if (oom) {
                *oom = {budget, ctx ? ctx->run_peak_memory_bytes() : 0, first_line(e.what())};
                if (ctx && !ctx->device.is_cuda()) { // the counting allocator's refusal
                    const auto denied = memory::last_denied_allocation();
                    oom->requested = denied.bytes;
                    oom->in_use = denied.in_use;
                }
            }
        } else {
            summary.status = RunStatus::Error;
            summary.exit_code = exit_code::failure;
            set_message(summary, make_message(message_code::internal_error, {{"error", first_line(e.what())}}));
        }
    }
    summarise(ctx.get(), wall_start, summary);
    if (ctx) {
        try {
            ctx->emit_memory_record();
        } catch (const WriteError& e) { // the run's last record: a run that had not failed fails with it
            if (summary.status == RunStatus::Completed || summary.status == RunStatus::Stopped) {
                summary.status = RunStatus::Error;
                summary.exit_code = exit_code::write_failed;
                set_message(summary, e.detail());
            }
        }
    }
    // Release everything the run held before reporting, so the next run starts clean.
    const bool was_cuda = ctx && ctx->device.is_cuda();
    ctx.reset();
    memory::set_cpu_budget(0);
    if (was_cuda) memory::cuda_empty_cache();
    return summary;
}

dist::Backend backend_of(Backend b) {
    switch (b) {
    case Backend::Gloo: return dist::Backend::Gloo;
    case Backend::Nccl: return dist::Backend::Nccl;
    case Backend::Auto: break;
    }
    return dist::Backend::Auto;
}

SummaryRecord failed_summary(RunStatus status, int code, EngineMessage message, int world_size) {
    SummaryRecord summary;
    summary.final_loss = std::nan("");
    summary.status = status;
    summary.exit_code = code;
    set_message(summary, std::move(message));
    summary.world_size = world_size;
    return summary;
}

EngineMessage config_message(const std::string& text) {
    return make_message(message_code::config_error, {{"detail", text}});
}

// One rank of a data-parallel run: joins the process group (its timeout and
// backend from the config), makes it this thread's default for the run, trains,
// and meets the others once more at the end so that none leaves while another
// still needs it.
SummaryRecord run_rank(const RunConfig& given, const dist::WorldInfo& world, Sink& sink, RunControl& control,
                       std::function<bool()> abandon = {}) {
    RunConfig config = given;
    // A rank that cannot join says why where the others wait for it (they stop
    // within seconds, naming it), then ends.
    auto refused = [&](int code, EngineMessage message) {
        auto summary = failed_summary(RunStatus::Error, code, std::move(message), world.world_size);
        dist::announce_failure(world, config.dist_timeout_s, summary.message);
        return summary;
    };
    if (const auto problems = validate(config); !problems.empty())
        return refused(exit_code::invalid_arguments, problems_message(problems));
    // Ranks on one machine with CUDA: one device each, by local rank.
    if (runs_on_cuda(config) && (config.device == "auto" || config.device == "cuda") && torch::cuda::device_count() > 0)
        config.device = "cuda:" + std::to_string(world.local_rank % static_cast<int>(torch::cuda::device_count()));
    std::unique_ptr<dist::DistributedState> state;
    try {
        dist::GroupOptions options;
        options.world = world;
        options.backend = dist::resolve_backend(backend_of(config.backend), runs_on_cuda(config));
        options.timeout = dist::parse_dist_timeout(config.dist_timeout_s);
        options.cuda_device = world.local_rank;
        // Joining gives up early when asked to stop (SIGTERM from a launcher, the
        // studio's Stop) or when the caller knows the others are gone.
        options.abandon = [&control, abandon = std::move(abandon)] {
            return control.stop_requested() || (abandon && abandon());
        };
        // A stop is agreed at the next gradient sync, within milliseconds; one
        // that has waited 2 s in a collective has a peer that will not answer
        // (stalled): give up instead of waiting out --dist-timeout.
        options.abort = [&control] { return control.stop_requested_for() > std::chrono::seconds(2); };
        state = std::make_unique<dist::DistributedState>(dist::ProcessGroup::connect(options), world);
    } catch (const ConfigError& e) {
        return refused(exit_code::invalid_arguments, e.detail());
    } catch (const DistributedError& e) {
        if (control.stop_requested())
            return failed_summary(RunStatus::Stopped, exit_code::interrupted,
                                  make_message(message_code::stopped_before_start), world.world_size);
        return failed_summary(RunStatus::Error, exit_code::distributed_failure, distributed_message(e),
                              world.world_size);
    }
    const dist::DefaultStateScope scope(state.get());
    SummaryRecord summary = run_once(config, sink, control, nullptr, world.local_world_size);
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
            sink.on_log(std::string("note: the ranks did not meet at the end: ") + e.what());
        }
    }
    summary.world_size = world.world_size;
    return summary;
}

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

// A run of N processes on this machine started from here (the studio): rank 0
// trains on this thread; ranks 1 … N−1 are the worker program, launched and
// watched on a thread of their own. A worker that ends before the others have
// met stops rank 0 from waiting; when rank 0 is done, the workers get a few
// seconds to end by themselves, then SIGTERM, then SIGKILL: none outlives the run.
SummaryRecord host_ranks(const RunConfig& config, const std::string& program, Sink& sink, RunControl& control) {
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
    dist::LaunchOptions options;
    try {
        file = std::make_unique<ConfigFile>(config);
        options.plan = {config.nproc_per_node, 1, 0, "127.0.0.1", dist::pick_free_port("127.0.0.1")};
    } catch (const WriteError& e) {
        return failed_summary(RunStatus::Error, exit_code::write_failed, e.detail(), world_size);
    } catch (const std::exception& e) {
        return failed_summary(RunStatus::Error, exit_code::failure,
                              make_message(message_code::internal_error, {{"error", e.what()}}), world_size);
    }
    options.executable = program;
    options.arguments = {"train", "--config", file->path(), "--quiet"};
    for (int r = 1; r < config.nproc_per_node; ++r) options.local_ranks.push_back(r);
    options.forward_signals = false;
    options.stop_grace = std::chrono::seconds(3);
    std::atomic<bool> stop_workers{false};
    std::atomic<bool> workers_done{false};
    options.stop = [&] { return stop_workers.load(); };
    dist::LaunchResult launched;
    std::thread launcher([&] {
        try {
            launched = dist::launch_workers(options);
        } catch (const std::exception& e) {
            launched.exit_code = exit_code::invalid_arguments;
            launched.message = e.what();
        }
        workers_done = true;
    });
    SummaryRecord summary = run_rank(config, dist::worker_world(options.plan, 0), sink, control, [&] {
        return workers_done.load() || control.stop_requested();
    });
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

} // namespace

SummaryRecord Session::run(const RunConfig& config, Sink& sink, std::stop_token stop, const dist::WorldInfo& world) {
    if (world.world_size <= 1) return run(config, sink, stop);
    auto& control = control_->control;
    control.reset();
    const std::stop_callback forward_stop(stop, [&control] { control.request_stop(); });
    SummaryRecord summary = run_rank(config, world, sink, control);
    sink.on_summary(summary);
    return summary;
}

SummaryRecord Session::run(const RunConfig& config, Sink& sink, std::stop_token stop) {
    const memory::RunInProgress run_in_progress; // no memory estimate beside it (estimate_guard.h)
    auto& control = control_->control;
    control.reset();
    // A stop on the token, now (then at once) or later, reaches the run's control.
    const std::stop_callback forward_stop(stop, [&control] { control.request_stop(); });
    if (config.world_size() > 1) {
        SummaryRecord summary = host_ranks(config, control_->worker_program, sink, control);
        sink.on_summary(summary);
        return summary;
    }
    if (!config.auto_find_batch_size) {
        OutOfMemoryFacts oom;
        SummaryRecord summary = run_once(config, sink, control, &oom);
        if (summary.status == RunStatus::OutOfMemory) suggest_after_out_of_memory(config, oom, summary, sink, control);
        sink.on_summary(summary);
        return summary;
    }
    // auto_find_batch_size: like Transformers, through Accelerate's
    // find_executable_batch_size (retry with int(batch × 0.9) on out of memory);
    // unlike it, K is raised so the effective batch stays (at least) the same.
    const std::int64_t effective = config.effective_batch();
    auto k_for = [effective](std::int64_t batch) { return (effective + batch - 1) / batch; };
    RunConfig attempt = config;
    SummaryRecord summary;
    try {
        find_executable_batch_size(
            [&](std::int64_t batch) {
                attempt.batch_size = batch;
                attempt.accumulation_steps = k_for(batch);
                OutOfMemoryFacts oom;
                summary = run_once(attempt, sink, control, &oom);
                if (summary.status == RunStatus::OutOfMemory) {
                    set_message(summary, out_of_memory_message(attempt, oom));
                    if (!control.stop_requested()) C10_THROW_ERROR(OutOfMemoryError, summary.message);
                }
            },
            config.batch_size,
            [&](std::int64_t batch, const std::string&) {
                const std::int64_t k = k_for(batch);
                sink.on_log("auto_find_batch_size: out of memory; retrying with micro-batch " + std::to_string(batch) +
                            " × " + std::to_string(k) + " accumulation steps (effective batch " +
                            std::to_string(batch * k) +
                            (batch * k == effective ? ", unchanged)" : ", the nearest above " + std::to_string(effective) + ")"));
            });
        if (attempt.batch_size != config.batch_size &&
            (summary.status == RunStatus::Completed || summary.status == RunStatus::Stopped)) {
            auto message = summary.detail;
            message.args["auto_batch_size"] = std::to_string(attempt.batch_size);
            message.args["auto_accumulation_steps"] = std::to_string(attempt.accumulation_steps);
            set_message(summary, std::move(message));
        }
    } catch (const std::runtime_error& e) { // reached zero
        if (summary.detail.code == message_code::out_of_memory) {
            auto message = summary.detail;
            message.args["reached_zero"] = "yes";
            set_message(summary, std::move(message));
        } else {
            summary.message = std::string(e.what()) + " " + summary.message;
        }
    }
    sink.on_summary(summary);
    return summary;
}

std::vector<DeviceInfo> list_devices() {
    std::vector<DeviceInfo> devices;
    devices.push_back({"cpu", "CPU (" + std::to_string(std::thread::hardware_concurrency()) + " threads)", true, ""});
    if (!memory::cuda_compiled()) {
        devices.push_back({"cuda", "CUDA", false, "this build's LibTorch has no CUDA"});
        return devices;
    }
    if (!torch::cuda::is_available()) {
        devices.push_back({"cuda", "CUDA", false, "no CUDA device is available"});
        return devices;
    }
    const auto count = static_cast<int>(torch::cuda::device_count()); // an int8_t DeviceIndex in 2.x
    for (int i = 0; i < count; ++i) {
        const auto stats = memory::cuda_stats(i);
        auto name = memory::cuda_device_name(i);
        if (name.empty()) name = "CUDA device " + std::to_string(i);
        devices.push_back({"cuda:" + std::to_string(i), name + " (" + format_byte_size(stats.device_total) + ")", true,
                           "", stats.device_total});
    }
    return devices;
}

std::string engine_version() {
    return std::string("accum engine 0.1.0, LibTorch ") + TORCH_VERSION + ", CUDA: " +
           (memory::cuda_compiled() ? "yes" : "no");
}

} // namespace accum
