// Mixed precision pieces of the engine: the dynamic loss scaler (GradScaler's
// semantics on hand-built fp32 gradients) and the CPU bf16 autocast scope.
// Torch first, then Qt Test (this target sets QT_NO_KEYWORDS).
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>
#include <ATen/autocast_mode.h>

#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <thread>

#include "accum/errors.h"
#include "models/model.h"
#include "training/grad_scaler.h"
#include "training/mixed_precision.h"

using namespace accum;

Q_DECLARE_METATYPE(std::string)

namespace {

// The message of the E that fn throws; "(nothing thrown)" if it returns.
template <class E, class Fn>
std::string thrown(Fn fn) {
    try {
        fn();
    } catch (const E& e) {
        return e.what();
    }
    return "(nothing thrown)";
}

bool same(const torch::Tensor& a, const torch::Tensor& b) { return torch::equal(a, b); }

// One parameter w = [1, 2, 3] and plain SGD (lr 0.5, no momentum), so a step
// moves w by exactly -0.5 × grad.
struct Toy {
    torch::Tensor w = torch::tensor({1.0f, 2.0f, 3.0f}).requires_grad_();
    torch::optim::SGD sgd{std::vector<torch::Tensor>{w}, torch::optim::SGDOptions(0.5)};
};

constexpr double kInf = std::numeric_limits<double>::infinity();

} // namespace

