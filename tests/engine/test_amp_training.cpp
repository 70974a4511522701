// Mixed precision inside the three training loops: bf16 autocast on
// the CPU against fp32, and the loss scaler stepping once per window — an
// overflow skips exactly its window, the scale grows per window, unscale_ runs
// once per window, clipping sees unscaled gradients, scaling without overflow
// changes nothing, and a checkpoint keeps the scaler. Torch first, then Qt Test
// (this target sets QT_NO_KEYWORDS).
#include <torch/autograd.h>
#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>

#include <QtTest/QtTest>

#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "accum/errors.h"
#include "accum/session.h"
#include "accum/sink.h"
#include "kernels/kernels.h"
#include "models/model.h"
#include "styles/styles.h"
#include "training/mixed_precision.h"
#include "training/run_context.h"

#include "capture.h"

using namespace accum;

namespace {

using testing::snapshot;

using testing::Capture;
using testing::run;

// synthetic-pairs through the MLP, 16 × K, 12 optimizer steps: a run of a fraction of a second.
RunConfig tiny(Mode mode, std::int64_t k = 4) {
    RunConfig c;
    c.mode = mode;
    c.dataset = DatasetKind::SyntheticPairs;
    c.model = ModelKind::Mlp;
    c.batch_size = 16;
    c.accumulation_steps = k;
    c.epochs = 0;
    c.max_steps = 12;
    c.learning_rate = 0.05;
    c.eval_strategy = Strategy::No;
    c.save_strategy = Strategy::No;
    c.device = "cpu";
    return c;
}

Mode mode_named(const QString& name) { return *parse_choice<Mode>(name.toStdString()); }

// A data-driven test's rows: each style (column "mode"), and with `ks` each K
// in each style (column "k").
void add_style_rows(std::initializer_list<int> ks = {}) {
    QTest::addColumn<QString>("mode");
    if (ks.size() > 0) QTest::addColumn<int>("k");
    for (const char* m : {"pytorch", "accelerator", "trainer"}) {
        if (ks.size() == 0) QTest::newRow(m) << m;
        for (int k : ks) // not addRow("%s K%d"): GCC 12 took the %s argument for a null (-Wformat-overflow)
            QTest::newRow((QByteArray(m) + " K" + QByteArray::number(k)).constData()) << m << k;
    }
}

bool same(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!torch::equal(a[i], b[i])) return false;
    return true;
}

double relative(double a, double b) { return std::abs(a - b) / std::max(1e-12, std::abs(b)); }

// A run's loop driven here, with a look inside after every micro-batch's
// backward (on_micro_step) and every optimizer step (on_step): the weights, the
// scheduler's count and the scaler, as they are at that moment.
struct Inside : Sink {
    RunContext* ctx = nullptr;
    std::function<void(const MicroStepRecord&)> after_backward;
    std::vector<StepRecord> steps;
    std::vector<std::vector<torch::Tensor>> weights;   // after each step
    std::vector<std::int64_t> scheduler_steps;         // after each step
    std::vector<std::int64_t> unscales;                // the scaler's unscale_ count after each step
    std::vector<std::string> logs;
    void on_micro_step(const MicroStepRecord& r) override {
        if (after_backward) after_backward(r);
    }
    void on_step(const StepRecord& r) override {
        steps.push_back(r);
        weights.push_back(snapshot(ctx->model().parameters()));
        scheduler_steps.push_back(ctx->lr_scheduler().step_count());
        unscales.push_back(ctx->scaler().unscale_count());
    }
    void on_log(const std::string& l) override { logs.push_back(l); }
};

} // namespace

