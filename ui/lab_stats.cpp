// SPDX-License-Identifier: GPL-3.0-or-later
// The lab's figures of a finished run: per-update timing and its spread, the
// memory bands, and their text (lab_stats.h). Plain functions, no widget.
#include "lab_stats.h"

#include <QObject>

#include <algorithm>
#include <cmath>

namespace studio {

double allreduces_per_update(const RunResult& run) {
    if (run.steps.empty()) return 0.0;
    double total = 0;
    for (const auto& s : run.steps) total += static_cast<double>(s.grad_allreduces);
    return total / static_cast<double>(run.steps.size());
}

std::int64_t skipped_updates(const RunResult& r) {
    return std::count_if(r.steps.begin(), r.steps.end(), [](const accum::StepRecord& s) { return s.skipped; });
}

double seconds_per_update(const RunResult& run) {
    const auto steps = run.has_summary ? run.summary.optimizer_steps : static_cast<std::int64_t>(run.steps.size());
    const double time = run.has_summary ? run.summary.train_runtime_s : (run.steps.empty() ? 0 : run.steps.back().elapsed_s);
    return steps > 0 ? time / static_cast<double>(steps) : std::nan("");
}

UpdateTiming update_timing(const RunResult& run) {
    UpdateTiming t;
    std::vector<double> seconds, rates;
    for (std::size_t i = kLabWarmupUpdates + 1; i < run.steps.size(); ++i) {
        const double dt = run.steps[i].elapsed_s - run.steps[i - 1].elapsed_s;
        const auto samples = run.steps[i].samples_seen - run.steps[i - 1].samples_seen;
        if (!(dt > 0) || samples <= 0) continue;
        seconds.push_back(dt);
        rates.push_back(static_cast<double>(samples) / dt);
    }
    t.updates = static_cast<int>(seconds.size());
    const double nan = std::nan("");
    auto quantile = [](std::vector<double> v, double q) {
        std::sort(v.begin(), v.end());
        const double at = q * static_cast<double>(v.size() - 1);
        const auto i = static_cast<std::size_t>(std::floor(at));
        const std::size_t j = std::min(i + 1, v.size() - 1);
        return v[i] + (at - static_cast<double>(i)) * (v[j] - v[i]);
    };
    if (t.updates < kLabMinTimedUpdates) {
        t.seconds = t.seconds_low = t.seconds_high = nan;
        t.samples_per_second = t.samples_low = t.samples_high = nan;
        return t;
    }
    t.seconds = quantile(seconds, 0.5);
    t.seconds_low = quantile(seconds, 0.25);
    t.seconds_high = quantile(seconds, 0.75);
    t.samples_per_second = quantile(rates, 0.5);
    t.samples_low = quantile(rates, 0.25);
    t.samples_high = quantile(rates, 0.75);
    return t;
}

namespace {

// Decimals for a value with spread half-width `half` (negative: round to tens, hundreds…).
int spread_decimals(double half) {
    if (!(half > 0)) return 1;
    return std::min(3, -static_cast<int>(std::floor(std::log10(half))));
}

QString rounded(double value, int decimals) {
    if (decimals >= 0) return QString::number(value, 'f', decimals);
    const double step = std::pow(10.0, -decimals);
    return QString::number(std::round(value / step) * step, 'f', 0);
}

} // namespace

QString rounded_to_spread(double value, double low, double high) {
    if (!std::isfinite(value)) return QStringLiteral("–");
    return rounded(value, spread_decimals((high - low) / 2));
}

QString with_spread(double value, double low, double high) {
    if (!std::isfinite(value)) return QStringLiteral("–");
    const int decimals = spread_decimals((high - low) / 2);
    return QStringLiteral("%1 (%2–%3)").arg(rounded(value, decimals), rounded(low, decimals), rounded(high, decimals));
}

QString format_bytes(std::int64_t bytes) {
    if (bytes <= 0) return QStringLiteral("–");
    const double mib = bytes / (1024.0 * 1024.0);
    if (mib >= 1024) return QObject::tr("%1 GiB").arg(mib / 1024.0, 0, 'f', 2);
    if (mib >= 1) return QObject::tr("%1 MiB").arg(mib, 0, 'f', 2);
    return QObject::tr("%1 KiB").arg(bytes / 1024.0, 0, 'f', 1);
}

MemoryBands memory_bands(const RunResult& run) {
    MemoryBands m;
    m.parameters_bytes = run.parameters_bytes;
    m.optimizer_state_bytes = run.optimizer_state_bytes;
    m.activations_bytes = run.peak_activations_bytes();
    m.optimizer_step_bytes = std::max<std::int64_t>(0, run.peak_optimizer_step_bytes() - m.activations_bytes);
    // The gradients at the peak: what the step records' static part holds beyond
    // parameters and optimizer state (a memory record may fall between zero_grad
    // and the next backward, when there are none).
    const auto at_peak = run.static_bytes_at_peak();
    m.gradients_bytes = std::max(run.gradients_bytes,
                                 std::max<std::int64_t>(0, at_peak - m.parameters_bytes - m.optimizer_state_bytes));
    return m;
}

} // namespace studio
