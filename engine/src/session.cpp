#include "accum/session.h"

#include <cmath>
#include <thread>

#include <torch/cuda.h>
#include <torch/utils.h>

#include "accum/engine_messages.h"
#include "accum/errors.h"
#include "distributed/data_parallel.h"
#include "distributed/host_ranks.h"
#include "kernels/fused_dense.h"
#include "kernels/kernels.h"
#include "memory/counting_allocator.h"
#include "memory/cuda_memory.h"
#include "memory/estimate_guard.h"
#include "memory/out_of_memory.h"
#include "summaries.h"
#include "styles/styles.h"
#include "switches.h"
#include "training/control.h"
#include "training/run_context.h"
#include "torch_compat.h"

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
std::int64_t Session::times_held() const { return control_->control.times_held(); }
void Session::set_worker_program(std::string program) { control_->worker_program = std::move(program); }

namespace {

bool runs_on_cuda(const RunConfig& config) { return config.device != "cpu" && torch::cuda::is_available(); }

// On stop or divergence: a checkpoint of the last finished optimizer step (the
// weights never include a half window), unless one exists already. Its path is
// the message's argument `checkpoint` (none when none was written), or why not
// `checkpoint_error`.
void checkpoint_on_the_way_out(RunContext& ctx, std::map<std::string, std::string>& args) {
    try {
        if (auto saved = ctx.save_checkpoint(); !saved.empty()) args["checkpoint"] = std::move(saved);
    } catch (const std::exception& e) {
        args["checkpoint_error"] = first_line(error_text(e));
    }
}

// An input error's log line (its log_text: what LibTorch said, cut before its
// backtrace, R9) and, whole, for the run's log file only.
void log_error(const RunContext* ctx, Sink& sink, const CodedError& e) {
    if (e.log_text().empty()) return;
    if (ctx) sink.on_log(without_backtrace(e.log_text()));
    sink.on_detail(e.log_text());
}

// The counters of the summary, from what the run did.
void summarise(const RunContext* ctx, std::chrono::steady_clock::time_point wall_start, SummaryRecord& summary) {
    if (ctx) {
        summary.optimizer_steps = ctx->progress().global_step;
        summary.micro_steps = ctx->progress().micro_steps;
        summary.samples_seen = ctx->progress().samples_seen;
        summary.train_runtime_s = ctx->elapsed_s();
        summary.final_loss = ctx->progress().last_loss;
        summary.peak_memory_bytes = ctx->run_peak_memory_bytes();
        summary.noise_scale = ctx->noise_scale();
    } else {
        summary.train_runtime_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    }
    summary.samples_per_second =
        summary.train_runtime_s > 0 ? static_cast<double>(summary.samples_seen) / summary.train_runtime_s : 0.0;
}

// `local_processes`: the ranks of this run on this machine, which share its cores.
SummaryRecord run_once(const RunConfig& config, Sink& sink, RunControl& control, int local_processes = 1) {
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
        summary.device = ctx->device().str();
        memory::CountingScope counting; // from here on, tensor memory counts (and the budget applies)
        ctx->start_counting_memory(budget);
        ctx->emit_memory_record();
        dense_weights_changed(); // whatever wrote the parameters before (a checkpoint, rank 0's broadcast)
        run_style(*ctx);
        if (ctx->stopped()) {
            summary.status = RunStatus::Stopped;
            summary.exit_code = exit_code::interrupted;
            auto message =
                make_message(message_code::stopped, {{"step", std::to_string(ctx->progress().global_step)}});
            checkpoint_on_the_way_out(*ctx, message.args);
            set_message(summary, std::move(message));
        } else {
            ctx->save_trained_module();
            summary.status = RunStatus::Completed;
            auto message =
                make_message(message_code::completed, {{"steps", std::to_string(ctx->progress().global_step)}});
            if (ctx->skipped_updates() > 0) message.args["skipped"] = std::to_string(ctx->skipped_updates());
            if (ctx->overflow_skips() > 0) message.args["overflow_skipped"] = std::to_string(ctx->overflow_skips());
            set_message(summary, std::move(message));
        }
    } catch (const DataError& e) {
        log_error(ctx.get(), sink, e);
        summary.status = RunStatus::Error;
        summary.exit_code = exit_code::data_error;
        set_message(summary, e.detail());
    } catch (const ConfigError& e) {
        log_error(ctx.get(), sink, e);
        summary.status = RunStatus::Error;
        summary.exit_code = exit_code::invalid_arguments;
        set_message(summary, e.detail());
    } catch (const DistributedError& e) {
        summary.status = RunStatus::Error;
        summary.exit_code = exit_code::distributed_failure;
        set_message(summary, dist::distributed_message(e));
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
            // What ran out; the advice (a smaller micro-batch, measured under the
            // budget) is the planning layer's (accum/planned_run.h).
            summary.status = RunStatus::OutOfMemory;
            summary.exit_code = exit_code::out_of_memory;
            OutOfMemoryFacts oom{budget, ctx ? ctx->run_peak_memory_bytes() : 0, first_line(error_text(e))};
            if (ctx && !ctx->device().is_cuda()) { // the counting allocator's refusal
                const auto denied = memory::last_denied_allocation();
                oom.requested = denied.bytes;
                oom.in_use = denied.in_use;
            }
            set_message(summary, out_of_memory_message(config, oom));
        } else {
            summary.status = RunStatus::Error;
            summary.exit_code = exit_code::failure;
            // A true bug: LibTorch's message whole, so it can be reported; its C++
            // backtrace in the run's log only.
            sink.on_log("internal error: " + error_text(e) + " (LibTorch's backtrace: the run directory's log.txt)");
            sink.on_detail(std::string("internal error: ") + e.what());
            set_message(summary, make_message(message_code::internal_error, {{"error", error_text(e)}}));
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
    const bool was_cuda = ctx && ctx->device().is_cuda();
    ctx.reset();
    memory::set_cpu_budget(0);
    if (was_cuda) memory::cuda_empty_cache();
    return summary;
}

dist::StopQuery stop_query(RunControl& control) {
    return {[&control] { return control.stop_requested(); }, [&control] { return control.stop_requested_for(); }};
}

// The refusal of a run while another holds the process's run slot.
SummaryRecord refused_run(const std::string& holder, int world_size) {
    return failed_summary(RunStatus::Error, exit_code::failure,
                          make_message(message_code::run_in_progress, {{"running", holder}}), world_size);
}

} // namespace

