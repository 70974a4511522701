#pragma once
// A sink that keeps every record a run sends, and a run into it: what the
// engine tests read back (metrics_file.h reads a run's metrics.jsonl), and how they
// compare it.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <stop_token>
#include <string>
#include <vector>

#include <QFile>
#include <torch/types.h>

#include "accum/planned_run.h"
#include "accum/records.h"
#include "accum/session.h"
#include "accum/sink.h"

#include "metrics_file.h"

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
    run_planned(session, config, c, stop); // as accum-run and the studio run: with the planning layer's advice
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

// How two runs' losses compare: the largest |Δ loss| and its step, or why the
// runs could not be compared. A NaN or infinite loss, an empty run or runs of
// different steps are problems, never a difference: std::max(worst, NaN) keeps
// `worst`, so a comparison that skipped them would let two runs of NaN agree.
struct LossComparison {
    double largest = std::numeric_limits<double>::quiet_NaN();
    std::int64_t at_step = 0; // the step of the largest difference
    std::string problem;      // empty when the runs were compared

    bool compared() const { return problem.empty(); }
    // Compared, and the same within `tolerance` at every step.
    bool within(double tolerance) const { return compared() && largest <= tolerance; }
    // Compared, and apart by more than `tolerance` at some step.
    bool apart_by_more_than(double tolerance) const { return compared() && largest > tolerance; }
    // For a check's message: the largest difference and where, or the problem.
    std::string what() const {
        if (!compared()) return problem;
        char text[96];
        std::snprintf(text, sizeof text, "largest loss difference %.9g at step %lld", largest,
                      static_cast<long long>(at_step));
        return text;
    }
};

// Which difference: |a − b|, or |a − b| / |b| (b the reference run).
enum class LossMeasure { Absolute, RelativeToSecond };

namespace detail {

inline std::string loss_problem(const std::vector<StepRecord>& run, const char* which) {
    if (run.empty()) return std::string("the ") + which + " run has no steps";
    for (const auto& s : run)
        if (!std::isfinite(s.loss))
            return "step " + std::to_string(s.step) + ": the " + which + " run's loss is " + std::to_string(s.loss);
    return {};
}

inline double loss_difference(double a, double b, LossMeasure measure) {
    const double d = std::abs(a - b);
    return measure == LossMeasure::Absolute ? d : d / std::max(1e-12, std::abs(b));
}

} // namespace detail

// Two runs of the same steps, record by record: a problem when either is empty,
// has a loss that is not finite, or their steps differ (one ended early).
inline LossComparison compare_losses(const std::vector<StepRecord>& a, const std::vector<StepRecord>& b,
                                     LossMeasure measure = LossMeasure::Absolute) {
    LossComparison c;
    c.problem = detail::loss_problem(a, "first");
    if (c.problem.empty()) c.problem = detail::loss_problem(b, "second");
    if (!c.compared()) return c;
    if (a.size() != b.size()) {
        c.problem = "the runs differ in length: " + std::to_string(a.size()) + " steps against " + std::to_string(b.size());
        return c;
    }
    c.largest = 0;
    c.at_step = a.front().step;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].step != b[i].step) {
            c.problem = "record " + std::to_string(i + 1) + ": step " + std::to_string(a[i].step) + " in the first run, " +
                        std::to_string(b[i].step) + " in the second";
            c.largest = std::numeric_limits<double>::quiet_NaN();
            return c;
        }
        if (const double d = detail::loss_difference(a[i].loss, b[i].loss, measure); d > c.largest) {
            c.largest = d;
            c.at_step = a[i].step;
        }
    }
    return c;
}

// A run against part of it (a resumed run against the whole one): every step
// of `part` compared with the same step of `whole`; a problem when either is
// empty, has a loss that is not finite, when a step of `part` is not in
// `whole`, or when `whole` has a step twice.
inline LossComparison compare_shared_steps(const std::vector<StepRecord>& whole, const std::vector<StepRecord>& part) {
    LossComparison c;
    c.problem = detail::loss_problem(whole, "first");
    if (c.problem.empty()) c.problem = detail::loss_problem(part, "second");
    if (!c.compared()) return c;
    std::map<std::int64_t, double> first;
    for (const auto& s : whole)
        if (!first.emplace(s.step, s.loss).second) {
            c.problem = "step " + std::to_string(s.step) + " is in the first run twice";
            return c;
        }
    c.largest = 0;
    c.at_step = part.front().step;
    for (const auto& s : part) {
        const auto it = first.find(s.step);
        if (it == first.end()) {
            c.problem = "step " + std::to_string(s.step) + " of the second run is not in the first";
            c.largest = std::numeric_limits<double>::quiet_NaN();
            return c;
        }
        if (const double d = std::abs(s.loss - it->second); d > c.largest) {
            c.largest = d;
            c.at_step = s.step;
        }
    }
    return c;
}

// The largest |Δ loss| as a number, for checks written as `<= tolerance` or
// `> tolerance`: NaN when the runs could not be compared (every comparison
// with NaN is false, so either check fails), with the problem as a warning in
// the test's output. compare_losses() and compare_shared_steps() say it in the
// check's own message.
inline double difference_or_nan(const LossComparison& c) {
    if (c.compared()) return c.largest;
    qWarning("loss comparison: %s", c.problem.c_str());
    return std::numeric_limits<double>::quiet_NaN();
}

// The largest |Δ loss| over the steps of `b`, each against the same step of `a`
// (a resumed run against the whole one); NaN, with a warning, when the runs
// cannot be compared (compare_shared_steps).
inline double shared_steps_loss_difference(const std::vector<StepRecord>& a, const std::vector<StepRecord>& b) {
    return difference_or_nan(compare_shared_steps(a, b));
}

// The largest |Δ loss| of two runs of the same steps; NaN, with a warning, when
// they cannot be compared (compare_losses).
inline double largest_loss_difference(const std::vector<StepRecord>& a, const std::vector<StepRecord>& b) {
    return difference_or_nan(compare_losses(a, b));
}

} // namespace accum::testing
// SPDX-License-Identifier: GPL-3.0-or-later
