#include "accum/noise_scale_advice.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "accum/metrics_io.h"

namespace accum {

namespace {

std::string rounded(double v, int digits) {
    std::ostringstream text;
    text << std::fixed << std::setprecision(digits) << v;
    return text.str();
}

// Steps and samples against their minima at effective batch b (the paper's eq. 2.11).
double steps_over_min(double b, double noise) { return 1.0 + noise / b; }
double samples_over_min(double b, double noise) { return 1.0 + b / noise; }

} // namespace

NoiseScaleAdvice advise_effective_batch(double noise_scale, std::int64_t target_batch, std::int64_t batch_size) {
    NoiseScaleAdvice a;
    a.noise_scale = noise_scale;
    a.target_batch = target_batch;
    a.batch_size = std::max<std::int64_t>(1, batch_size);
    const double b = static_cast<double>(target_batch);
    a.ratio = b / noise_scale;
    a.steps_over_min = steps_over_min(b, noise_scale);
    a.samples_over_min = samples_over_min(b, noise_scale);
    const std::string where = "effective batch " + std::to_string(target_batch) + " = " + rounded(a.ratio, 1) +
                              " × the measured noise scale (" + rounded(noise_scale, 0) + ")";
    if (a.ratio < 0.5) {
        a.position = "below";
        a.message = where + ": well below it, a bigger effective batch still cuts the optimizer steps nearly in "
                            "proportion, for few more samples (an estimate: McCandlish et al. 2018).";
        return a;
    }
    const std::int64_t k = std::max<std::int64_t>(1, target_batch / a.batch_size);
    if (a.ratio <= 2.0) {
        a.position = "near";
        a.message = where + ": near the critical batch, a balance of steps (" + rounded(a.steps_over_min, 1) +
                    " × the fewest) and samples (" + rounded(a.samples_over_min, 1) +
                    " × the fewest) (an estimate: McCandlish et al. 2018).";
        return a;
    }
    a.position = "above";
    // The K whose effective batch is nearest the noise scale, below the target's.
    const auto nearest = std::max<std::int64_t>(1, std::llround(noise_scale / static_cast<double>(a.batch_size)));
    const std::int64_t suggested = std::min(nearest, k);
    a.message = where + ": far above it, most of the extra samples buy few steps: it takes " +
                rounded(a.samples_over_min, 1) + " × the fewest samples for " + rounded(a.steps_over_min, 2) +
                " × the fewest steps";
    if (suggested < k) {
        const double small = static_cast<double>(suggested * a.batch_size);
        a.suggested_accumulation_steps = suggested;
        a.suggested_effective_batch = suggested * a.batch_size;
        a.suggested_steps_ratio = steps_over_min(small, noise_scale) / a.steps_over_min;
        a.suggested_samples_ratio = samples_over_min(small, noise_scale) / a.samples_over_min;
        a.message += ". K = " + std::to_string(suggested) + " (effective batch " +
                     std::to_string(a.suggested_effective_batch) + ") would reach the same loss with " +
                     rounded(a.suggested_samples_ratio, 2) + " × the samples in " +
                     rounded(a.suggested_steps_ratio, 1) + " × the optimizer steps";
    }
    a.message += " (an estimate: McCandlish et al. 2018, for SGD-like updates and a noise scale that stays where "
                 "it was measured).";
    return a;
}

std::optional<double> read_noise_scale(const std::string& path, std::string& error) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path file = fs::is_directory(path, ec) ? fs::path(path) / "summary.json" : fs::path(path);
    std::ifstream in(file);
    if (!in) {
        error = "cannot read " + file.string() + ": " + std::generic_category().message(errno);
        return std::nullopt;
    }
    std::ostringstream text;
    text << in.rdbuf();
    std::string line = text.str();
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    std::string why;
    const auto record = parse_json_line(line, why);
    const auto* summary = record ? std::get_if<SummaryRecord>(&*record) : nullptr;
    if (!summary) {
        error = file.string() + " is not a run's summary" + (why.empty() ? std::string() : ": " + why);
        return std::nullopt;
    }
    if (!std::isfinite(summary->noise_scale) || summary->noise_scale <= 0) {
        error = file.string() + " holds no measured noise scale (a run with K ≥ 2, or several processes, measures it)";
        return std::nullopt;
    }
    return summary->noise_scale;
}

std::string to_json_text(const NoiseScaleAdvice& a) {
    nlohmann::json j{{"noise_scale", a.noise_scale},
                     {"target_batch", a.target_batch},
                     {"batch_size", a.batch_size},
                     {"ratio", a.ratio},
                     {"position", a.position},
                     {"steps_over_min", a.steps_over_min},
                     {"samples_over_min", a.samples_over_min},
                     {"estimate", true},
                     {"message", a.message}};
    if (a.suggested_accumulation_steps > 0) {
        j["suggested_accumulation_steps"] = a.suggested_accumulation_steps;
        j["suggested_effective_batch"] = a.suggested_effective_batch;
        j["suggested_steps_ratio"] = a.suggested_steps_ratio;
        j["suggested_samples_ratio"] = a.suggested_samples_ratio;
    }
    return j.dump(2) + "\n";
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