class TestAmpTraining : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Acceptance 1: the default experiment (MLP 784-256-128-10 on Fashion-MNIST,
    // SGD lr 0.05 momentum 0.9, 64 × 4, 3 epochs) in bf16 on the CPU reaches eval
    // accuracy ≥ 0.85 (fp32: eager PyTorch's same experiment reaches 0.856), and its per-step
    // losses stay within 2 % of fp32's over the first 100 steps — on average: the
    // mean of |bf16 − fp32| / fp32 over the 100 steps is at most 2 % (measured
    // 0.43–0.93 % for seeds 0–4). Not every single step: this training amplifies
    // any perturbation (fp32 weights perturbed by 1e-7 already move single steps
    // by up to 1 % within 100 steps, in eager PyTorch too), and bf16's rounding
    // (2^-9) moves single steps by up to 2.5–4.4 % here (seeds 0–4; eager PyTorch
    // bf16: 2.5–9.2 % for seeds 0–2), so the largest step is bounded loosely.
    // Three epochs: a long run, kept out of the test command (bench/README.md:
    // ACCUM_LONG_CHECKS=1 test_amp_training bf16DefaultExperiment).
    void bf16DefaultExperiment() {
        if (qEnvironmentVariable("ACCUM_LONG_CHECKS") != "1")
            QSKIP("three epochs in bf16: run with ACCUM_LONG_CHECKS=1 (bench/README.md)");
        if (!QFile::exists(ACCUM_FASHION_MNIST_DIR "/train-images-idx3-ubyte.gz"))
            QSKIP("dataset-fashion-mnist is not installed");
        RunConfig c;
        c.device = "cpu";
        c.eval_strategy = Strategy::Epoch;
        c.save_strategy = Strategy::No;
        c.quiet = true;
        RunConfig fp32 = c;
        fp32.epochs = 0;
        fp32.max_steps = 100;
        fp32.eval_strategy = Strategy::No;
        RunConfig bf16 = c;
        bf16.mixed_precision = MixedPrecision::Bf16;
        const auto a = run(fp32), b = run(bf16);
        QVERIFY2(a.summary.status == RunStatus::Completed, a.summary.message.c_str());
        QVERIFY2(b.summary.status == RunStatus::Completed, b.summary.message.c_str());
        QCOMPARE(a.steps.size(), std::size_t(100));
        QVERIFY(b.steps.size() > 100);
        double worst = 0.0, mean = 0.0;
        for (std::size_t i = 0; i < 100; ++i) {
            const double d = relative(b.steps[i].loss, a.steps[i].loss);
            worst = std::max(worst, d);
            mean += d / 100.0;
        }
        qInfo("bf16 against fp32 over 100 steps: mean relative loss difference %.4f, largest %.4f; bf16 eval "
              "accuracy %.4f after 3 epochs",
              mean, worst, b.evals.back().eval_accuracy);
        QVERIFY2(mean <= 0.02, std::to_string(mean).c_str());
        QVERIFY2(worst <= 0.10, std::to_string(worst).c_str());
        // bf16 really ran: an MLP that silently stayed fp32 would give the same losses, bit for bit.
        QVERIFY2(mean > 1e-4, std::to_string(mean).c_str());
        QCOMPARE(b.evals.size(), std::size_t(3));
        QVERIFY2(b.evals.back().eval_accuracy >= 0.85, std::to_string(b.evals.back().eval_accuracy).c_str());
    }

    // The three styles put the same forward under autocast: in bf16 they still
    // agree update for update (a style that forgot autocast would leave the
    // others by about 1e-3).
    void bf16StylesAgree() {
        std::vector<std::vector<StepRecord>> runs;
        for (auto mode : {Mode::Pytorch, Mode::Accelerator, Mode::Trainer}) {
            auto c = tiny(mode);
            c.mixed_precision = MixedPrecision::Bf16;
            const auto r = run(c);
            QVERIFY2(r.summary.status == RunStatus::Completed, r.summary.message.c_str());
            runs.push_back(r.steps);
        }
        auto fp32 = run(tiny(Mode::Pytorch)).steps;
        QCOMPARE(fp32.size(), runs[0].size());
        const auto from_fp32 = testing::compare_losses(fp32, runs[0]);
        QVERIFY2(from_fp32.apart_by_more_than(1e-5), ("bf16 gave fp32's losses: " + from_fp32.what()).c_str());
        for (std::size_t s = 1; s < runs.size(); ++s) {
            QCOMPARE(runs[s].size(), runs[0].size());
            for (std::size_t i = 0; i < runs[0].size(); ++i)
                QVERIFY2(std::abs(runs[s][i].loss - runs[0][i].loss) <= 1e-6,
                         qPrintable(QString("style %1 step %2: %3 vs %4").arg(s).arg(i + 1).arg(runs[s][i].loss).arg(runs[0][i].loss)));
        }
    }

    // What runs under bf16 autocast in the MLP: its Linear-ReLU stack in bf16 as
    // one node (FusedDenseBf16, not the fp32 FusedDense nor ATen's addmm nodes;
    // test_kernels compares it with autocast's operators), and the loss on logits
    // cast up to fp32 by the fused cross-entropy, equal to ATen's autocast
    // cross-entropy.
    void bf16MlpGraph() {
        auto c = tiny(Mode::Pytorch);
        c.mixed_precision = MixedPrecision::Bf16;
        Capture sink;
        RunControl control;
        RunContext ctx(c, sink, control);
        const auto batch = ctx.train_loader().batch(0);
        ModelOutput out;
        {
            AutocastScope autocast(c10::DeviceType::CPU, MixedPrecision::Bf16);
            out = ctx.model()(batch);
        }
        QCOMPARE(out.logits.scalar_type(), torch::kBFloat16);
        QCOMPARE(out.loss.scalar_type(), torch::kFloat);
        std::set<std::string> nodes;
        std::vector<torch::autograd::Node*> stack{out.loss.grad_fn().get()};
        while (!stack.empty()) {
            auto* node = stack.back();
            stack.pop_back();
            if (!node || !nodes.insert(node->name()).second) continue;
            for (const auto& e : node->next_edges()) stack.push_back(e.function.get());
        }
        auto has = [&](const std::string& part) {
            return std::any_of(nodes.begin(), nodes.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
        };
        QVERIFY(has("FusedCrossEntropy"));
        QVERIFY(has("FusedDenseBf16"));
        QVERIFY(!has("AddmmBackward"));
        // The fused loss on upcast logits against ATen's, under autocast (which casts to fp32 itself).
        namespace F = torch::nn::functional;
        const auto logits = out.logits.detach().requires_grad_(true);
        const auto fused = KernelSet(CpuKernels::Fused).cross_entropy(logits, batch.labels, -100, double(batch.num_items));
        const auto fused_grad = torch::autograd::grad({fused.mean}, {logits})[0];
        torch::Tensor aten;
        {
            AutocastScope autocast(c10::DeviceType::CPU, MixedPrecision::Bf16);
            aten = F::cross_entropy(logits, batch.labels);
        }
        const auto aten_grad = torch::autograd::grad({aten}, {logits})[0];
        QCOMPARE(aten.scalar_type(), torch::kFloat);
        QVERIFY2(relative(fused.mean.item<double>(), aten.item<double>()) <= 1e-6,
                 qPrintable(QString("%1 vs %2").arg(fused.mean.item<double>()).arg(aten.item<double>())));
        QCOMPARE(fused_grad.scalar_type(), torch::kBFloat16);
        QVERIFY(torch::allclose(fused_grad.to(torch::kFloat), aten_grad.to(torch::kFloat), 1e-2, 1e-5));
    }

    // Acceptance 2: an inf in one micro-batch's gradient (the 2nd of window 3)
    // skips exactly that window: the weights and the optimizer's state stay, the
    // scheduler does not step, the scale halves; the next window steps; it is no
    // divergence, and --skip-nonfinite does not count it.
    void injectedInfSkipsItsWindow_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<bool>("skip_nonfinite");
        for (const char* m : {"pytorch", "accelerator", "trainer"}) {
            QTest::addRow("%s", m) << m << false;
            QTest::addRow("%s --skip-nonfinite", m) << m << true;
        }
    }
    void injectedInfSkipsItsWindow() {
        QFETCH(QString, mode);
        QFETCH(bool, skip_nonfinite);
        auto c = tiny(mode_named(mode));
        c.max_steps = 5;
        c.loss_scaling = LossScaling::Dynamic;
        c.scheduler = SchedulerKind::Linear;
        c.skip_nonfinite = skip_nonfinite;
        c.record_micro_steps = true;
        Inside inside;
        RunControl control;
        RunContext ctx(c, inside, control);
        inside.ctx = &ctx;
        const std::int64_t poisoned_micro_step = 2 * 4 + 2;
        inside.after_backward = [&](const MicroStepRecord& r) {
            if (r.micro_step != poisoned_micro_step) return;
            torch::NoGradGuard no_grad;
            ctx.model().parameters()[0].mutable_grad().view(-1)[0] = std::numeric_limits<float>::infinity();
        };
        run_style(ctx);
        QCOMPARE(inside.steps.size(), std::size_t(5));
        const double s = 65536.0;
        for (std::size_t i = 0; i < 5; ++i) {
            const auto& r = inside.steps[i];
            QCOMPARE(r.skipped, i == 2);
            QCOMPARE(r.loss_scale, i <= 2 ? s : s / 2); // the window's scale, before its update
            QVERIFY(std::isfinite(r.loss));
            if (i == 0) continue;
            QCOMPARE(same(inside.weights[i], inside.weights[i - 1]), i == 2);
            QCOMPARE(inside.scheduler_steps[i], inside.scheduler_steps[i - 1] + (i == 2 ? 0 : 1));
        }
        QCOMPARE(ctx.scaler().get_scale(), s / 2);
        QCOMPARE(ctx.overflow_skips(), std::int64_t(1));
        QCOMPARE(ctx.skipped_updates(), std::int64_t(0)); // not --skip-nonfinite's: the scaler's
        QCOMPARE(inside.steps[3].learning_rate, inside.steps[2].learning_rate); // the schedule waited
        QVERIFY(std::any_of(inside.logs.begin(), inside.logs.end(), [](const std::string& l) {
            return l.find("skipped optimizer step 3: the loss scaler found inf/NaN gradients at scale 65536.0") !=
                   std::string::npos;
        }));
    }

    // Without a loss scaler the same inf is a divergence (or, with
    // --skip-nonfinite, a window skipped as non-finite, the scale staying 1).
    void injectedInfWithoutScalerDiverges() {
        auto c = tiny(Mode::Pytorch);
        c.max_steps = 5;
        c.record_micro_steps = true;
        for (bool skip : {false, true}) {
            c.skip_nonfinite = skip;
            Inside inside;
            RunControl control;
            RunContext ctx(c, inside, control);
            inside.ctx = &ctx;
            inside.after_backward = [&](const MicroStepRecord& r) {
                if (r.micro_step != 10) return;
                torch::NoGradGuard no_grad;
                ctx.model().parameters()[0].mutable_grad().view(-1)[0] = std::numeric_limits<float>::infinity();
            };
            if (!skip) {
                QVERIFY_THROWS_EXCEPTION(DivergedError, run_style(ctx));
                continue;
            }
            run_style(ctx);
            QCOMPARE(inside.steps.size(), std::size_t(5));
            QVERIFY(inside.steps[2].skipped && !inside.steps[3].skipped);
            QCOMPARE(inside.steps[2].loss_scale, 1.0);
            QCOMPARE(ctx.skipped_updates(), std::int64_t(1));
            QCOMPARE(ctx.overflow_skips(), std::int64_t(0));
        }
    }

    // Acceptance 2: the scale doubles after growth_interval good windows — counted
    // in windows, not micro-batches (K = 4 here; an update() per micro-batch would
    // double it every 3 micro-batches).
    void scaleGrowsPerWindow_data() {
        add_style_rows();
    }
    void scaleGrowsPerWindow() {
        QFETCH(QString, mode);
        auto c = tiny(mode_named(mode));
        c.max_steps = 7;
        c.loss_scaling = LossScaling::Dynamic;
        Inside inside;
        RunControl control;
        RunContext ctx(c, inside, control);
        inside.ctx = &ctx;
        GradScalerOptions options;
        options.init_scale = 1024.0;
        options.growth_interval = 3;
        ctx.scaler() = LossScaler(options);
        run_style(ctx);
        const std::vector<double> expected = {1024, 1024, 1024, 2048, 2048, 2048, 4096};
        QCOMPARE(inside.steps.size(), expected.size());
        for (std::size_t i = 0; i < expected.size(); ++i) {
            QCOMPARE(inside.steps[i].loss_scale, expected[i]);
            QVERIFY(!inside.steps[i].skipped);
        }
        QCOMPARE(ctx.scaler().get_scale(), 4096.0);
        QCOMPARE(ctx.scaler().impl().growth_tracker(), std::int64_t(1));
    }

    // Acceptance 2: unscale_ runs once per window whatever K is (also for a
    // partial last window: 13 micro-batches per epoch here); the pitfall
    // (--scaler-per-micro-batch) runs it after every micro-batch.
    void unscaleOncePerWindow_data() {
        add_style_rows({1, 3, 4});
    }
    void unscaleOncePerWindow() {
        QFETCH(QString, mode);
        QFETCH(int, k);
        auto c = tiny(mode_named(mode), k);
        c.loss_scaling = LossScaling::Dynamic;
        c.batch_size = 320; // 4000 samples: 13 micro-batches per epoch, the last of 160
        c.max_steps = 0;
        c.epochs = 1;
        Inside inside;
        RunControl control;
        RunContext ctx(c, inside, control);
        inside.ctx = &ctx;
        run_style(ctx);
        const std::int64_t updates = (13 + k - 1) / k;
        QCOMPARE(ctx.progress().global_step, updates);
        QCOMPARE(ctx.scaler().unscale_count(), updates);
        QCOMPARE(inside.unscales.size(), std::size_t(updates));
        for (std::size_t i = 0; i < inside.unscales.size(); ++i) QCOMPARE(inside.unscales[i], std::int64_t(i + 1));
        if (mode != "pytorch" || k == 1) return;
        auto wrong = c;
        wrong.scaler_per_micro_batch = true;
        Inside pitfall;
        RunContext wrong_ctx(wrong, pitfall, control);
        pitfall.ctx = &wrong_ctx;
        run_style(wrong_ctx);
        QCOMPARE(wrong_ctx.scaler().unscale_count(), std::int64_t(13));
    }

    // Acceptance 2: clipping sees the unscaled gradients: with scaling, the norm
    // each step reports (before clipping) and the clipped trajectory equal the
    // unscaled run's.
    void clippingSeesUnscaledGradients_data() {
        add_style_rows();
    }
    void clippingSeesUnscaledGradients() {
        QFETCH(QString, mode);
        auto plain = tiny(mode_named(mode));
        plain.max_grad_norm = 0.05;
        auto scaled = plain;
        scaled.loss_scaling = LossScaling::Dynamic;
        const auto a = run(plain), b = run(scaled);
        QVERIFY2(b.summary.status == RunStatus::Completed, b.summary.message.c_str());
        QCOMPARE(a.steps.size(), std::size_t(12));
        QCOMPARE(b.steps.size(), std::size_t(12));
        QVERIFY(a.steps.front().grad_norm > 0.05); // clipping is active
        for (std::size_t i = 0; i < 12; ++i) {
            QVERIFY2(relative(b.steps[i].grad_norm, a.steps[i].grad_norm) <= 1e-6,
                     qPrintable(QString("step %1: %2 vs %3").arg(i + 1).arg(b.steps[i].grad_norm).arg(a.steps[i].grad_norm)));
            QVERIFY(std::abs(b.steps[i].loss - a.steps[i].loss) <= 1e-6);
            QCOMPARE(b.steps[i].loss_scale, 65536.0);
            QCOMPARE(a.steps[i].loss_scale, 1.0);
        }
    }

    // Acceptance 3 (ARCHITECTURE.md I13, scaling without overflow changes nothing): with loss scaling on and no overflow
    // the per-step losses equal those without, in each style, for K = 1, 3, 4 (S
    // is a power of two: scaling and unscaling are exact in floating point).
    void scalingWithoutOverflowChangesNothing_data() {
        add_style_rows({1, 3, 4});
    }
    void scalingWithoutOverflowChangesNothing() {
        QFETCH(QString, mode);
        QFETCH(int, k);
        auto plain = tiny(mode_named(mode), k);
        plain.optimizer = OptimizerKind::AdamW;
        plain.learning_rate = 1e-3;
        auto scaled = plain;
        scaled.loss_scaling = LossScaling::Dynamic;
        const auto a = run(plain), b = run(scaled);
        QVERIFY2(b.summary.status == RunStatus::Completed, b.summary.message.c_str());
        QCOMPARE(b.steps.size(), a.steps.size());
        QCOMPARE(a.steps.size(), std::size_t(12));
        for (std::size_t i = 0; i < a.steps.size(); ++i) {
            QVERIFY2(std::abs(b.steps[i].loss - a.steps[i].loss) <= 1e-6,
                     qPrintable(QString("step %1: %2 vs %3").arg(i + 1).arg(b.steps[i].loss).arg(a.steps[i].loss)));
            QVERIFY(!b.steps[i].skipped);
        }
        QVERIFY(a.steps.back().loss < a.steps.front().loss); // it learns
    }

    // The overflow the studio's pitfall provokes, without injection. fp32
    // gradients are mostly below 1 (the MLP's largest element per window: 0.04 to
    // 0.7), so no representable scale overflows them all; at S = 3.4e38, the
    // largest float32, an element above 1 does (fp32 there is as fp16 at S = 2^16),
    // and the gradient spikes of a high learning rate have some. The right loop
    // skips those windows, halving S once each, and trains on; the pitfall
    // (unscale_ and update() after every micro-batch) leaves each update with
    // about its last micro-batch's gradient, so its losses part from the right
    // ones, and it unscales K times per window.
    void provokedOverflow() {
        if (!QFile::exists(ACCUM_FASHION_MNIST_DIR "/train-images-idx3-ubyte.gz"))
            QSKIP("dataset-fashion-mnist is not installed");
        RunConfig right;
        right.device = "cpu";
        right.epochs = 0;
        right.max_steps = 40;
        right.learning_rate = 0.2;
        right.eval_strategy = Strategy::No;
        right.save_strategy = Strategy::No;
        right.loss_scaling = LossScaling::Dynamic;
        right.loss_scale_init = 3.4e38;
        auto wrong = right;
        wrong.scaler_per_micro_batch = true;
        const auto a = run(right), b = run(wrong);
        QVERIFY2(a.summary.status == RunStatus::Completed, a.summary.message.c_str());
        QVERIFY2(b.summary.status == RunStatus::Completed, b.summary.message.c_str());
        std::int64_t skips = 0;
        double scale = static_cast<float>(3.4e38);
        for (const auto& s : a.steps) {
            QCOMPARE(s.loss_scale, scale); // constant but for the halvings (no growth in 40 windows)
            if (s.skipped) {
                ++skips;
                scale /= 2;
            }
        }
        QVERIFY2(skips >= 1, "no window overflowed");
        QVERIFY(a.steps.back().loss < a.steps.front().loss); // it trains on
        QVERIFY(a.summary.message.find(std::to_string(skips) + " skipped for overflow by the loss scaler") !=
                std::string::npos);
        QCOMPARE(b.steps.size(), a.steps.size());
        const auto apart = testing::compare_losses(a.steps, b.steps);
        QVERIFY2(apart.apart_by_more_than(1e-2), apart.what().c_str());
    }

    // The scaler's state is in the checkpoint (accum_state.json "scaler", as
    // PyTorch's state_dict): resumed at step 4 after an overflow at step 2 (scale
    // 1024 → 512, two good windows since), the run goes on as the uninterrupted
    // one — growth after the 3rd good window, the same scales and losses.
    void resumeKeepsTheScaler_data() {
        add_style_rows();
    }
    void resumeKeepsTheScaler() {
        QFETCH(QString, mode);
        QTemporaryDir full_dir, resumed_dir;
        auto c = tiny(mode_named(mode));
        c.max_steps = 8;
        c.loss_scaling = LossScaling::Dynamic;
        c.save_strategy = Strategy::Steps;
        c.save_steps = 4;
        c.output_dir = full_dir.path().toStdString();
        c.record_micro_steps = true;
        Inside full;
        RunControl control;
        RunContext ctx(c, full, control);
        full.ctx = &ctx;
        GradScalerOptions options;
        options.init_scale = 1024.0;
        options.growth_interval = 3;
        ctx.scaler() = LossScaler(options);
        full.after_backward = [&](const MicroStepRecord& r) {
            if (r.micro_step != 6) return;
            torch::NoGradGuard no_grad;
            ctx.model().parameters()[0].mutable_grad().view(-1)[0] = std::numeric_limits<float>::quiet_NaN();
        };
        run_style(ctx);
        QCOMPARE(full.steps.size(), std::size_t(8));
        const std::vector<double> scales = {1024, 1024, 512, 512, 512, 1024, 1024, 1024};
        for (std::size_t i = 0; i < 8; ++i) QCOMPARE(full.steps[i].loss_scale, scales[i]);
        QFile state(full_dir.filePath("checkpoint-4/accum_state.json"));
        QVERIFY(state.open(QIODevice::ReadOnly));
        const auto saved = QJsonDocument::fromJson(state.readAll()).object()["scaler"].toObject();
        QCOMPARE(saved["scale"].toDouble(), 512.0);
        QCOMPARE(saved["_growth_tracker"].toInt(), 2);
        QCOMPARE(saved["growth_interval"].toInt(), 3);

        auto again = c;
        again.output_dir = resumed_dir.path().toStdString();
        again.resume_from = full_dir.filePath("checkpoint-4").toStdString();
        Inside resumed;
        RunContext resumed_ctx(again, resumed, control); // the scaler's defaults: the checkpoint sets them
        resumed.ctx = &resumed_ctx;
        run_style(resumed_ctx); // from again.resume_from, as the session resumes
        QCOMPARE(resumed.steps.size(), std::size_t(4));
        for (std::size_t i = 0; i < 4; ++i) {
            const auto& r = resumed.steps[i];
            const auto& f = full.steps[4 + i];
            QCOMPARE(r.step, f.step);
            QCOMPARE(r.loss_scale, f.loss_scale);
            QVERIFY2(std::abs(r.loss - f.loss) <= 1e-6, qPrintable(QString("%1 vs %2").arg(r.loss).arg(f.loss)));
        }
    }

    // The micro-step records say what the code panel lights: the forward under
    // autocast, and the scale S the loss was multiplied by (0 without a scaler).
    void microStepRecordsCarryPrecision() {
        auto c = tiny(Mode::Pytorch);
        c.max_steps = 2;
        c.record_micro_steps = true;
        const auto plain = run(c);
        c.mixed_precision = MixedPrecision::Bf16;
        c.loss_scaling = LossScaling::Dynamic;
        const auto amp = run(c);
        QCOMPARE(plain.micro.size(), std::size_t(8));
        QCOMPARE(amp.micro.size(), std::size_t(8));
        for (std::size_t i = 0; i < 8; ++i) {
            QVERIFY(!plain.micro[i].autocast && plain.micro[i].loss_scale == 0.0);
            QVERIFY(amp.micro[i].autocast && amp.micro[i].loss_scale == 65536.0);
        }
    }

    // fp16 needs CUDA: refused before the run (--device cpu, validate) and when
    // --device auto finds no CUDA (the run's device is the CPU): exit 2, the text.
    void fp16NeedsCuda() {
        if (torch::cuda::is_available()) QSKIP("a CUDA device is here: --device auto is CUDA");
        for (const char* device : {"cpu", "auto"}) {
            auto c = tiny(Mode::Pytorch);
            c.device = device;
            c.mixed_precision = MixedPrecision::Fp16;
            const auto r = run(c);
            QCOMPARE(r.summary.status, RunStatus::Error);
            QCOMPARE(r.summary.exit_code, exit_code::invalid_arguments);
            QVERIFY2(r.summary.message == "--mixed-precision: fp16 needs CUDA; use bf16 on the CPU",
                     r.summary.message.c_str());
            QVERIFY(r.steps.empty());
        }
    }
};

QTEST_GUILESS_MAIN(TestAmpTraining)
#include "test_amp_training.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
