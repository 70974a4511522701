#pragma once
// Runs one training run on the calling thread. A run is stopped through the
// stop token given to run(); pause(), resume() and step_once() may be called from
// any other thread. The run polls them between micro-batches.

#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "accum/data_parallel.h"
#include "accum/records.h"
#include "accum/run_config.h"
#include "accum/sink.h"

namespace accum {

class Session {
public:
    Session();
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Blocks until the run ends. Never throws for a run's own failures
    // (bad config, missing data, out of memory, divergence): they end up in the
    // returned summary, which is also sent to the sink. An out-of-memory summary
    // says what ran out; the advice that goes with it (a smaller micro-batch ×
    // more steps, measured under the budget) and --auto-find-batch-size are the
    // planning layer's: callers that want them call run_planned()
    // (accum/planned_run.h), which calls this.
    //
    // One run at a time in a process (memory counters, budget and threads are
    // the process's): while another run, from any thread or Session, is
    // training, run() trains nothing and returns at once a summary with the
    // message code run_in_progress (exit code 1) naming what holds the process.
    //
    // `stop` belongs to this one run: a stop requested through it, before the
    // run has started or while it runs, ends it at the next micro-batch boundary
    // (before any data are loaded when it came first). Give each run its own
    // std::stop_source, and a stop meant for one run cannot reach the next.
    //
    // A configuration of several processes on this machine (--nproc-per-node N,
    // one node) trains here as rank 0 and starts ranks 1 … N−1 as processes of
    // the worker program (set_worker_program: accum-run), which end with it: its
    // records are the run's, a stop or a pause holds every rank (agreed at the
    // next gradient sync), and a rank that fails ends the run with exit code 6
    // naming it.
    SummaryRecord run(const RunConfig& config, Sink& sink, std::stop_token stop = {});
    // Trains as one rank of a data-parallel run whose processes a launcher
    // started (accum-run --nproc-per-node, torchrun, a scheduler): joins the
    // others at world.master_addr:master_port within --dist-timeout. Only rank 0
    // should write what the sink receives.
    SummaryRecord run(const RunConfig& config, Sink& sink, std::stop_token stop, const dist::WorldInfo& world);
    // The program run() starts for ranks 1 … N−1 (accum-run).
    void set_worker_program(std::string program);

    void pause();     // thread-safe; the run waits at the next micro-batch boundary
    void resume();
    // While paused: let exactly one more micro-batch run, then pause again.
    void step_once();
    bool is_paused() const;
    // How often a run of this Session has been held at a micro-batch boundary
    // while paused; it grows only while held (once a data-parallel run's ranks
    // agree again to wait). Waiting for it to grow past the value read after a
    // step is how a caller knows that the step has ended and the run waits again.
    std::int64_t times_held() const;

private:
    struct Control;
    std::unique_ptr<Control> control_;
};

// What this engine build can run on, for the GUI and `accum-run --help`.
struct DeviceInfo {
    std::string name;        // "cpu", "cuda:0", ...
    std::string description; // "CPU (2 threads)", "NVIDIA H200 (139 GiB)"
    bool available = false;
    std::string reason;      // why not, when unavailable
    std::int64_t total_bytes = 0; // the device's memory (CUDA), 0 for the CPU
};
std::vector<DeviceInfo> list_devices();
std::string engine_version(); // "accum engine 0.1.0, LibTorch 1.13.1, CUDA: no"

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