class TestMixedPrecision : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // torch.amp.GradScaler's defaults (torch/amp/grad_scaler.py, __init__):
    // init_scale 2**16, growth_factor 2.0, backoff_factor 0.5, growth_interval 2000.
    void defaultsAreGradScalers() {
        GradScaler scaler;
        QVERIFY(scaler.is_enabled());
        QCOMPARE(scaler.get_scale(), 65536.0);
        QCOMPARE(scaler.growth_factor(), 2.0);
        QCOMPARE(scaler.backoff_factor(), 0.5);
        QCOMPARE(scaler.growth_interval(), std::int64_t(2000));
        QCOMPARE(scaler.growth_tracker(), std::int64_t(0));
        const auto scaled = scaler.scale(torch::tensor(1.5f));
        QCOMPARE(scaled.item<float>(), 1.5f * 65536.0f);
        QCOMPARE(scaled.scalar_type(), torch::kFloat32);
    }

    // After unscale_ the gradients are those of the unscaled loss. The loss is
    // Σ c·w, so its gradient is c; scaled by 2^16 and divided back, a power of
    // two both ways, the values are exact.
    void unscaleGivesUnscaledGradients() {
        Toy toy;
        GradScaler scaler;
        const auto c = torch::tensor({0.25f, -3.0f, 1e-6f});
        scaler.scale((c * toy.w).sum()).backward();
        QVERIFY(same(toy.w.grad(), c * 65536.0f));
        scaler.unscale_(toy.sgd);
        QVERIFY(same(toy.w.grad(), c));
        QCOMPARE(scaler.stage(toy.sgd), GradScaler::Stage::Unscaled);
        QVERIFY(scaler.step(toy.sgd));
        QVERIFY(same(toy.w.detach(), torch::tensor({1.0f, 2.0f, 3.0f}) - 0.5f * c));
    }

    // An inf or NaN anywhere in a gradient skips the optimizer step (the weights
    // keep every bit) and update() halves the scale (backoff 0.5) and zeroes the
    // growth tracker; the next window, finite, steps.
    void overflowSkipsStepAndHalvesScale_data() {
        QTest::addColumn<float>("bad");
        QTest::newRow("inf") << float(kInf);
        QTest::newRow("-inf") << float(-kInf);
        QTest::newRow("nan") << std::numeric_limits<float>::quiet_NaN();
    }
    void overflowSkipsStepAndHalvesScale() {
        QFETCH(float, bad);
        Toy toy;
        GradScaler scaler;
        // One good window first, so that the tracker has something to reset.
        scaler.scale(toy.w.sum()).backward();
        QVERIFY(scaler.step(toy.sgd));
        scaler.update();
        QCOMPARE(scaler.growth_tracker(), std::int64_t(1));
        toy.sgd.zero_grad();
        const auto before = toy.w.detach().clone();

        scaler.scale(toy.w.sum()).backward();
        toy.w.mutable_grad()[1] = bad; // as if one micro-batch's backward overflowed
        QVERIFY(!scaler.step(toy.sgd));
        QVERIFY(same(toy.w.detach(), before));
        scaler.update();
        QCOMPARE(scaler.get_scale(), 32768.0);
        QCOMPARE(scaler.growth_tracker(), std::int64_t(0));
        toy.sgd.zero_grad();

        scaler.scale(toy.w.sum()).backward();
        QCOMPARE(toy.w.grad()[0].item<float>(), 32768.0f); // the new scale is in force
        QVERIFY(scaler.step(toy.sgd));
        QVERIFY(same(toy.w.detach(), before - 0.5f)); // d(Σw)/dw = 1, lr 0.5
        scaler.update();
        QCOMPARE(scaler.get_scale(), 32768.0);
        QCOMPARE(scaler.growth_tracker(), std::int64_t(1));
    }

    // With growth_interval 3, the 3rd good update in a row doubles the scale and
    // resets the tracker; an overflow in between starts the count again.
    void scaleDoublesAfterGrowthInterval() {
        Toy toy;
        GradScaler scaler({.init_scale = 1024.0, .growth_interval = 3});
        auto window = [&](bool overflow) {
            toy.sgd.zero_grad();
            scaler.scale(toy.w.sum()).backward();
            if (overflow) toy.w.mutable_grad()[0] = float(kInf);
            const bool stepped = scaler.step(toy.sgd);
            scaler.update();
            return stepped;
        };
        QVERIFY(window(false));
        QVERIFY(window(false));
        QCOMPARE(scaler.get_scale(), 1024.0);
        QCOMPARE(scaler.growth_tracker(), std::int64_t(2));
        QVERIFY(window(false));
        QCOMPARE(scaler.get_scale(), 2048.0);
        QCOMPARE(scaler.growth_tracker(), std::int64_t(0));
        QVERIFY(window(false));
        QVERIFY(window(false));
        QVERIFY(!window(true)); // 2 good, then an overflow: back off, count from 0
        QCOMPARE(scaler.get_scale(), 1024.0);
        QCOMPARE(scaler.growth_tracker(), std::int64_t(0));
        QVERIFY(window(false));
        QVERIFY(window(false));
        QCOMPARE(scaler.get_scale(), 1024.0);
        QVERIFY(window(false));
        QCOMPARE(scaler.get_scale(), 2048.0);
    }

    // _amp_update_scale_ keeps the scale a finite float32: 2^127 × 2 would be inf,
    // so the scale stays at 2^127 (the tracker still resets).
    void scaleDoesNotGrowToInfinity() {
        Toy toy;
        GradScaler scaler({.init_scale = std::ldexp(1.0, 127), .growth_interval = 1});
        scaler.scale(torch::tensor(0.0f));
        toy.w.mutable_grad() = torch::ones({3});
        QVERIFY(scaler.step(toy.sgd));
        scaler.update();
        QCOMPARE(scaler.get_scale(), std::ldexp(1.0, 127));
        QCOMPARE(scaler.growth_tracker(), std::int64_t(0));
    }

    // The order GradScaler enforces per optimizer: unscale_ at most once, and not
    // after step, until update(); step at most once; update only after an unscale.
    void callOrderIsEnforced() {
        Toy toy;
        GradScaler scaler;
        QCOMPARE(thrown<std::logic_error>([&] { scaler.unscale_(toy.sgd); }),
                 std::string("GradScaler::unscale_ before any scale(loss): the scale is made by the first scale() of "
                             "the iteration"));
        scaler.scale(toy.w.sum()).backward();
        QCOMPARE(thrown<std::logic_error>([&] { scaler.update(); }),
                 std::string("No inf checks were recorded prior to update()."));
        scaler.unscale_(toy.sgd);
        const auto once = toy.w.grad().clone();
        QCOMPARE(thrown<std::logic_error>([&] { scaler.unscale_(toy.sgd); }),
                 std::string("unscale_() has already been called on this optimizer since the last update()."));
        QVERIFY(same(toy.w.grad(), once)); // the refused call divided nothing
        QVERIFY(scaler.step(toy.sgd));
        QCOMPARE(thrown<std::logic_error>([&] { scaler.unscale_(toy.sgd); }),
                 std::string("unscale_() is being called after step()."));
        QCOMPARE(thrown<std::logic_error>([&] { scaler.step(toy.sgd); }),
                 std::string("step() has already been called since the last update()."));
        scaler.update();
        QCOMPARE(scaler.stage(toy.sgd), GradScaler::Stage::Ready);
        toy.sgd.zero_grad();
        scaler.scale(toy.w.sum()).backward();
        scaler.unscale_(toy.sgd); // allowed again after update()
        QVERIFY(same(toy.w.grad(), torch::ones({3})));
    }

    // step() without unscale_ unscales first (the update uses grad / S), and an
    // optimizer without any gradient is an error, not a silent skip.
    void stepUnscalesWhenNeeded() {
        Toy toy;
        GradScaler scaler;
        scaler.scale(toy.w.sum()).backward();
        QVERIFY(scaler.step(toy.sgd));
        QVERIFY(same(toy.w.detach(), torch::tensor({0.5f, 1.5f, 2.5f})));
        QVERIFY(same(toy.w.grad(), torch::ones({3})));
        scaler.update();
        Toy bare;
        QCOMPARE(thrown<std::logic_error>([&] { scaler.step(bare.sgd); }),
                 std::string("No inf checks were recorded for this optimizer (no parameter has a gradient)."));
    }

    // A window of K micro-batches: each scaled loss / K goes through backward, one
    // unscale_ on the last; the gradients and the update equal those of the same
    // window without a scaler (within 1e-6; the scale is a power of two, so the
    // only difference is fp32 rounding of the scaled sums).
    void accumulationWindowMatchesUnscaled_data() {
        QTest::addColumn<int>("k");
        QTest::newRow("K=1") << 1;
        QTest::newRow("K=3") << 3;
        QTest::newRow("K=4") << 4;
    }
    void accumulationWindowMatchesUnscaled() {
        QFETCH(int, k);
        torch::manual_seed(3);
        torch::nn::Linear reference(5, 2), scaled(5, 2);
        {
            torch::NoGradGuard no_grad;
            scaled->weight.copy_(reference->weight);
            scaled->bias.copy_(reference->bias);
        }
        torch::optim::SGD sgd_reference(reference->parameters(), torch::optim::SGDOptions(0.1));
        torch::optim::SGD sgd_scaled(scaled->parameters(), torch::optim::SGDOptions(0.1));
        const auto x = torch::randn({4 * k, 5}), y = torch::randint(0, 2, {4 * k});
        GradScaler scaler;
        for (int i = 0; i < k; ++i) {
            const auto xb = x.slice(0, 4 * i, 4 * (i + 1)), yb = y.slice(0, 4 * i, 4 * (i + 1));
            (torch::nn::functional::cross_entropy(reference->forward(xb), yb) / k).backward();
            scaler.scale(torch::nn::functional::cross_entropy(scaled->forward(xb), yb) / k).backward();
            QCOMPARE(scaler.stage(sgd_scaled), GradScaler::Stage::Ready); // nothing unscaled mid-window
        }
        scaler.unscale_(sgd_scaled);
        QVERIFY(torch::allclose(scaled->weight.grad(), reference->weight.grad(), 0, 1e-6));
        QVERIFY(torch::allclose(scaled->bias.grad(), reference->bias.grad(), 0, 1e-6));
        sgd_reference.step();
        QVERIFY(scaler.step(sgd_scaled));
        scaler.update();
        QVERIFY(torch::allclose(scaled->weight, reference->weight, 0, 1e-6));
        QCOMPARE(scaler.growth_tracker(), std::int64_t(1));
    }

    // state_dict / load_state_dict carry the scale and the growth tracker (and the
    // factors), before or after the scale tensor exists.
    void stateRoundTrips() {
        Toy toy;
        GradScaler scaler({.init_scale = 4096.0, .growth_interval = 10});
        for (bool overflow : {true, false, false}) {
            toy.sgd.zero_grad();
            scaler.scale(toy.w.sum()).backward();
            if (overflow) toy.w.mutable_grad()[2] = float(kInf);
            scaler.step(toy.sgd);
            scaler.update();
        }
        const auto state = scaler.state_dict();
        QVERIFY(state.has_value());
        QCOMPARE(state->scale, 2048.0);
        QCOMPARE(state->growth_tracker, std::int64_t(2));
        QCOMPARE(state->growth_interval, std::int64_t(10));

        GradScaler fresh; // defaults, no scale tensor yet
        fresh.load_state_dict(*state);
        QCOMPARE(fresh.get_scale(), 2048.0);
        QCOMPARE(fresh.growth_tracker(), std::int64_t(2));
        QCOMPARE(fresh.growth_interval(), std::int64_t(10));
        QCOMPARE(fresh.scale(torch::tensor(1.0f)).item<float>(), 2048.0f);

        GradScaler used; // one whose scale tensor exists already
        used.scale(torch::tensor(1.0f));
        used.load_state_dict(*state);
        QCOMPARE(used.get_scale(), 2048.0);
        QCOMPARE(used.growth_tracker(), std::int64_t(2));

        GradScaler off({.enabled = false});
        QVERIFY(!off.state_dict().has_value());
        off.load_state_dict(*state); // a no-op, as in PyTorch
        QCOMPARE(off.get_scale(), 1.0);
    }

    void badStateIsDataError_data() {
        QTest::addColumn<double>("scale");
        QTest::addColumn<qlonglong>("tracker");
        QTest::addColumn<std::string>("message");
        QTest::newRow("scale 0") << 0.0 << 0LL << std::string("loss scaler state: the loss scale must be a finite number > 0, not 0.000000");
        QTest::newRow("scale inf") << kInf << 0LL << std::string("loss scaler state: the loss scale must be a finite number > 0, not inf");
        QTest::newRow("tracker -1") << 1.0 << -1LL << std::string("loss scaler state: the growth tracker must be in [0, growth interval), not -1");
        QTest::newRow("tracker 2000") << 1.0 << 2000LL << std::string("loss scaler state: the growth tracker must be in [0, growth interval), not 2000");
    }
    void badStateIsDataError() {
        QFETCH(double, scale);
        QFETCH(qlonglong, tracker);
        QFETCH(std::string, message);
        GradScaler scaler;
        GradScalerState state;
        state.scale = scale;
        state.growth_tracker = tracker;
        QCOMPARE(thrown<DataError>([&] { scaler.load_state_dict(state); }), message);
        QCOMPARE(scaler.get_scale(), 65536.0); // unchanged
    }

    void badOptionsAreConfigErrors() {
        QCOMPARE(thrown<ConfigError>([] { GradScaler({.growth_factor = 1.0}); }),
                 std::string("--loss-scaling: the scale's growth factor must be > 1, not 1.000000"));
        QCOMPARE(thrown<ConfigError>([] { GradScaler({.backoff_factor = 1.0}); }),
                 std::string("--loss-scaling: the scale's backoff factor must be in (0, 1), not 1.000000"));
        QCOMPARE(thrown<ConfigError>([] { GradScaler({.growth_interval = 0}); }),
                 std::string("--loss-scaling: the scale's growth interval must be >= 1 step, not 0"));
        QCOMPARE(thrown<ConfigError>([] { GradScaler({.init_scale = -1.0}); }),
                 std::string("--loss-scaling: the loss scale must be a finite number > 0, not -1.000000"));
        GradScaler({.growth_factor = 1.0, .enabled = false}); // not checked when off, as in PyTorch
    }

    // Disabled, it passes everything through: the loss unscaled, step() always steps.
    void disabledScalerPassesThrough() {
        Toy toy;
        GradScaler scaler({.enabled = false});
        const auto loss = toy.w.sum();
        QVERIFY(scaler.scale(loss).is_same(loss));
        loss.backward();
        scaler.unscale_(toy.sgd);
        QVERIFY(same(toy.w.grad(), torch::ones({3})));
        QVERIFY(scaler.step(toy.sgd));
        scaler.update();
        QVERIFY(same(toy.w.detach(), torch::tensor({0.5f, 1.5f, 2.5f})));
        QCOMPARE(scaler.get_scale(), 1.0);
    }

    // PyTorch refuses to unscale fp16 gradients (fp16 master weights); so do we.
    void fp16GradientsAreRefused() {
        auto w = torch::ones({2}, torch::kHalf).requires_grad_();
        torch::optim::SGD sgd(std::vector<torch::Tensor>{w}, torch::optim::SGDOptions(0.1));
        w.mutable_grad() = torch::ones({2}, torch::kHalf);
        GradScaler scaler;
        scaler.scale(torch::tensor(1.0f));
        QCOMPARE(thrown<std::invalid_argument>([&] { scaler.unscale_(sgd); }),
                 std::string("Attempting to unscale FP16 gradients."));
    }

    // The policy: fp16 needs CUDA (the message is the option's error text); bf16
    // runs on the CPU and CUDA.
    void precisionPolicy() {
        QCOMPARE(mixed_precision_error(MixedPrecision::Fp16, c10::DeviceType::CPU),
                 std::string("fp16 needs CUDA; use bf16 on the CPU"));
        QCOMPARE(mixed_precision_error(MixedPrecision::Fp16, c10::DeviceType::CUDA), std::string());
        QCOMPARE(mixed_precision_error(MixedPrecision::Bf16, c10::DeviceType::CPU), std::string());
        QCOMPARE(mixed_precision_error(MixedPrecision::Bf16, c10::DeviceType::CUDA), std::string());
        QCOMPARE(mixed_precision_error(MixedPrecision::No, c10::DeviceType::CPU), std::string());
        QCOMPARE(thrown<ConfigError>([] { AutocastScope scope(c10::DeviceType::CPU, MixedPrecision::Fp16); }),
                 std::string("fp16 needs CUDA; use bf16 on the CPU"));
        QCOMPARE(thrown<ConfigError>([] { AutocastScope scope(c10::DeviceType::CPU, c10::ScalarType::Double); }),
                 std::string("autocast casts to bf16 or fp16, not Double on the CPU"));
        QVERIFY(!autocast_enabled(c10::DeviceType::CPU)); // the refused scopes changed nothing
        QVERIFY(parse_choice<MixedPrecision>("bf16") == MixedPrecision::Bf16);
        QVERIFY(parse_choice<MixedPrecision>("fp16") == MixedPrecision::Fp16);
        QVERIFY(parse_choice<MixedPrecision>("no") == MixedPrecision::No);
        QVERIFY(!parse_choice<MixedPrecision>("fp32").has_value());
        QCOMPARE(std::string(to_string(MixedPrecision::Bf16)), std::string("bf16"));
    }

    // Under CPU bf16 autocast a Linear's output is bf16; outside it, fp32. The
    // parameters and their gradients stay fp32.
    void linearIsBf16UnderCpuAutocast() {
        torch::nn::Linear linear(4, 3);
        const auto x = torch::randn({2, 4});
        QVERIFY(!autocast_enabled(c10::DeviceType::CPU));
        torch::Tensor y;
        {
            AutocastScope autocast(c10::DeviceType::CPU, MixedPrecision::Bf16);
            QVERIFY(autocast_enabled(c10::DeviceType::CPU));
            QCOMPARE(autocast_dtype(c10::DeviceType::CPU), c10::ScalarType::BFloat16);
            y = linear->forward(x);
            QCOMPARE(y.scalar_type(), torch::kBFloat16);
        }
        QVERIFY(!autocast_enabled(c10::DeviceType::CPU));
        QCOMPARE(linear->forward(x).scalar_type(), torch::kFloat32);
        y.sum().backward();
        QCOMPARE(linear->weight.scalar_type(), torch::kFloat32);
        QCOMPARE(linear->weight.grad().scalar_type(), torch::kFloat32);
    }

    // A conv → linear net under CPU bf16 autocast: conv and linear activations are
    // bf16, the cross-entropy (autocast's fp32 list) and the engine's
    // cross_entropy() on bf16 logits give an fp32 loss.
    void cnnActivationsBf16LossFp32() {
        torch::nn::Conv2d conv(torch::nn::Conv2dOptions(1, 4, 3).padding(1));
        torch::nn::Linear head(4 * 8 * 8, 10);
        const auto x = torch::randn({6, 1, 8, 8});
        const auto labels = torch::randint(0, 10, {6});
        AutocastScope autocast(c10::DeviceType::CPU, MixedPrecision::Bf16);
        const auto features = torch::relu(conv->forward(x));
        QCOMPARE(features.scalar_type(), torch::kBFloat16);
        const auto logits = head->forward(features.flatten(1));
        QCOMPARE(logits.scalar_type(), torch::kBFloat16);
        QCOMPARE(torch::nn::functional::cross_entropy(logits, labels).scalar_type(), torch::kFloat32);
        const auto loss = KernelSet().cross_entropy(logits, labels, kIgnoreIndex, 6.0); // ATen under autocast
        QCOMPARE(loss.mean.scalar_type(), torch::kFloat32);
        QCOMPARE(loss.sum.scalar_type(), torch::kFloat32);
    }

    // Scopes nest like torch.autocast: an inner disabled scope turns autocast off,
    // each exit restores what was there, and leaving the outermost scope brings
    // the nesting count back to 0 (the point where the cast cache is cleared).
    // The state is per thread.
    void nestedScopesRestoreState() {
        torch::nn::Linear linear(4, 3);
        const auto x = torch::randn({2, 4});
        {
            AutocastScope outer(c10::DeviceType::CPU, MixedPrecision::Bf16);
            {
                AutocastScope inner(c10::DeviceType::CPU, MixedPrecision::No);
                QVERIFY(!autocast_enabled(c10::DeviceType::CPU));
                QCOMPARE(linear->forward(x).scalar_type(), torch::kFloat32);
            }
            QVERIFY(autocast_enabled(c10::DeviceType::CPU));
            QCOMPARE(linear->forward(x).scalar_type(), torch::kBFloat16);
            bool other_thread_sees_it = true;
            std::thread([&] { other_thread_sees_it = autocast_enabled(c10::DeviceType::CPU); }).join();
            QVERIFY(!other_thread_sees_it);
            try {
                AutocastScope thrown_through(c10::DeviceType::CPU, c10::ScalarType::BFloat16, false, false);
                QVERIFY(!at::autocast::is_autocast_cache_enabled());
                throw std::runtime_error("leave by an exception");
            } catch (const std::runtime_error&) {
            }
            QVERIFY(at::autocast::is_autocast_cache_enabled());
            QVERIFY(autocast_enabled(c10::DeviceType::CPU));
        }
        QVERIFY(!autocast_enabled(c10::DeviceType::CPU));
        QCOMPARE(autocast_dtype(c10::DeviceType::CPU), c10::ScalarType::BFloat16); // 1.13's default, restored
        QCOMPARE(at::autocast::increment_nesting(), 1); // the count was 0
        QCOMPARE(at::autocast::decrement_nesting(), 0);
    }
};

QTEST_GUILESS_MAIN(TestMixedPrecision)
#include "test_mixed_precision.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
