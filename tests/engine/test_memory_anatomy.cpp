// Memory anatomy: memory by category, the estimate before a run (gradient
// checkpointing: test_gradient_checkpoint.cpp). Torch first, then Qt Test
// (this target sets QT_NO_KEYWORDS).
#include <type_traits>

#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/modules/transformerlayer.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/autograd.h>

#include <QtTest/QtTest>

#include "data/dataset.h"
#include "memory/counting_allocator.h"
#include "memory/memory_categories.h"
#include "memory/memory_estimate.h"
#include "kernels/fused_attention.h"
#include "kernels/fused_dense.h"
#include "models/gradient_checkpoint.h"
#include "models/model.h"

using namespace accum;
using Tensors = std::vector<torch::Tensor>;
namespace F = torch::nn::functional;

namespace {

// The engine's models on Fashion-MNIST's shapes (1×28×28, 10 classes), random pixels.
TensorDataset fashion_like(std::int64_t n) {
    TensorDataset d;
    d.name = "fashion-like";
    d.task = Task::ImageClassification;
    d.inputs = torch::rand({n, 1, 28, 28});
    d.labels = torch::randint(0, 10, {n}, torch::kLong);
    d.items_per_sample.assign(static_cast<std::size_t>(n), 1);
    d.num_classes = 10;
    d.num_features = 784;
    return d;
}

// Moves the parameters into counted storage, as the session does.
void count_parameters(torch::nn::Module& m) {
    torch::NoGradGuard guard;
    for (auto& p : m.parameters()) p.set_data(p.clone());
}

std::int64_t parameter_bytes(const torch::nn::Module& m) {
    std::int64_t n = 0;
    for (const auto& p : m.parameters()) n += p.numel() * static_cast<std::int64_t>(p.element_size());
    return n;
}

std::int64_t storage_bytes(const Tensors& ts) {
    std::int64_t n = 0;
    for (const auto& t : ts)
        if (t.defined()) n += static_cast<std::int64_t>(t.storage().nbytes());
    return n;
}

void release_gradients(const Tensors& params) {
    for (const auto& p : params)
        if (p.grad().defined()) p.mutable_grad().reset();
}

} // namespace

