#pragma once
// A sink that keeps every record a run sends, and a run into it: what the
// engine tests read back, and how they compare it.

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stop_token>
#include <string>
#include <vector>

#include <QFile>
#include <torch/types.h>

#include "accum/records.h"
#include "accum/session.h"
#include "accum/sink.h"

namespace accum::testing {

struct Capture : Sink {
    std::vector<MicroStepRecord> micro;
    std::vector<StepRecord> steps;
    std::vector<EvalRecord> evals;
    std::vector<MemoryRecord> memory;
    std::vector<std::string> logs;
    SummaryRecord summary;
    void on_micro_step(const MicroStepRecord& r) override { micro.push_back(r); }
    void on_step(const StepRecord& r) override { steps.push_back(r); }
    void on_eval(const EvalRecord& r) override { evals.push_back(r); }
    void on_memory(const MemoryRecord& r) override { memory.push_back(r); }
    void on_log(const std::string& l) override { logs.push_back(l); }
    void on_summary(const SummaryRecord& s) override { summary = s; }
};

inline Capture run(const RunConfig& config, std::stop_token stop = {}) {
    Capture c;
    Session session;
    session.run(config, c, stop);
    return c;
}

// Debian's dataset-fashion-mnist is installed (tests that need it skip without).
inline bool have_fashion_mnist() { return QFile::exists(ACCUM_FASHION_MNIST_DIR "/train-images-idx3-ubyte.gz"); }

// The parameters' values now, as copies.
inline std::vector<torch::Tensor> snapshot(const std::vector<torch::Tensor>& params) {
    std::vector<torch::Tensor> out;
    for (const auto& p : params) out.push_back(p.detach().clone());
    return out;
}

// The largest |Δ loss| over the steps both runs have (a resumed run against
// the whole one); +inf when they share none.
inline double shared_steps_loss_difference(const std::vector<StepRecord>& a, const std::vector<StepRecord>& b) {
    std::map<std::int64_t, double> first;
    for (const auto& s : a) first[s.step] = s.loss;
    double worst = -1;
    for (const auto& s : b)
        if (const auto it = first.find(s.step); it != first.end()) worst = std::max(worst, std::abs(s.loss - it->second));
    return worst < 0 ? std::numeric_limits<double>::infinity() : worst;
}

// The largest |Δ loss| of two runs of the same steps; +inf when their steps
// differ (one ended early) or there are none.
inline double largest_loss_difference(const std::vector<StepRecord>& a, const std::vector<StepRecord>& b) {
    if (a.size() != b.size() || a.empty()) return std::numeric_limits<double>::infinity();
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].step != b[i].step) return std::numeric_limits<double>::infinity();
        worst = std::max(worst, std::abs(a[i].loss - b[i].loss));
    }
    return worst;
}

} // namespace accum::testing
