#include "accum/run_writer.h"

#include <filesystem>

#include "accum/metrics_io.h"
#include "accum/run_directory.h"

namespace accum {

namespace fs = std::filesystem;

bool write_file_atomically(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
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

bool RunWriter::open(const RunConfig& config, std::string& error) {
    directory_ = config.output_dir;
    const fs::path dir(config.output_dir);
    metrics_path_ = config.metrics_file.empty() ? (dir / "metrics.jsonl").string() : config.metrics_file;
    std::vector<std::string> kept;
    std::error_code ec;
    if (!config.resume_from.empty() && fs::exists(metrics_path_, ec))
        kept = records_through_step(metrics_path_, checkpoint_global_step(latest_checkpoint(config.resume_from)));
    metrics_.open(metrics_path_, std::ios::trunc);
    for (const auto& line : kept) metrics_ << line << '\n';
    metrics_.flush();
    if (!metrics_) {
        error = "--metrics: cannot write " + metrics_path_;
        return false;
    }
    if (!write_file_atomically((dir / "config.json").string(), to_json_text(config))) {
        error = "--output-dir: cannot write " + (dir / "config.json").string();
        return false;
    }
    return true;
}

void RunWriter::write(const std::string& line) {
    if (!metrics_.is_open()) return;
    metrics_ << line << '\n';
    metrics_.flush();
}

void RunWriter::on_micro_step(const MicroStepRecord& r) { write(to_json_line(r)); }
void RunWriter::on_step(const StepRecord& r) { write(to_json_line(r)); }
void RunWriter::on_eval(const EvalRecord& r) { write(to_json_line(r)); }
void RunWriter::on_memory(const MemoryRecord& r) { write(to_json_line(r)); }

void RunWriter::on_summary(const SummaryRecord& r) {
    const auto line = to_json_line(r);
    write(line);
    if (!directory_.empty()) write_file_atomically((fs::path(directory_) / "summary.json").string(), line + "\n");
}

} // namespace accum