SummaryRecord Session::run(const RunConfig& config, Sink& sink, std::stop_token stop, const dist::WorldInfo& world) {
    if (world.world_size <= 1) return run(config, sink, stop);
    std::string holder;
    const auto slot = memory::RunSlot::claim("rank " + std::to_string(world.rank) + " of a data-parallel run", &holder);
    if (!slot) {
        SummaryRecord summary = refused_run(holder, world.world_size);
        sink.on_summary(summary);
        return summary;
    }
    auto& control = control_->control;
    control.reset();
    const std::stop_callback forward_stop(stop, [&control] { control.request_stop(); });
    SummaryRecord summary = dist::run_rank(config, world, sink, stop_query(control),
                                           [&](const RunConfig& c, int local) { return run_once(c, sink, control, local); });
    sink.on_summary(summary);
    return summary;
}

SummaryRecord Session::run(const RunConfig& config, Sink& sink, std::stop_token stop) {
    std::string holder;
    const auto slot = memory::RunSlot::claim("a training run", &holder);
    if (!slot) {
        SummaryRecord summary = refused_run(holder, static_cast<int>(config.world_size()));
        sink.on_summary(summary);
        return summary;
    }
    auto& control = control_->control;
    control.reset();
    // A stop on the token, now (then at once) or later, reaches the run's control.
    const std::stop_callback forward_stop(stop, [&control] { control.request_stop(); });
    SummaryRecord summary =
        config.world_size() > 1
            ? dist::host_ranks(config, control_->worker_program, sink, stop_query(control),
                               [&](const RunConfig& c, int local) { return run_once(c, sink, control, local); })
            : run_once(config, sink, control);
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
    return std::string("accum engine 0.1.0, LibTorch ") + compat::kTorchVersion + ", CUDA: " +
           (memory::cuda_compiled() ? "yes" : "no");
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
