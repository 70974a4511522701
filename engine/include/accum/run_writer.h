#pragma once
// Writes a run's files into its directory as the run goes: accum_config.json
// (the run's record, accum/run_directory.h) at the start, metrics.jsonl one JSON
// line per record (each appended whole with checked system calls), summary.json
// at the end, log.txt with the whole text of an error (LibTorch's backtrace)
// when there is one; with --report-to
// tensorboard, TensorBoard event files too. A Sink, so a caller passes
// it to Session::run (directly, or behind its own).
//
// A run made with a benchmark's model switch set in its environment
// (kModelSwitches, below) is not quite the run its options describe:
// accum_config.json then holds the switches and their values under
// kBenchSwitchesKey, beside the options, and switches_note() is the line for
// the run's log that says so.
//
// A record that cannot be written (the disk full, an I/O error, the directory
// read-only or gone) throws WriteError (accum/errors.h) from the sink's call:
// the run ends with it (exit code 7), and nothing after it is written. The
// summary is still tried: on_summary never throws, and summary_error() says
// what could not be written.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accum/run_config.h"
#include "accum/sink.h"

namespace accum {

// The benchmarks' environment switches that change how a model computes (what
// each does: engine/src/models/cnn.cpp, which reads them).
inline constexpr char kCnnCheckpointSwitch[] = "ACCUM_CNN_CHECKPOINT";
inline constexpr char kCheckpointChunkBytesSwitch[] = "ACCUM_CHECKPOINT_CHUNK_BYTES";
inline constexpr const char* kModelSwitches[] = {kCnnCheckpointSwitch, kCheckpointChunkBytesSwitch};

// Those of kModelSwitches set to something in this process's environment, with
// their values as given (an empty one changes nothing: the models read it as unset).
std::vector<std::pair<std::string, std::string>> model_switches_set();

// accum_config.json's key for the switches (an object of name → value); absent when none was set.
inline constexpr std::string_view kBenchSwitchesKey = "bench-switches";

class RunWriter : public Sink {
public:
    // Opens the run's files in config.output_dir (which must exist): the metrics
    // file (resuming into the directory keeps its records up to the checkpoint's
    // step, then appends) and accum_config.json, with the model switches set in this
    // process's environment. False, with `error` naming the option and the file,
    // when they cannot be written.
    bool open(const RunConfig& config, std::string& error);
    // After open: one line naming the model switches that were set, for the
    // run's log ("" when none was).
    const std::string& switches_note() const { return switches_note_; }
    const std::string& metrics_path() const { return metrics_path_; }
    const std::string& directory() const { return directory_; }

    void on_micro_step(const MicroStepRecord& r) override;
    void on_step(const StepRecord& r) override;
    void on_eval(const EvalRecord& r) override;
    void on_memory(const MemoryRecord& r) override;
    // The summary's line, and summary.json (both synced).
    void on_summary(const SummaryRecord& r) override;
    // Appended to log.txt in the run's directory. A text that cannot be written
    // is dropped: the person's message does not depend on it.
    void on_detail(const std::string& text) override;
    // Why the summary could not be written ("" when it was): the file and the reason.
    const std::string& summary_error() const { return summary_error_; }

private:
    void write(const std::string& line);
    std::string metrics_path_;
    std::string directory_;
    bool failed_ = false; // a record could not be written: the run is ending
    std::string summary_error_;
    std::string switches_note_;
    // --report-to tensorboard: the event files, fed the same records (engine/src/tensorboard_writer.h).
    std::unique_ptr<Sink> tensorboard_;
};

// Writes `text` to `path` through a temporary file, fsync and a rename, so the
// file is either the old one or the whole new one. False, with `error` naming
// the file and the reason, when it could not be written.
bool write_file_atomically(const std::string& path, const std::string& text, std::string* error = nullptr);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
