#include "runner/runner.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <optional>
#include <iostream>
#include <sstream>
#include <stop_token>
#include <thread>

#include <nlohmann/json.hpp>

#include "accum/data_parallel.h"
#include "accum/errors.h"
#include "accum/memory_planner.h"
#include "accum/metrics_io.h"
#include "accum/noise_scale_advice.h"
#include "accum/planned_run.h"
#include "accum/run_directory.h"
#include "accum/run_estimate.h"
#include "accum/run_writer.h"
#include "accum/session.h"
#include "runner/cli_options.h"
#include "runner/progress_bar.h"

namespace accum::cli {

namespace {

namespace fs = std::filesystem;

// The run's files, and the log on stdout: its lines, or with a progress bar
// (a terminal) the lines above the bar.
class RunnerSink final : public RunWriter {
public:
    RunnerSink(std::ostream& out, bool quiet, std::string prefix, ProgressBar* bar = nullptr)
        : out_(out), quiet_(quiet), prefix_(std::move(prefix)), bar_(bar) {}
    void on_log(const std::string& line) override {
        if (quiet_) return;
        if (bar_ != nullptr) bar_->print_line(prefix_ + line);
        else out_ << prefix_ << line << std::endl;
    }
    void on_step(const StepRecord& r) override {
        RunWriter::on_step(r);
        if (bar_ != nullptr) bar_->on_step(r);
    }

private:
    std::ostream& out_;
    bool quiet_;
    std::string prefix_;
    ProgressBar* bar_;
};

// The plan's JSON object with the noise scale's advice added as "noise_scale_advice".
std::string plan_with_advice(const std::string& plan, const std::string& advice) {
    auto j = nlohmann::json::parse(plan);
    j["noise_scale_advice"] = nlohmann::json::parse(advice);
    return j.dump(2) + "\n";
}

// The run's optimizer steps, as the engine counts them (run_parts.cpp), for the
// bar's total; 0 when they cannot be known beforehand (a micro-batch that
// --auto-find-batch-size may change, a data file that cannot be read).
std::int64_t planned_steps(const RunConfig& c) {
    if (c.max_steps > 0) return c.max_steps;
    if (c.auto_find_batch_size) return 0;
    const std::int64_t samples = training_samples(c);
    if (samples <= 0 || c.batch_size <= 0 || c.accumulation_steps <= 0) return 0;
    const std::int64_t batches = (samples + c.batch_size - 1) / c.batch_size;
    return c.epochs * ((batches + c.accumulation_steps - 1) / c.accumulation_steps);
}

std::string summary_text(const SummaryRecord& s) {
    std::ostringstream out;
    out << "summary: " << to_string(s.status) << " — " << s.message << "\n"
        << "  optimizer steps " << s.optimizer_steps << ", micro-steps " << s.micro_steps << ", samples "
        << s.samples_seen << ", " << std::fixed << std::setprecision(1) << s.samples_per_second << " samples/s, "
        << std::setprecision(2) << s.train_runtime_s << " s, peak memory " << format_byte_size(s.peak_memory_bytes);
    return out.str();
}

// Ranks 1 … N−1 of a data-parallel run: no files, no log; their errors only.
class QuietSink final : public Sink {};

// Turns the program's interrupt flag (SIGINT or SIGTERM, set by the signal
// handler in accum_run_main.cpp) into a stop request for the run: a thread
// looks at the flag every 20 ms until the watcher goes out of scope, which
// stops and joins it, also when the run throws. Without a flag (a caller with
// no signals) there is no thread.
class InterruptWatcher {
public:
    InterruptWatcher(const std::atomic<bool>* interrupt, std::stop_source stop) {
        if (interrupt == nullptr) return;
        thread_ = std::jthread([interrupt, stop](std::stop_token done) mutable {
            while (!done.stop_requested()) {
                if (interrupt->load()) {
                    stop.request_stop();
                    return;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        });
    }
    InterruptWatcher(const InterruptWatcher&) = delete;
    InterruptWatcher& operator=(const InterruptWatcher&) = delete;

private:
    std::jthread thread_; // its destructor asks the loop to end and joins it
};

// The arguments the ranks get: the parent's, with the output directory the
// parent chose (so that every rank names the same one).
std::vector<std::string> rank_arguments(const std::vector<std::string>& args, const std::string& output_dir,
                                        bool output_dir_given) {
    std::vector<std::string> out = args;
    if (!output_dir_given) {
        out.push_back("--output-dir");
        out.push_back(output_dir);
    }
    return out;
}

} // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, const std::atomic<bool>* interrupt,
        const std::string& program, bool out_is_terminal) {
    ParsedArguments parsed = parse_arguments(args);
    if (parsed.command == "help") {
        out << usage();
        return 0;
    }
    if (parsed.command == "version") {
        out << engine_version() << "\n";
        return 0;
    }
    if (parsed.command == "devices") {
        for (const auto& d : list_devices())
            out << d.name << "\t" << (d.available ? "available" : "unavailable: " + d.reason) << "\t" << d.description
                << "\n";
        return 0;
    }
    // What --config's file says that is not an option (cli_options.h), once per
    // run: by the process that writes it (rank 0 of a data-parallel run).
    auto say_notes = [&](const std::string& prefix) {
        for (const auto& note : parsed.notes) err << prefix << "accum-run: " << note << "\n";
    };
    if (!parsed.problems.empty()) {
        for (const auto& p : parsed.problems) err << "accum-run: " << p.to_string() << "\n";
        err << "(accum-run --help lists the options)\n";
        return exit_code::invalid_arguments;
    }
    if (parsed.command == "plan" || parsed.command == "estimate") say_notes("");
    if (parsed.command == "plan") {
        const auto budget = parse_byte_size(parsed.config.memory_budget).value_or(0);
        const bool noise = parsed.noise_scale > 0;
        if (budget <= 0 && !noise) {
            err << "accum-run: --memory-budget: plan needs a budget (e.g. --memory-budget 512MiB), or a measured "
                   "--noise-scale to weigh the target against\n";
            return exit_code::invalid_arguments;
        }
        // The noise scale's advice, for the plan's micro-batch (or --batch-size without a budget).
        const auto advise = [&](std::int64_t batch_size) {
            const auto advice = advise_effective_batch(parsed.noise_scale, parsed.target_batch, batch_size);
            if (!parsed.config.quiet) err << "plan: noise scale: " << advice.message << std::endl;
            return advice;
        };
        if (budget <= 0) {
            out << to_json_text(advise(parsed.config.batch_size));
            return exit_code::completed;
        }
        const auto plan = plan_memory(parsed.config, parsed.target_batch, budget, [&](const std::string& line) {
            if (!parsed.config.quiet) err << "plan: " << line << std::endl;
        });
        if (noise && plan.feasible)
            out << plan_with_advice(to_json_text(plan), to_json_text(advise(plan.batch_size)));
        else
            out << to_json_text(plan);
        if (!plan.feasible) err << "accum-run: plan: " << plan.message << "\n";
        return plan.feasible ? exit_code::completed : exit_code::out_of_memory;
    }

    if (parsed.command == "estimate") {
        const auto estimate = estimate_run_memory(parsed.config);
        if (!estimate.ok) {
            err << "accum-run: estimate: " << estimate.error << "\n";
            if (parsed.json) out << to_json_text(estimate);
            return estimate.exit_code;
        }
        out << (parsed.json ? to_json_text(estimate) : estimate.describe());
        return exit_code::completed;
    }

    RunConfig config = parsed.config;
    // Started by a launcher (RANK, WORLD_SIZE, … set): this process is one rank.
    std::optional<dist::WorldInfo> world;
    try {
        world = dist::world_from_environment();
        if (world && world->world_size <= 1) world.reset();
        if (world) config = dist::config_for_world(config, *world);
    } catch (const ConfigError& e) {
        err << (world ? "[rank " + std::to_string(world->rank) + "] " : "") << "accum-run: " << e.what() << "\n";
        if (world) dist::announce_failure(*world, config.dist_timeout_s, e.what());
        return exit_code::invalid_arguments;
    }
    const std::string rank_prefix = world ? "[rank " + std::to_string(world->rank) + "] " : "";
    if (world ? world->rank == 0 : config.world_size() <= 1) say_notes(rank_prefix);
    // A rank that ends before it has joined the others tells them why (they stop
    // within seconds, naming it, instead of waiting out --dist-timeout).
    auto refuse = [&](int code, const std::string& message) {
        err << rank_prefix << "accum-run: " << message << "\n";
        if (world) dist::announce_failure(*world, config.dist_timeout_s, message);
        return code;
    };
    // torchrun restarted the worker group (--max-restarts): the run continues
    // from its output directory's latest complete checkpoint, as --resume would,
    // or starts over when the failed attempt saved none.
    std::string restart_note;
    if (world && world->restart_count > 0 && config.resume_from.empty()) {
        const std::string attempt = "torchrun restart " + std::to_string(world->restart_count) +
                                    " (TORCHELASTIC_RESTART_COUNT=" + std::to_string(world->restart_count) + "): ";
        if (config.output_dir.empty()) {
            restart_note = attempt + "no --output-dir to resume from; the run starts over in a new directory";
        } else if (const auto latest = latest_checkpoint(config.output_dir); !latest.empty()) {
            config.resume_from = latest; // the one named: --resume DIR would take the newest, complete or not
            restart_note = attempt + "resuming from " + latest + ", the latest complete checkpoint in " +
                           config.output_dir;
        } else {
            config.overwrite_output_dir = true; // the failed attempt's files: this attempt's own run, from the start
            restart_note = attempt + "no complete checkpoint in " + config.output_dir + " yet; the run starts over";
        }
    }
    if (world && world->rank != 0) {
        // Not rank 0: trains and takes part in every collective, writes nothing.
        QuietSink quiet;
        Session session;
        std::stop_source stop;
        const SummaryRecord summary = [&] {
            const InterruptWatcher watcher(interrupt, stop);
            return session.run(config, quiet, stop.get_token(), *world);
        }();
        if (summary.status != RunStatus::Completed && summary.status != RunStatus::Stopped)
            err << rank_prefix << "accum-run: " << summary.message << std::endl;
        return summary.exit_code;
    }

    std::error_code ec;
    const bool output_dir_given = !config.output_dir.empty();
    if (config.output_dir.empty()) {
        std::string error;
        config.output_dir = create_run_directory("runs", error); // a new one, even for two runs in one second
        if (config.output_dir.empty()) return refuse(exit_code::invalid_arguments, "--output-dir: " + error);
    } else if (const auto problem = output_dir_problem(config); !problem.empty()) {
        return refuse(exit_code::invalid_arguments, "--output-dir: " + problem); // the first run's files stay as they are
    }
    fs::create_directories(config.output_dir, ec);
    if (ec)
        return refuse(exit_code::invalid_arguments,
                      "--output-dir: cannot create " + config.output_dir + ": " + ec.message());
    if (!world && config.world_size() > 1) {
        // The launcher (torchrun's part): this machine's ranks are copies of this
        // program; rank 0 of the run writes into the directory chosen here.
        if (program.empty()) {
            err << "accum-run: --nproc-per-node: cannot tell which program to start for the ranks\n";
            return exit_code::invalid_arguments;
        }
        if (!config.quiet)
            out << "launching " << config.nproc_per_node << " processes" << (config.nnodes > 1 ? " on this machine (node " + std::to_string(config.node_rank) + " of " + std::to_string(config.nnodes) + ")" : "")
                << ": micro-batch " << config.batch_size << " × " << config.accumulation_steps << " × "
                << config.world_size() << " processes = effective batch " << config.effective_batch() << std::endl;
        try {
            const auto outcome =
                dist::launch_ranks(config, program, rank_arguments(args, config.output_dir, output_dir_given));
            if (outcome.exit_code != 0) err << "accum-run: " << outcome.message << "\n";
            return outcome.exit_code;
        } catch (const ConfigError& e) {
            err << "accum-run: " << e.what() << "\n";
            return exit_code::invalid_arguments;
        }
    }
    if (config.overwrite_output_dir && config.resume_from.empty()) {
        std::string error;
        if (!clear_run(config.output_dir, error))
            return refuse(exit_code::invalid_arguments, "--overwrite-output-dir: " + error);
    }
    const std::string prefix = rank_prefix + (config.mode == Mode::Trainer ? "" : "[" + to_string(config.mode) + "] ");
    // The bar: on a terminal, for a run of one process that prints its log.
    std::optional<ProgressBar> bar;
    if (out_is_terminal && !config.quiet && !config.disable_tqdm && !world) bar.emplace(out, planned_steps(config));
    RunnerSink sink(out, config.quiet, prefix, bar ? &*bar : nullptr);
    if (std::string error; !sink.open(config, error)) return refuse(exit_code::write_failed, error);
    if (!restart_note.empty()) out << prefix << restart_note << std::endl; // even with --quiet: the run resumed
    // Even with --quiet too: the run is not quite the one its options describe.
    if (!sink.switches_note().empty()) out << prefix << sink.switches_note() << std::endl;
    if (!config.quiet)
        out << prefix << "micro-batch " << config.batch_size << " × " << config.accumulation_steps
            << " accumulation steps"
            << (config.world_size() > 1 ? " × " + std::to_string(config.world_size()) + " processes" : std::string())
            << " = effective batch " << config.effective_batch() << "; writing " << config.output_dir << std::endl;

    Session session;
    std::stop_source stop; // an interrupt that comes before the run starts still stops it
    const SummaryRecord summary = [&] {
        const InterruptWatcher watcher(interrupt, stop);
        return world ? session.run(config, sink, stop.get_token(), *world)
                     : run_planned(session, config, sink, stop.get_token());
    }();
    if (bar) bar->finish();

    if (summary.status == RunStatus::Completed || summary.status == RunStatus::Stopped)
        out << summary_text(summary) << std::endl;
    else
        err << rank_prefix << "accum-run: " << summary.message << "\n" << summary_text(summary) << std::endl;
    if (!sink.summary_error().empty()) {
        // The summary above is all there is of it: the disk refused it too.
        err << rank_prefix << "accum-run: the summary could not be written: " << sink.summary_error() << std::endl;
        if (summary.exit_code == exit_code::completed || summary.exit_code == exit_code::interrupted)
            return exit_code::write_failed;
    }
    return summary.exit_code;
}

} // namespace accum::cli
// SPDX-License-Identifier: GPL-3.0-or-later
