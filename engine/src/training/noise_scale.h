#pragma once
// The gradient noise scale of McCandlish et al. (2018, "An Empirical Model of
// Large-Batch Training", appendix A), measured from what accumulation computes
// anyway (docs/noise-scale.md): the squared norm of a small batch's gradient
// (the window's first micro-batch) and of a big batch's (the window's, after
// the all-reduce), at their two batch sizes B_small < B_big. From each window
//   |G|² ≈ (B_big |G_big|² − B_small |G_small|²) / (B_big − B_small)
//   S    ≈ (|G_small|² − |G_big|²) / (1/B_small − 1/B_big)          (S = tr Σ)
// are unbiased; their exponential moving averages give B_simple = EMA(S) / EMA(|G|²).

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include "accum/records.h"
#include "accum/run_config.h"
#include "data/batch.h"
#include "data/data_loader.h"
#include "kernels/fused_dense.h"

namespace accum {

// One window's unbiased estimates of |G|² and tr(Σ); NaN for figures that are
// not finite or batch sizes that are not B_small < B_big.
struct NoiseEstimate {
    double gradient_sq = 0.0; // |G|²
    double trace = 0.0;       // S = tr(Σ)
};
NoiseEstimate unbiased_noise_estimate(double small_sq, double batch_small, double big_sq, double batch_big);

// The running estimate: moving averages of |G|² and S, each starting at its
// first window's value (as gpt-neox's GradientNoiseScale).
class NoiseScale {
public:
    static constexpr double kDecay = 0.95;
    // Adds a window's estimate (a non-finite one is left out).
    void add(const NoiseEstimate& estimate);
    // EMA(S) / EMA(|G|²), in the batch sizes' unit; NaN before the first window,
    // and while either average is not positive (the gradient is still lost in the noise).
    double value() const;

private:
    double gradient_sq_ = 0.0;
    double trace_ = 0.0;
    bool started_ = false;
};

// The squared norm of the parameters' gradients: a gradient the fused backward
// noted as it wrote it (fused_dense.h) taken from its note, other float32
// gradients in CPU memory summed here (no operator call per parameter), any
// others as a 0-dim tensor on their device (no synchronisation until value()).
struct SquaredNorm {
    double cpu = 0.0;
    torch::Tensor device;
    bool any = false;     // some parameter has a gradient
    double value() const;
};
SquaredNorm squared_grad_norm(const std::vector<torch::Tensor>& parameters);

// A run's measurement, window by window, from the loops' .grad (as the styles
// weigh each micro-batch's loss): |G_small|² is the window's first micro-batch's
// gradient, read right after its backward (one pass over the gradients per
// window, no copy, or none where the fused backward noted the norms); |G_big|² is the norm clip_grad_norm_ measured on the
// unscaled, all-reduced window gradient. In samples, or in label tokens with
// token normalisation. A window of one micro-batch has no smaller batch inside
// it (NaN), nor has one whose first micro-batch is all-reduced already (K = 1
// with several processes, or --sync-each-micro-batch).
class NoiseScaleMeter {
public:
    // `measures`: this process writes the records, and ACCUM_NOISE_SCALE is not 0.
    NoiseScaleMeter(const RunConfig& config, int world_size, bool measures);
    ~NoiseScaleMeter();
    NoiseScaleMeter(const NoiseScaleMeter&) = delete;
    NoiseScaleMeter& operator=(const NoiseScaleMeter&) = delete;
    // After the backward of micro-batch `index` of the epoch; `loss_scale` is the
    // loss scaler's S (1 without one), `sync` as the loops say it.
    void after_backward(const std::vector<torch::Tensor>& parameters, const Batch& batch, std::int64_t index,
                        const DataLoader& loader, double loss_scale, bool sync);
    // At the window's end, with the norm of its unscaled gradient before clipping:
    // the record's grad_norm_sq_small/big, batch_small/big and noise_scale.
    void window_done(double grad_norm, StepRecord& record);
    double value() const { return estimate_.value(); }

private:
    // The first micro-batch's |.grad|² and the window's batch sizes and factors.
    void measure_first(const std::vector<torch::Tensor>& parameters, const Batch& batch, std::int64_t index,
                       std::int64_t first, const DataLoader& loader, double loss_scale, bool sync);

    const RunConfig& config_;
    int world_size_;
    bool measures_;
    NoiseScale estimate_;
    SquaredNorm small_sq_;           // the first micro-batch's |.grad|², as it lay (scaled)
    double small_factor_ = 0.0;      // |G_small| = √small_sq_ × small_factor_
    double big_factor_ = 1.0;        // |G_big| = grad_norm × big_factor_
    double batch_small_ = 0.0;
    double window_tokens_ = 0.0;     // every rank's label tokens of the window (token normalisation)
    std::int64_t window_samples_ = 0; // this rank's samples of the window so far
};

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
