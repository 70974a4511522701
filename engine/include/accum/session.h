#pragma once
// Runs one training run on the calling thread. stop(), pause() and resume()
// may be called from any other thread; the run polls them between micro-batches.

#include <memory>
#include <string>
#include <vector>

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
    // returned summary, which is also sent to the sink. A run that runs out of
    // memory under a configured budget measures the micro-batch × K it suggests
    // (plan_memory, a few short probe runs) before it returns; the sink's on_log
    // says so, and stop() cuts the measuring short.
    SummaryRecord run(const RunConfig& config, Sink& sink);

    // Thread-safe; the run ends at the next micro-batch boundary. run() starts
    // with a clear flag: a stop() that lands before it has started is not
    // carried into it (call again once it runs, as the studio's worker does).
    void stop();
    void pause();     // thread-safe; the run waits at the next micro-batch boundary
    void resume();
    // While paused: let exactly one more micro-batch run, then pause again.
    void step_once();
    bool is_paused() const;

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
};
std::vector<DeviceInfo> list_devices();
std::string engine_version(); // "accum engine 0.1.0, LibTorch 1.13.1, CUDA: no"

} // namespace accum
