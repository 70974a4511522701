#include "runner/runner.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

#include "accum/memory_planner.h"
#include "accum/metrics_io.h"
#include "accum/session.h"
#include "runner/cli_options.h"
#include "training/checkpoint.h"

namespace accum::cli {

namespace {

namespace fs = std::filesystem;

std::string timestamp_dir() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    std::tm tm{};
    localtime_r(&t, &tm);
    std::ostringstream s;
    s << "runs/" << std::put_time(&tm, "%Y%m%d-%H%M%S");
    return s.str();
}

// Writes records as JSON Lines, one flushed line at a time, and the log to stdout.
class FileSink final : public Sink {
public:
    FileSink(std::ofstream* metrics, std::ostream& out, bool quiet, std::string prefix)
        : metrics_(metrics), out_(out), quiet_(quiet), prefix_(std::move(prefix)) {}

    void on_micro_step(const MicroStepRecord& r) override { write(to_json_line(r)); }
    void on_step(const StepRecord& r) override { write(to_json_line(r)); }
    void on_eval(const EvalRecord& r) override { write(to_json_line(r)); }
    void on_memory(const MemoryRecord& r) override { write(to_json_line(r)); }
    void on_summary(const SummaryRecord& r) override { write(to_json_line(r)); }
    void on_log(const std::string& line) override {
        if (!quiet_) out_ << prefix_ << line << std::endl;
    }

private:
    void write(const std::string& line) {
        if (!metrics_) return;
        *metrics_ << line << '\n';
        metrics_->flush();
    }
    std::ofstream* metrics_;
    std::ostream& out_;
    bool quiet_;
    std::string prefix_;
};

bool write_text_file(const fs::path& path, const std::string& text) {
    const fs::path tmp = path.string() + ".tmp";
    {
        std::ofstream f(tmp);
        if (!f) return false;
        f << text;
        if (!f.flush()) return false;
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    return !ec;
}

std::string summary_text(const SummaryRecord& s) {
    std::ostringstream out;
    out << "summary: " << to_string(s.status) << " — " << s.message << "\n"
        << "  optimizer steps " << s.optimizer_steps << ", micro-steps " << s.micro_steps << ", samples "
        << s.samples_seen << ", " << std::fixed << std::setprecision(1) << s.samples_per_second << " samples/s, "
        << std::setprecision(2) << s.train_runtime_s << " s, peak memory " << format_byte_size(s.peak_memory_bytes);
    return out.str();
}

} // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, const std::atomic<bool>* interrupt) {
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
    if (!parsed.problems.empty()) {
        for (const auto& p : parsed.problems) err << "accum-run: " << p.to_string() << "\n";
        err << "(accum-run --help lists the options)\n";
        return exit_code::invalid_arguments;
    }
    if (parsed.command == "plan") {
        const auto budget = parse_byte_size(parsed.config.memory_budget).value_or(0);
        if (budget <= 0) {
            err << "accum-run: --memory-budget: plan needs a budget (e.g. --memory-budget 512MiB)\n";
            return exit_code::invalid_arguments;
        }
        const auto plan = plan_memory(parsed.config, parsed.target_batch, budget, [&](const std::string& line) {
            if (!parsed.config.quiet) err << "plan: " << line << std::endl;
        });
        out << to_json_text(plan);
        if (!plan.feasible) err << "accum-run: plan: " << plan.message << "\n";
        return plan.feasible ? exit_code::completed : exit_code::out_of_memory;
    }

    RunConfig config = parsed.config;
    if (config.output_dir.empty()) config.output_dir = timestamp_dir();
    std::error_code ec;
    fs::create_directories(config.output_dir, ec);
    if (ec) {
        err << "accum-run: --output-dir: cannot create " << config.output_dir << ": " << ec.message() << "\n";
        return exit_code::invalid_arguments;
    }
    const fs::path dir(config.output_dir);
    const std::string metrics_path = config.metrics_file.empty() ? (dir / "metrics.jsonl").string() : config.metrics_file;
    // Resuming into a directory that has a metrics file: keep its complete
    // records up to the checkpoint's step (a run killed with -9 may have logged
    // steps after it, and may have left half a line), then append.
    std::vector<std::string> kept;
    if (!config.resume_from.empty() && fs::exists(metrics_path)) {
        const std::int64_t resumed_step = checkpoint_global_step(latest_checkpoint(config.resume_from));
        std::ifstream old(metrics_path);
        std::string line;
        while (std::getline(old, line)) {
            std::string error;
            const auto record = parse_json_line(line, error);
            if (!record || std::holds_alternative<SummaryRecord>(*record)) continue;
            std::int64_t step = 0;
            if (const auto* s = std::get_if<StepRecord>(&*record)) step = s->step;
            else if (const auto* e = std::get_if<EvalRecord>(&*record)) step = e->step;
            else if (const auto* m = std::get_if<MicroStepRecord>(&*record)) step = m->step + 1;
            if (resumed_step >= 0 && step <= resumed_step) kept.push_back(line);
        }
    }
    std::ofstream metrics(metrics_path, std::ios::trunc);
    for (const auto& line : kept) metrics << line << '\n';
    metrics.flush();
    if (!metrics) {
        err << "accum-run: --metrics: cannot write " << metrics_path << "\n";
        return exit_code::invalid_arguments;
    }
    if (!write_text_file(dir / "config.json", to_json_text(config))) {
        err << "accum-run: --output-dir: cannot write " << (dir / "config.json").string() << "\n";
        return exit_code::invalid_arguments;
    }

    const std::string prefix = config.mode == "trainer" ? "" : "[" + config.mode + "] ";
    FileSink sink(&metrics, out, config.quiet, prefix);
    if (!config.quiet)
        out << prefix << "micro-batch " << config.batch_size << " × " << config.accumulation_steps
            << " accumulation steps = effective batch " << config.effective_batch() << "; writing " << config.output_dir
            << std::endl;

    Session session;
    std::stop_source stop; // an interrupt that comes before the run starts still stops it
    std::atomic<bool> finished{false};
    std::thread watcher;
    if (interrupt) {
        watcher = std::thread([&] {
            while (!finished.load()) {
                if (interrupt->load()) {
                    stop.request_stop();
                    return;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        });
    }
    const SummaryRecord summary = session.run(config, sink, stop.get_token());
    finished.store(true);
    if (watcher.joinable()) watcher.join();

    write_text_file(dir / "summary.json", to_json_line(summary) + "\n");
    if (summary.status == RunStatus::Completed || summary.status == RunStatus::Stopped)
        out << summary_text(summary) << std::endl;
    else
        err << "accum-run: " << summary.message << "\n" << summary_text(summary) << std::endl;
    return summary.exit_code;
}

} // namespace accum::cli