class TestMemoryAnatomy : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { memory::install_counting_allocator(); }

    // ---- Memory by category ------------------------------------------------

    // Parameters and gradients are the model's parameter bytes; SGD with
    // momentum keeps one buffer per parameter (1 ×), AdamW two moments (2 ×;
    // its step counter is an int64_t, no tensor); the four categories add up to
    // the counting allocator's total exactly (it counts each storage's nbytes,
    // no rounding) at every point of a step.
    void categoriesAddUp_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<int>("copies");
        QTest::newRow("cnn, sgd momentum") << "cnn" << "sgd" << 1;
        QTest::newRow("cnn, adamw") << "cnn" << "adamw" << 2;
        QTest::newRow("mlp (fused), sgd momentum") << "mlp" << "sgd" << 1;
        QTest::newRow("mlp (fused), adamw") << "mlp" << "adamw" << 2;
    }
    void categoriesAddUp() {
        QFETCH(QString, model);
        QFETCH(QString, optimizer);
        QFETCH(int, copies);
        torch::manual_seed(1);
        const auto data = fashion_like(64); // loaded uncounted, as the session does
        const memory::CountingScope counting;
        const auto base = memory::cpu_counters().current;
        const c10::Device cpu(c10::kCPU);
        RunConfig config;
        config.model = *parse_choice<ModelKind>(model.toStdString());
        // As a session builds it: the fused MLP writes .grad itself.
        auto net = make_model(config, data, KernelSet(config.cpu_kernels, /*gradients_in_place=*/true));
        count_parameters(*net);
        const auto params = net->parameters();
        std::unique_ptr<torch::optim::Optimizer> opt;
        if (optimizer == "adamw")
            opt = std::make_unique<torch::optim::AdamW>(params, torch::optim::AdamWOptions(1e-3));
        else
            opt = std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(0.05).momentum(0.9));
        const auto p_bytes = parameter_bytes(*net);
        QString problems;
        auto check = [&](const char* when, std::int64_t expected_activations) {
            const auto fixed = memory::static_memory(params, opt.get(), cpu);
            const auto c = memory::categorize(fixed, memory::cpu_counters().current - base);
            if (c.total_bytes < fixed.total())
                problems += QString("%1: the allocator holds %2 B, less than the static %3 B; ").arg(when).arg(c.total_bytes).arg(fixed.total());
            if (c.parameters_bytes + c.gradients_bytes + c.optimizer_state_bytes + c.activations_bytes != c.total_bytes)
                problems += QString("%1: the categories do not add up; ").arg(when);
            if (expected_activations >= 0 && c.activations_bytes != expected_activations)
                problems += QString("%1: activations %2 B, expected %3 B; ").arg(when).arg(c.activations_bytes).arg(expected_activations);
            return c;
        };
        for (int step = 0; step < 2; ++step) {
            auto batch = data.gather(torch::arange(32));
            const auto batch_bytes = storage_bytes({batch.input_ids, batch.labels});
            auto c = check("batch loaded", batch_bytes);
            QCOMPARE(c.parameters_bytes, p_bytes);
            QCOMPARE(c.gradients_bytes, 0); // zero_grad(set_to_none) before
            auto out = net->forward(batch);
            c = check("after forward", -1);
            QVERIFY(c.activations_bytes > batch_bytes); // saved activations
            out.loss.backward();
            c = check("after backward", -1);
            QCOMPARE(c.gradients_bytes, p_bytes);
            out = {};
            check("outputs released", batch_bytes);
            opt->step();
            c = check("after step", batch_bytes);
            QCOMPARE(c.optimizer_state_bytes, copies * p_bytes);
            release_gradients(params);
            c = check("after zero_grad", batch_bytes);
            QCOMPARE(c.gradients_bytes, 0);
            QCOMPARE(c.optimizer_state_bytes, copies * p_bytes);
            batch = {};
            check("batch released", 0);
            QVERIFY2(problems.isEmpty(), qPrintable(problems));
        }
    }

    // Each storage once: the same tensor twice, a view, a .grad that is a view
    // of a parameter's storage; and an optimizer state of a type it does not
    // know is an error, not a silent zero.
    void storagesCountOnce() {
        const c10::Device cpu(c10::kCPU);
        const auto a = torch::zeros({10, 10}, torch::requires_grad());
        const auto view = a.narrow(0, 0, 5);
        const auto b = torch::zeros({7}, torch::requires_grad());
        auto m = memory::static_memory({a, a, view, b}, nullptr, cpu);
        QCOMPARE(m.parameters_bytes, (100 + 7) * 4);
        b.mutable_grad() = a.detach().view({-1}).narrow(0, 0, 7); // shares a's storage
        m = memory::static_memory({a, b}, nullptr, cpu);
        QCOMPARE(m.gradients_bytes, 0);
        QCOMPARE(m.frozen_parameters_bytes, 0);
        const auto frozen = torch::zeros({5}); // requires_grad false: a part of the parameters, counted apart
        QCOMPARE(memory::static_memory({a, frozen}, nullptr, cpu).frozen_parameters_bytes, 5 * 4);
        QCOMPARE(memory::static_memory({a, frozen}, nullptr, cpu).parameters_bytes, (100 + 5) * 4);
        QCOMPARE(memory::allocator_bytes(4, c10::Device(c10::kCUDA, 0)), 512);
        QCOMPARE(memory::allocator_bytes(1025, c10::Device(c10::kCUDA, 0)), 1536);
        QCOMPARE(memory::allocator_bytes(1025, cpu), 1025);

        struct OwnState : torch::optim::OptimizerCloneableParamState<OwnState> {};
        torch::optim::SGD sgd({a}, torch::optim::SGDOptions(0.1));
        // The state's key: a string in LibTorch 1.13, the parameter's TensorImpl
        // address (void*) from 2.0; any key that is not a parameter's will do.
        using StateKey = std::decay_t<decltype(sgd.state())>::key_type;
        const auto key = [&](auto type) {
            using K = typename decltype(type)::type;
            if constexpr (std::is_pointer_v<K>)
                return K(&sgd);
            else
                return K("own");
        }(std::type_identity<StateKey>{});
        sgd.state()[key] = std::make_unique<OwnState>();
        QVERIFY_EXCEPTION_THROWN(memory::optimizer_state_tensors(sgd), std::invalid_argument);
    }

    // The step's peak of activations (ActivationPeakMeter) against the truth
    // measured with the static part held fixed (gradients kept, zeroed): with
    // K = 2 the second micro-batch sees its gradients already made, so the
    // meter's figure is exact; and accumulation shrinks it (32 × 8 at most
    // 0.35 × 256 × 1 for the CNN — activations
    // scale with the micro-batch, 32/256 = 0.125, plus what does not) while
    // the parameter band stays the same.
    void stepPeakOfActivations() {
        torch::manual_seed(1);
        const auto data = fashion_like(512); // loaded uncounted, as the session does
        const memory::CountingScope counting;
        const auto base = memory::cpu_counters().current; // what earlier tests left
        const c10::Device cpu(c10::kCPU);
        RunConfig config;
        config.model = ModelKind::Cnn;
        auto net = make_model(config, data, KernelSet(config.cpu_kernels, true));
        count_parameters(*net);
        const auto params = net->parameters();
        torch::optim::SGD sgd(params, torch::optim::SGDOptions(0.05).momentum(0.9));
        // One step first: the optimizer state exists, as in every later window.
        auto micro = [&](std::int64_t b, std::int64_t k, std::int64_t i) {
            const auto batch = data.gather(torch::arange(i * b, (i + 1) * b));
            (net->forward(batch).loss / static_cast<double>(k)).backward();
        };
        micro(8, 1, 0);
        sgd.step();
        release_gradients(params);
        auto window = [&](std::int64_t b, std::int64_t k) {
            memory::ActivationPeakMeter meter;
            memory::reset_window_peak();
            for (std::int64_t i = 0; i < k; ++i) {
                micro(b, k, i);
                meter.after_backward(memory::cpu_counters().window_peak - base, memory::static_memory(params, &sgd, cpu));
                memory::reset_window_peak();
            }
            sgd.step();
            release_gradients(params);
            meter.after_step(memory::cpu_counters().window_peak - base, memory::static_memory(params, &sgd, cpu));
            memory::reset_window_peak();
            return meter.take_step();
        };
        const auto b256 = window(256, 1);
        const auto b128x2 = window(128, 2);
        const auto b32x8 = window(32, 8);
        // The truth at 128: gradients exist and stay (zeroed), so the static part is fixed.
        micro(128, 1, 0);
        for (const auto& p : params) p.mutable_grad().zero_();
        const auto fixed = memory::static_memory(params, &sgd, cpu);
        memory::reset_window_peak();
        micro(128, 2, 0);
        const auto truth128 = memory::cpu_counters().window_peak - base - fixed.total();
        release_gradients(params);
        qInfo("peak activations: 256 × 1 %lld B, 128 × 2 %lld B (measured with fixed gradients: %lld B), 32 × 8 %lld B",
              (long long)b256.peak_activations_bytes, (long long)b128x2.peak_activations_bytes, (long long)truth128,
              (long long)b32x8.peak_activations_bytes);
        QCOMPARE(b128x2.peak_activations_bytes, truth128);
        QVERIFY(b32x8.peak_activations_bytes <= 0.35 * b256.peak_activations_bytes);
        // The static band is what it is either way.
        QCOMPARE(b32x8.peak_bytes - b32x8.peak_activations_bytes, b256.peak_bytes - b256.peak_activations_bytes);
    }

    // The memory record's interval peak (ActivationPeakMeter::interval): the
    // largest reading since the last record and its parts, which add up to it.
    // The figures are made up: parameters 100, gradients 100, optimizer state
    // 200 bytes (SGD with momentum's buffers and more), readings around them.
    void intervalPeakParts() {
        const memory::StaticMemory no_grads{100, 0, 200, 0};
        const memory::StaticMemory with_grads{100, 100, 200, 0};
        auto sum = [](const memory::PeakComposition& c) {
            return c.parameters_bytes + c.gradients_bytes + c.optimizer_state_bytes + c.activations_bytes +
                   c.optimizer_step_bytes;
        };
        // A static part above the peak (never seen in a run): no negative part, still the sum.
        const auto odd = memory::compose_peak(350, with_grads);
        QCOMPARE(sum(odd), std::int64_t(350));
        QCOMPARE(odd.activations_bytes, std::int64_t(0));
        QCOMPARE(odd.gradients_bytes, std::int64_t(50));

        memory::ActivationPeakMeter meter;
        meter.at_record(300, no_grads); // the run's start: the static part alone
        QCOMPARE(meter.take_interval().activations_bytes, std::int64_t(0));
        meter.after_backward(1400, with_grads); // forward and backward: 1000 of activations
        meter.at_record(450, with_grads);       // between micro-batches: they are freed
        meter.after_step(600, with_grads);
        const auto peak = meter.interval();
        QCOMPARE(peak.peak_bytes, std::int64_t(1400));
        QCOMPARE(peak.activations_bytes, std::int64_t(1000));
        QCOMPARE(peak.gradients_bytes, std::int64_t(100));
        QCOMPARE(sum(peak), peak.peak_bytes);
        // Evaluation counts for the interval, not for the step's activations.
        meter.outside_steps(2000, with_grads);
        QCOMPARE(meter.take_step().peak_activations_bytes, std::int64_t(1000));
        const auto with_eval = meter.take_interval();
        QCOMPARE(with_eval.peak_bytes, std::int64_t(2000));
        QCOMPARE(with_eval.activations_bytes, std::int64_t(1600));
        QCOMPARE(meter.interval().peak_bytes, std::int64_t(0)); // the next interval starts empty

        // A small micro-batch: the optimizer step's temporaries (500) are the
        // peak, above the activations (300). The activations stay what the
        // micro-batches reached; the step's part is what it needed above them.
        meter.after_backward(700, with_grads);
        meter.after_step(900, with_grads);
        const auto step = meter.take_step();
        QCOMPARE(step.peak_activations_bytes, std::int64_t(300));
        QCOMPARE(step.peak_optimizer_step_bytes, std::int64_t(500));
        QCOMPARE(step.peak_bytes, std::int64_t(900));
        const auto small = meter.take_interval();
        QCOMPARE(small.peak_bytes, std::int64_t(900));
        QCOMPARE(small.activations_bytes, std::int64_t(300));
        QCOMPARE(small.optimizer_step_bytes, std::int64_t(200));
        QCOMPARE(sum(small), small.peak_bytes);
        // Before the first step (no optimizer state yet) the step's reading may
        // hold less activation room than a backward reached: the parts still add up.
        meter.after_backward(1100, no_grads);      // 800 of activations, no state, no gradients yet
        meter.after_step(1000, with_grads);        // the state made: 600 above the static part
        const auto first = meter.take_interval();  // the peak is the backward's: no step part
        QCOMPARE(first.peak_bytes, std::int64_t(1100));
        QCOMPARE(first.activations_bytes, std::int64_t(800));
        QCOMPARE(first.optimizer_step_bytes, std::int64_t(0));
        QCOMPARE(sum(first), first.peak_bytes);
    }

    // ---- The estimate before a run ----------------------------------------

    // The static part from shapes alone equals what a real step holds.
    void staticEstimateMatchesAStep_data() {
        QTest::addColumn<QString>("optimizer");
        QTest::newRow("sgd momentum") << "sgd";
        QTest::newRow("adamw") << "adamw";
    }
    void staticEstimateMatchesAStep() {
        QFETCH(QString, optimizer);
        const c10::Device cpu(c10::kCPU);
        torch::manual_seed(1);
        const auto data = fashion_like(16);
        RunConfig config;
        config.model = ModelKind::Cnn;
        auto net = make_model(config, data, KernelSet(config.cpu_kernels, true));
        const auto params = net->parameters();
        memory::OptimizerSpec spec;
        std::unique_ptr<torch::optim::Optimizer> opt;
        if (optimizer == "adamw") {
            spec.kind = memory::OptimizerSpec::Kind::AdamW;
            opt = std::make_unique<torch::optim::AdamW>(params, torch::optim::AdamWOptions(1e-3));
        } else {
            spec.momentum = 0.9;
            opt = std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(0.05).momentum(0.9));
        }
        const auto estimate = memory::estimate_static(params, spec, cpu);
        net->forward(data.gather(torch::arange(8))).loss.backward();
        opt->step();
        const auto real = memory::static_memory(params, opt.get(), cpu);
        QCOMPARE(estimate.total.parameters_bytes, real.parameters_bytes);
        QCOMPARE(estimate.total.gradients_bytes, real.gradients_bytes);
        QCOMPARE(estimate.total.optimizer_state_bytes, real.optimizer_state_bytes);
        QVERIFY(estimate.by_dtype.size() == 1 && estimate.by_dtype[0].dtype == "Float");
    }

    void probeNeedsCounting() {
        QVERIFY_EXCEPTION_THROWN(memory::probe_activations([](std::int64_t) {}, {}, {1}), std::logic_error);
    }

    void fitLine() {
        const auto f = memory::fit_line({{8, 1000 + 8 * 50}, {16, 1000 + 16 * 50}, {32, 1000 + 32 * 50}});
        QCOMPARE(f.per_sample_bytes, 50.0);
        QCOMPARE(f.fixed_bytes, 1000.0);
        QCOMPARE(f.at(256), 1000.0 + 256 * 50);
    }
};

QTEST_GUILESS_MAIN(TestMemoryAnatomy)
#include "test_memory_anatomy.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
