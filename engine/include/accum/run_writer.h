#pragma once
// Writes a run's files into its directory as the run goes: config.json at the
// start, metrics.jsonl one flushed JSON line per record, summary.json at the end.
// A Sink, so a caller passes it to Session::run (directly, or behind its own).

#include <fstream>
#include <string>

#include "accum/run_config.h"
#include "accum/sink.h"

namespace accum {

class RunWriter : public Sink {
public:
    // Opens the run's files in config.output_dir (which must exist): the metrics
    // file (resuming into the directory keeps its records up to the checkpoint's
    // step, then appends) and config.json. False, with `error` naming the option
    // and the file, when they cannot be written.
    bool open(const RunConfig& config, std::string& error);
    const std::string& metrics_path() const { return metrics_path_; }
    const std::string& directory() const { return directory_; }

    void on_micro_step(const MicroStepRecord& r) override;
    void on_step(const StepRecord& r) override;
    void on_eval(const EvalRecord& r) override;
    void on_memory(const MemoryRecord& r) override;
    // The summary's line, and summary.json.
    void on_summary(const SummaryRecord& r) override;

private:
    void write(const std::string& line);
    std::ofstream metrics_;
    std::string metrics_path_;
    std::string directory_;
};

// Writes `text` to `path` through a temporary file and a rename, so the file is
// either the old one or the whole new one.
bool write_file_atomically(const std::string& path, const std::string& text);

} // namespace accum
