// SPDX-License-Identifier: GPL-3.0-or-later
// The gradient noise scale's readout and advice (noise_scale.h).
#include "noise_scale.h"

#include <QCoreApplication>
#include <algorithm>
#include <cmath>

#include "accum/noise_scale_advice.h"

namespace studio {

namespace {

class Tr {
    Q_DECLARE_TR_FUNCTIONS(studio::NoiseScale)
};

} // namespace

bool noise_scale_known(double noise_scale) { return std::isfinite(noise_scale) && noise_scale > 0.0; }

NoiseAdvice noise_advice(double noise_scale, double effective_batch, std::int64_t accumulation_steps) {
    NoiseAdvice a;
    const auto k = std::max<std::int64_t>(1, accumulation_steps);
    a.effective_batch = effective_batch;
    if (!noise_scale_known(noise_scale) || !(effective_batch > 0)) return a;
    // accum-run plan --noise-scale's advice (the engine's), for one micro-batch on
    // every process as the unit K counts.
    const auto target = std::max<std::int64_t>(1, std::llround(effective_batch));
    const auto per_k = std::max<std::int64_t>(1, std::llround(effective_batch / double(k)));
    const auto e = accum::advise_effective_batch(noise_scale, target, per_k);
    a.noise_scale = noise_scale;
    a.ratio = e.ratio;
    a.regime = e.position == "below" ? NoiseRegime::Below : e.position == "above" ? NoiseRegime::Above : NoiseRegime::Near;
    a.steps_factor = e.steps_over_min;
    a.samples_factor = e.samples_over_min;
    a.smaller_k = e.suggested_accumulation_steps;
    a.smaller_effective_batch = double(e.suggested_effective_batch);
    a.smaller_steps_vs_target = e.suggested_steps_ratio;
    a.smaller_samples_vs_target = e.suggested_samples_ratio;
    return a;
}

QString noise_figure(double value) {
    if (!std::isfinite(value)) return QStringLiteral("–");
    const double magnitude = std::abs(value);
    if (magnitude >= 100.0) {
        // Two significant digits, written out: 120, 4100.
        const double unit = std::pow(10.0, std::floor(std::log10(magnitude)) - 1.0);
        return QString::number(std::llround(value / unit) * std::llround(unit));
    }
    return QString::number(value, 'g', 2);
}

QString noise_readout_text(double noise_scale, double effective_batch, bool tokens) {
    if (!noise_scale_known(noise_scale)) return Tr::tr("Noise scale: not measured yet (it needs K ≥ 2 or several processes).");
    if (!(effective_batch > 0))
        return tokens ? Tr::tr("Noise scale ≈ %1 tokens.").arg(noise_figure(noise_scale))
                      : Tr::tr("Noise scale ≈ %1 samples.").arg(noise_figure(noise_scale));
    const double ratio = effective_batch / noise_scale;
    return tokens ? Tr::tr("Noise scale ≈ %1 tokens; your effective batch %2 tokens = %3 × that.")
                        .arg(noise_figure(noise_scale), QString::number(std::llround(effective_batch)), noise_figure(ratio))
                  : Tr::tr("Noise scale ≈ %1 samples; your effective batch %2 = %3 × that.")
                        .arg(noise_figure(noise_scale), QString::number(std::llround(effective_batch)), noise_figure(ratio));
}

QString noise_meaning_text(NoiseRegime regime) {
    switch (regime) {
    case NoiseRegime::Below:
        return Tr::tr("Below the noise scale a bigger effective batch still pays: doubling it nearly halves the "
                      "steps to a given loss.");
    case NoiseRegime::Near:
        return Tr::tr("Near the noise scale steps and samples are balanced: each about twice its least.");
    case NoiseRegime::Above:
        return Tr::tr("Above it the extra samples buy few steps: a smaller K reaches the same loss on fewer "
                      "samples.");
    }
    return {};
}

QString noise_advice_text(const NoiseAdvice& a, const QString& source, bool tokens) {
    if (!noise_scale_known(a.noise_scale)) return {};
    QString text = (tokens ? Tr::tr("Noise scale %1 tokens (measured in %2): this effective batch is %3 × it.")
                           : Tr::tr("Noise scale %1 samples (measured in %2): this effective batch is %3 × it."))
                       .arg(noise_figure(a.noise_scale), source, noise_figure(a.ratio));
    text += QLatin1Char(' ') + Tr::tr("To reach a given loss: about %1 × the fewest steps and %2 × the fewest "
                                      "samples.")
                                   .arg(noise_figure(a.steps_factor), noise_figure(a.samples_factor));
    if (a.smaller_k > 0)
        text += QLatin1Char(' ') + Tr::tr("K = %1 (effective batch %2) would reach it on about %3 × the samples, "
                                          "in %4 × the steps.")
                                       .arg(a.smaller_k)
                                       .arg(noise_figure(a.smaller_effective_batch), noise_figure(a.smaller_samples_vs_target),
                                            noise_figure(a.smaller_steps_vs_target));
    text += QLatin1Char(' ') + Tr::tr("An estimate from McCandlish et al. (2018); the noise scale drifts as "
                                      "training goes on.");
    return text;
}

double measured_noise_scale(const RunResult& run) {
    if (run.has_summary && noise_scale_known(run.summary.noise_scale)) return run.summary.noise_scale;
    for (auto it = run.steps.rbegin(); it != run.steps.rend(); ++it)
        if (noise_scale_known(it->noise_scale)) return it->noise_scale;
    return std::nan("");
}

double measured_noise_scale_in_samples(const RunResult& run) {
    const double measured = measured_noise_scale(run);
    if (run.config.loss_normalization != accum::LossNormalization::Tokens || !noise_scale_known(measured))
        return measured;
    for (auto it = run.steps.rbegin(); it != run.steps.rend(); ++it)
        if (std::isfinite(it->batch_big) && it->batch_big > 0 && run.config.effective_batch() > 0)
            return measured / (it->batch_big / double(run.config.effective_batch()));
    return std::nan("");
}

double effective_batch_for_noise(const accum::RunConfig& config, const accum::StepRecord* last_step) {
    if (config.loss_normalization != accum::LossNormalization::Tokens) return double(config.effective_batch());
    return last_step && std::isfinite(last_step->batch_big) && last_step->batch_big > 0 ? last_step->batch_big : 0.0;
}

namespace {

double tail_loss(const RunResult& run, std::int64_t tail) {
    const auto end = run.steps.back().samples_seen;
    double sum = 0.0;
    int count = 0;
    for (const auto& s : run.steps)
        if (s.samples_seen > end - tail) {
            sum += s.loss;
            ++count;
        }
    return count > 0 ? sum / count : std::nan("");
}

} // namespace

NoiseComparison compare_noise_runs(const RunResult& small, const RunResult& big) {
    NoiseComparison c;
    if (small.steps.empty() || big.steps.empty()) return c;
    c.valid = true;
    c.effective_small = double(small.config.effective_batch());
    c.effective_big = double(big.config.effective_batch());
    c.steps_small = small.steps.back().step;
    c.steps_big = big.steps.back().step;
    c.samples_small = small.steps.back().samples_seen;
    c.samples_big = big.steps.back().samples_seen;
    c.noise_small = measured_noise_scale_in_samples(small);
    c.noise_big = measured_noise_scale_in_samples(big);
    // The big batch's: its few updates leave the weights near where both runs
    // started, where the choice of batch is made; the small run's figure drifts
    // up as its many updates lower the loss (docs/noise-scale.md).
    c.noise_scale = noise_scale_known(c.noise_big) ? c.noise_big : c.noise_small;
    const auto window = std::max<std::int64_t>(1, std::llround(c.effective_big));
    c.tail_samples = std::max(window, (std::min(c.samples_small, c.samples_big) / 4) / window * window);
    c.tail_loss_small = tail_loss(small, c.tail_samples);
    c.tail_loss_big = tail_loss(big, c.tail_samples);
    return c;
}

QString noise_comparison_text(const NoiseComparison& c) {
    if (!c.valid) return Tr::tr("Nothing to compare: a run has no step records.");
    const QString fewer = c.steps_big > 0 ? noise_figure(double(c.steps_small) / double(c.steps_big)) : QStringLiteral("–");
    QString text = Tr::tr("Both saw %1 samples: %2 per update took %3 updates, %4 per update %5 — %6 × fewer.")
                       .arg(c.samples_big)
                       .arg(c.effective_small)
                       .arg(c.steps_small)
                       .arg(c.effective_big)
                       .arg(c.steps_big)
                       .arg(fewer);
    if (c.samples_small != c.samples_big)
        text = Tr::tr("Not the same samples: %1 and %2.").arg(c.samples_small).arg(c.samples_big);
    text += QLatin1Char(' ') + Tr::tr("Loss over the last %1 samples: %2 (small) vs %3 (big).")
                                   .arg(c.tail_samples)
                                   .arg(c.tail_loss_small, 0, 'f', 3)
                                   .arg(c.tail_loss_big, 0, 'f', 3);
    text += QLatin1Char(' ') + (noise_scale_known(c.noise_scale)
                                    ? Tr::tr("Noise scale measured ≈ %1 samples: the small batch is %2 × it, the big "
                                             "%3 ×.")
                                          .arg(noise_figure(c.noise_scale), noise_figure(c.effective_small / c.noise_scale),
                                               noise_figure(c.effective_big / c.noise_scale))
                                    : Tr::tr("No noise scale measured."));
    return text;
}

} // namespace studio
