// Numerical invariants of DESIGN.md that need to look inside the engine
// (weights, .grad, the Accelerator's pieces). Torch first, then Qt Test
// (this target sets QT_NO_KEYWORDS).
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>
#include <torch/autograd.h>

#include <QtTest/QtTest>

#include <fstream>
#include <optional>

#include "accum/session.h"
#include "accum/sink.h"
#include "data/data_loader.h"
#include "memory/counting_allocator.h"
#include "models/cpu_kernels.h"
#include "models/fused_attention.h"
#include "models/fused_dense.h"
#include "models/fused_loss.h"
#include "models/model.h"
#include "styles/accelerator.h"
#include "styles/pytorch_loop.h"
#include "switches.h"
#include "training/lr_scheduler.h"
#include "training/run_context.h"

using namespace accum;

namespace accum {
void run_trainer_style(RunContext& ctx);
} // namespace accum

namespace {

std::vector<torch::Tensor> snapshot(const std::vector<torch::Tensor>& params) {
    std::vector<torch::Tensor> out;
    for (const auto& p : params) out.push_back(p.detach().clone());
    return out;
}

// A CSV with `rows` rows of 6 features and 3 classes, for exact micro-batch counts.
std::string write_csv(const QTemporaryDir& dir, int rows) {
    const std::string path = dir.filePath("toy.csv").toStdString();
    std::ofstream f(path);
    f << "a,b,c,d,e,f,label\n";
    for (int i = 0; i < rows; ++i) {
        f << (i % 7) * 0.5 << "," << (i % 3) << "," << (i * 37 % 11) << "," << (i % 5) - 2.0 << "," << (i % 2) << ","
          << (i * 13 % 17) * 0.1 << "," << (i % 3) << "\n";
    }
    return path;
}

} // namespace

class TestInvariants : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Invariant 1 (DESIGN.md): x = 1..8, y = 2x, w0 = 0, MSE, SGD lr 0.02.
    // dL/dw = mean(2 (w x - y) x) = -4 mean(x^2) = -4 * 204/8 = -102, so one
    // update gives w = 0.02 * 102 = 2.04, with batch 8 × K 1 and batch 2 × K 4.
    void toyOneUpdate_data() {
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("k");
        QTest::newRow("8x1") << 8 << 1;
        QTest::newRow("2x4") << 2 << 4;
        QTest::newRow("4x2") << 4 << 2;
        QTest::newRow("1x8") << 1 << 8;
    }
    void toyOneUpdate() {
        QFETCH(int, batch);
        QFETCH(int, k);
        auto w = torch::zeros({1}, torch::requires_grad());
        torch::optim::SGD sgd({w}, torch::optim::SGDOptions(0.02));
        const auto x = torch::arange(1, 9, torch::kFloat32), y = 2 * x;
        // Through the Accelerator's pieces, exactly as the accelerator style uses them.
        Accelerator accelerator(k);
        AcceleratedOptimizer optimizer(sgd, accelerator.gradient_state);
        int steps = 0;
        for (int i = 0; i < 8 / batch; ++i) {
            accelerator.gradient_state.end_of_dataloader = (i + 1 == 8 / batch);
            auto scope = accelerator.accumulate(w);
            const auto xb = x.slice(0, i * batch, (i + 1) * batch), yb = y.slice(0, i * batch, (i + 1) * batch);
            accelerator.backward(torch::mse_loss(w * xb, yb));
            if (!accelerator.sync_gradients()) {
                // Invariant 3: between syncs the weight has not moved.
                optimizer.step();
                optimizer.zero_grad();
                QCOMPARE(w.item<float>(), 0.0f);
                continue;
            }
            optimizer.step();
            optimizer.zero_grad();
            ++steps;
        }
        QCOMPARE(steps, 1);
        QVERIFY2(std::abs(w.item<double>() - 2.04) <= 1e-6, std::to_string(w.item<double>()).c_str());
    }

    // Invariant 3 on the real engine: between syncs the weights are bit-identical
    // to the window's start and .grad equals (1/K) Σ g_i of the micro-batches so far.
    void gradIsMeanOfMicroBatchGradients() {
        RunConfig config;
        config.dataset = "synthetic-pairs";
        config.model = "mlp";
        config.batch_size = 16;
        config.accumulation_steps = 4;
        config.max_steps = 3;
        config.shuffle = false;
        Sink sink;
        RunControl control;
        RunContext ctx(config, sink, control);
        auto params = ctx.model->parameters();
        const auto start = snapshot(params);
        std::vector<torch::Tensor> expected;
        for (const auto& p : params) expected.push_back(torch::zeros_like(p));
        const double K = 4;
        for (int i = 0; i < 3; ++i) { // three of the four micro-batches of the first window
            const auto batch = ctx.train_loader->batch(i);
            const auto g = torch::autograd::grad({ctx.model->forward(batch).loss}, params);
            for (std::size_t j = 0; j < params.size(); ++j) expected[j] += g[j] / K;
            auto outputs = ctx.model->forward(batch);
            (outputs.loss / K).backward();
            for (std::size_t j = 0; j < params.size(); ++j) {
                QVERIFY(torch::equal(params[j], start[j]));
                QVERIFY2(torch::allclose(params[j].grad(), expected[j], 1e-5, 1e-7), "grad != (1/K) sum g_i");
            }
        }
    }

    // Invariant 5: a partial last window of r < K micro-batches. The Trainer divides
    // it by r (mean of the r); the PyTorch loop and Accelerate divide by K, so their
    // update is r/K of the Trainer's (plain SGD, same state before the window).
    void partialWindowScaling() {
        QTemporaryDir dir;
        RunConfig config;
        config.dataset = "csv";
        config.data_path = write_csv(dir, 50); // 40 train rows: 5 micro-batches of 8
        config.batch_size = 8;
        config.accumulation_steps = 4;          // windows of 4 and r = 1
        config.epochs = 1;
        config.optimizer = "sgd";
        config.momentum = 0.0;
        config.learning_rate = 0.1;
        config.eval_strategy = "no";
        Sink sink;
        RunControl control;
        auto params_after = [&](const std::string& mode, std::int64_t max_steps) {
            RunConfig c = config;
            c.mode = mode;
            c.max_steps = max_steps;
            RunContext ctx(c, sink, control);
            if (mode == "trainer") run_trainer_style(ctx); else run_pytorch_loop(ctx);
            return snapshot(ctx.model->parameters());
        };
        const auto w1 = params_after("pytorch", 1); // after the first (full) window
        const auto wp = params_after("pytorch", 0);
        const auto wt = params_after("trainer", 0);
        const auto w1t = params_after("trainer", 1);
        for (std::size_t j = 0; j < w1.size(); ++j) {
            QVERIFY(torch::allclose(w1[j], w1t[j], 1e-6, 1e-7)); // full windows agree
            const auto dp = wp[j] - w1[j], dt = wt[j] - w1[j];
            QVERIFY2(torch::allclose(dt * 0.25, dp, 1e-4, 1e-7), "pytorch update != (r/K) × trainer update");
        }
    }

    // Schedulers: the rate reaches its final value exactly at the last optimizer step.
    void schedulerEndsAtLastStep_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<double>("final_factor");
        QTest::newRow("linear") << "linear" << 0.0;
        QTest::newRow("cosine") << "cosine" << 0.0;
        QTest::newRow("constant") << "constant" << 1.0;
    }
    void schedulerEndsAtLastStep() {
        QFETCH(QString, kind);
        QFETCH(double, final_factor);
        auto w = torch::zeros({1}, torch::requires_grad());
        torch::optim::SGD sgd({w}, torch::optim::SGDOptions(0.5));
        LrScheduler s(sgd, kind.toStdString(), 3, 10);
        QCOMPARE(s.current_lr(), 0.0);                 // warm-up starts at 0
        s.step();
        QVERIFY(std::abs(s.current_lr() - 0.5 / 3) < 1e-12);
        for (int i = 1; i < 9; ++i) {
            s.step();
            QVERIFY(s.current_lr() > 0.0);             // not there before the last step
        }
        s.step();                                      // the 10th and last step
        QVERIFY(std::abs(s.current_lr() - 0.5 * final_factor) < 1e-12);
    }

    // The counting allocator counts a known allocation exactly.
    void allocatorCountsExactly() {
        memory::install_counting_allocator();
        memory::CountingScope scope;
        const auto before = memory::cpu_counters().current;
        {
            auto t = torch::empty({1000, 250}, torch::kFloat32); // 1 000 000 bytes
            QCOMPARE(memory::cpu_counters().current - before, std::int64_t(1000000));
        }
        QCOMPARE(memory::cpu_counters().current, before);
        memory::set_cpu_budget(before + 500000);
        bool threw = false;
        try {
            auto t = torch::empty({1000, 250}, torch::kFloat32);
        } catch (const std::exception& e) {
            threw = is_out_of_memory_error(e);
        }
        memory::set_cpu_budget(0);
        QVERIFY(threw);
        QCOMPARE(memory::cpu_counters().current, before);
    }

    // A freed block of 1 MiB or more is kept and handed to the next allocation of
    // the same size (memory/counting_allocator.h); it no longer counts as tensor
    // memory, so the budget does not see it; smaller blocks go back to malloc.
    void allocatorReusesFreedBlocks() {
        if (!memory::block_cache_enabled()) QSKIP("the block cache is off in AddressSanitizer builds");
        memory::install_counting_allocator();
        memory::CountingScope scope;
        memory::release_cached_blocks();
        const auto before = memory::cpu_counters().current;
        constexpr std::int64_t floats = 1 << 19; // 2 MiB
        auto a = torch::empty({floats}, torch::kFloat32);
        const void* first = a.data_ptr();
        a = torch::Tensor();
        QCOMPARE(memory::cpu_counters().current, before);
        QCOMPARE(memory::cached_block_bytes(), floats * 4);
        auto small = torch::empty({1000}, torch::kFloat32); // 4 kB: not kept when freed
        small = torch::Tensor();
        QCOMPARE(memory::cached_block_bytes(), floats * 4);
        auto b = torch::empty({floats}, torch::kFloat32);
        QCOMPARE(b.data_ptr(), first);
        QCOMPARE(memory::cached_block_bytes(), std::int64_t(0));
        QCOMPARE(memory::cpu_counters().current - before, floats * 4);
        b = torch::Tensor();
        memory::set_cpu_budget(before + floats * 2); // a kept block does not lift the budget
        bool threw = false;
        try {
            auto t = torch::empty({floats}, torch::kFloat32);
        } catch (const std::exception& e) {
            threw = is_out_of_memory_error(e);
        }
        memory::set_cpu_budget(0);
        QVERIFY(threw);
        QCOMPARE(memory::cached_block_bytes(), floats * 4);
        memory::release_cached_blocks();
        QCOMPARE(memory::cached_block_bytes(), std::int64_t(0));
    }

    // Out of memory in the middle of a run (as when another process takes device
    // memory): the budget drops under the run's feet after a few optimizer steps.
    // The run ends cleanly as out_of_memory with its steps reported, and the next
    // run in the same process completes.
    void outOfMemoryMidRun() {
        struct Squeeze : Sink {
            std::vector<StepRecord> steps;
            SummaryRecord summary;
            void on_step(const StepRecord& r) override {
                steps.push_back(r);
                if (r.step == 3) memory::set_cpu_budget(memory::cpu_counters().current + 1024);
            }
            void on_summary(const SummaryRecord& s) override { summary = s; }
        };
        RunConfig c;
        c.dataset = "synthetic-pairs";
        c.batch_size = 32;
        c.accumulation_steps = 2;
        c.epochs = 0;
        c.max_steps = 20;
        c.eval_strategy = "no";
        Squeeze sink;
        Session session;
        const auto s = session.run(c, sink);
        QCOMPARE(s.status, RunStatus::OutOfMemory);
        QCOMPARE(s.exit_code, 3);
        QCOMPARE(s.optimizer_steps, std::int64_t(3));
        QCOMPARE(sink.steps.size(), std::size_t(3));
        QVERIFY(s.message.find("Try micro-batch 16 × 4") != std::string::npos);
        QCOMPARE(memory::cpu_counters().budget, std::int64_t(0)); // released for the next run
        Sink quiet;
        QCOMPARE(Session().run(c, quiet).status, RunStatus::Completed);
        QCOMPARE(memory::cached_block_bytes(), std::int64_t(0)); // handed back with the run
    }

    // find_executable_batch_size retries with × 0.9 and gives up at zero.
    void findExecutableBatchSize() {
        std::vector<std::int64_t> tried;
        find_executable_batch_size(
            [&](std::int64_t b) {
                tried.push_back(b);
                if (b > 70) C10_THROW_ERROR(OutOfMemoryError, "out of memory");
            },
            100);
        QCOMPARE(tried, (std::vector<std::int64_t>{100, 90, 81, 72, 64}));
        bool reached_zero = false;
        try {
            find_executable_batch_size([](std::int64_t) { C10_THROW_ERROR(OutOfMemoryError, "out of memory"); }, 3);
        } catch (const std::runtime_error& e) {
            reached_zero = std::string(e.what()).find("reached zero") != std::string::npos;
        }
        QVERIFY(reached_zero);
    }

    // The fused CPU attention (models/fused_attention.cpp) against the same maths
    // written with LibTorch operators, forward and every gradient, with key padding
    // and with a causal mask, at lengths that are and are not multiples of the
    // 8-float vectors, with the AVX2 kernels and the portable ones. The two sum in
    // different orders, so they agree to float rounding (1e-5 on values of order 1).
    void fusedAttentionMatchesOperators_data() {
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("tokens");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<bool>("portable");
        for (const bool portable : {false, true}) {
            const char* isa = portable ? "portable" : "best";
            QTest::addRow("3x48 padding %s", isa) << 3 << 48 << false << portable;
            QTest::addRow("2x13 causal %s", isa) << 2 << 13 << true << portable;
            QTest::addRow("1x5 padding %s", isa) << 1 << 5 << false << portable;
        }
    }
    void fusedAttentionMatchesOperators() {
        QFETCH(int, batch);
        QFETCH(int, tokens);
        QFETCH(bool, causal);
        QFETCH(bool, portable);
        constexpr std::int64_t width = 64, heads = 4, head_width = width / heads;
        const double scale = 1.0 / std::sqrt(double(head_width));
        torch::manual_seed(7);
        const auto qkv = torch::randn({batch, tokens, 3 * width}).requires_grad_();
        QVERIFY(fused_attention_available(qkv, /*attention_dropout=*/false));
        QVERIFY(!fused_attention_available(qkv, /*attention_dropout=*/true));
        // Sequence b keeps its first tokens - 2·b keys (at least one).
        auto keep = torch::ones({batch, tokens});
        for (int b = 0; b < batch; ++b) keep[b].slice(0, std::max(1, tokens - 2 * b)).fill_(0);
        auto bias = torch::zeros({batch, 1, 1, tokens}).masked_fill(keep.eq(0).view({batch, 1, 1, tokens}), -1e9);
        if (causal) bias = bias + torch::zeros({tokens, tokens}).masked_fill(torch::ones({tokens, tokens}).triu(1).to(torch::kBool), -1e9);
        const auto upstream = torch::randn({batch, tokens, width});

        use_portable_kernels(portable);
        const auto fused = fused_attention(qkv, bias, heads, scale);
        const auto fused_grad = torch::autograd::grad({fused}, {qkv}, {upstream})[0];
        use_portable_kernels(false);

        const auto split = qkv.view({batch, tokens, 3, heads, head_width}).permute({2, 0, 3, 1, 4});
        const auto probs = torch::softmax(torch::matmul(split[0], split[1].transpose(-2, -1)) * scale + bias, -1);
        const auto reference = torch::matmul(probs, split[2]).transpose(1, 2).reshape({batch, tokens, width});
        const auto reference_grad = torch::autograd::grad({reference}, {qkv}, {upstream})[0];

        QCOMPARE(fused.sizes(), reference.sizes());
        const double out_diff = (fused - reference).abs().max().item<double>();
        const double grad_diff = (fused_grad - reference_grad).abs().max().item<double>();
        QVERIFY2(out_diff < 1e-5, qPrintable(QString("largest |Δ output| %1").arg(out_diff)));
        QVERIFY2(grad_diff < 1e-5, qPrintable(QString("largest |Δ gradient| %1").arg(grad_diff)));
        QVERIFY(reference_grad.abs().max().item<double>() > 1e-3); // the gradients are not trivially zero
    }

    // The fused dense stack (models/fused_dense.cpp) against nn::Linear and ReLU:
    // the output, every parameter's .grad after two backward passes (the second
    // adds into the first, as under gradient accumulation) and the input's
    // gradient. Shapes cover the MLP's own (784-256-128-10 at micro-batch 64) and
    // ones that leave partial panels of items, register blocks of rows and blocks
    // of columns (37 items, 19 inputs, 13 hidden), with the AVX2 kernels and the
    // portable ones. Both sum in float, in different orders: they agree to 1e-4 on
    // gradients of order 10 (784-term sums).
    void fusedDenseMatchesOperators_data() {
        QTest::addColumn<int>("items");
        QTest::addColumn<QList<int>>("widths");
        QTest::addColumn<bool>("input_grad");
        QTest::addColumn<bool>("portable");
        QTest::addColumn<bool>("in_place");
        for (const bool portable : {false, true})
            for (const bool in_place : {false, true}) {
                const auto name = [&](const char* shape) {
                    return QString("%1 %2%3").arg(shape, portable ? "portable" : "best", in_place ? " in place" : "");
                };
                QTest::newRow(qPrintable(name("mlp 64"))) << 64 << QList<int>{784, 256, 128, 10} << false << portable
                                                         << in_place;
                QTest::newRow(qPrintable(name("ragged 37"))) << 37 << QList<int>{19, 13, 22, 3} << true << portable
                                                            << in_place;
                QTest::newRow(qPrintable(name("one layer 5"))) << 5 << QList<int>{8, 7} << true << portable << in_place;
            }
    }
    void fusedDenseMatchesOperators() {
        QFETCH(int, items);
        QFETCH(QList<int>, widths);
        QFETCH(bool, input_grad);
        QFETCH(bool, portable);
        QFETCH(bool, in_place); // the training styles' path: the operator adds into .grad (GradientsInPlace)
        torch::manual_seed(11);
        std::vector<torch::Tensor> fused_params, reference_params;
        for (qsizetype l = 0; l + 1 < widths.size(); ++l) {
            const auto w = torch::randn({widths[l + 1], widths[l]}) / std::sqrt(double(widths[l]));
            const auto b = torch::randn({widths[l + 1]}) * 0.1;
            for (const auto& t : {w, b}) {
                fused_params.push_back(t.clone().requires_grad_());
                reference_params.push_back(t.clone().requires_grad_());
            }
        }
        const auto x1 = torch::randn({items, widths.front()}).requires_grad_(input_grad);
        const auto x2 = torch::randn({items, widths.front()}).requires_grad_(input_grad);
        const auto upstream1 = torch::randn({items, widths.back()});
        const auto upstream2 = torch::randn({items, widths.back()});
        QVERIFY(fused_dense_available(x1, fused_params));

        use_portable_kernels(portable);
        std::optional<GradientsInPlace> scope;
        if (in_place) scope.emplace();
        const auto fused = fused_dense(x1, fused_params);
        fused.backward(upstream1); // creates every .grad
        const auto fused_x_grad = input_grad ? x1.grad().clone() : torch::Tensor();
        fused_dense(x2, fused_params).backward(upstream2); // adds into every .grad
        scope.reset();
        use_portable_kernels(false);

        auto eager = [&](const torch::Tensor& x) {
            auto h = x;
            for (std::size_t l = 0; l < reference_params.size(); l += 2) {
                h = torch::linear(h, reference_params[l], reference_params[l + 1]);
                if (l + 2 < reference_params.size()) h = torch::relu(h);
            }
            return h;
        };
        if (input_grad) x1.mutable_grad().reset();
        const auto reference = eager(x1);
        reference.backward(upstream1);
        eager(x2).backward(upstream2);

        auto largest = [](const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); };
        QCOMPARE(fused.sizes(), reference.sizes());
        QVERIFY2(largest(fused, reference) < 1e-5, qPrintable(QString("|Δ output| %1").arg(largest(fused, reference))));
        for (std::size_t i = 0; i < fused_params.size(); ++i) {
            QVERIFY(fused_params[i].grad().defined());
            const double diff = largest(fused_params[i].grad(), reference_params[i].grad());
            QVERIFY2(diff < 1e-4, qPrintable(QString("parameter %1: |Δ .grad| %2").arg(i).arg(diff)));
            QVERIFY(reference_params[i].grad().abs().max().item<double>() > 1e-2); // not trivially zero
        }
        if (input_grad) {
            const double diff = largest(fused_x_grad, x1.grad());
            QVERIFY2(diff < 1e-5, qPrintable(QString("input: |Δ gradient| %1").arg(diff)));
        }
    }

    // GradientsInPlace changes where the fused MLP's parameter gradients go, and only
    // inside the scope: outside it, autograd::grad for the input alone leaves every
    // .grad untouched (as with nn::Linear); inside it the operator fills .grad itself,
    // which is why only the training styles' backward() runs in the scope.
    void gradientsInPlaceOnlyInsideTheScope() {
        torch::manual_seed(5);
        std::vector<torch::Tensor> params{torch::randn({6, 4}).requires_grad_(), torch::randn({6}).requires_grad_(),
                                          torch::randn({3, 6}).requires_grad_(), torch::randn({3}).requires_grad_()};
        const auto x = torch::randn({20, 4}).requires_grad_();
        const auto upstream = torch::randn({20, 3});
        const auto input_grad = torch::autograd::grad({fused_dense(x, params)}, {x}, {upstream});
        QCOMPARE(input_grad.size(), std::size_t{1});
        for (const auto& p : params) QVERIFY(!p.grad().defined());
        {
            const GradientsInPlace scope;
            torch::autograd::grad({fused_dense(x, params)}, {x}, {upstream});
        }
        for (const auto& p : params) QVERIFY(p.grad().defined());
    }

    void fusedCrossEntropyMatchesOperators_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("classes");
        QTest::addColumn<int>("ignored"); // every ignored-th row's label is -100 (0: none)
        QTest::addColumn<bool>("portable");
        for (const bool portable : {false, true}) {
            const char* isa = portable ? "portable" : "best";
            QTest::addRow("images 64×10 %s", isa) << 64 << 10 << 0 << portable;
            QTest::addRow("pairs 37×2 %s", isa) << 37 << 2 << 5 << portable;
            QTest::addRow("tokens 300×64 %s", isa) << 300 << 64 << 3 << portable;
            QTest::addRow("ragged 9×17 %s", isa) << 9 << 17 << 4 << portable;
            QTest::addRow("one class 5×1 %s", isa) << 5 << 1 << 0 << portable;
        }
    }
    void fusedCrossEntropyMatchesOperators() {
        QFETCH(int, rows);
        QFETCH(int, classes);
        QFETCH(int, ignored);
        QFETCH(bool, portable);
        torch::manual_seed(17);
        const auto logits = (torch::randn({rows, classes}) * 3).requires_grad_();
        const auto reference_logits = logits.detach().clone().requires_grad_();
        auto labels = torch::randint(classes, {rows}, torch::kLong);
        for (int i = 0; ignored > 0 && i < rows; i += ignored) labels[i] = kIgnoreIndex;
        QVERIFY(fused_cross_entropy_available(logits, labels));

        // Both outputs carry a gradient, as when a loop uses the mean and a hook
        // the sum: the node adds the two.
        const double items = std::max(1, rows - (ignored > 0 ? (rows + ignored - 1) / ignored : 0));
        use_portable_kernels(portable);
        const auto [fused, fused_mean] = fused_cross_entropy(logits, labels, kIgnoreIndex, items);
        (fused * 0.37 + fused_mean * 1.3).backward();
        use_portable_kernels(false);
        namespace F = torch::nn::functional;
        const auto reference = F::cross_entropy(
            reference_logits, labels, F::CrossEntropyFuncOptions().ignore_index(kIgnoreIndex).reduction(torch::kSum));
        const auto reference_mean = reference / items;
        (reference * 0.37 + reference_mean * 1.3).backward();

        QCOMPARE(fused.dim(), 0);
        QCOMPARE(fused_mean.dim(), 0);
        const double loss = fused.item<double>(), expected = reference.item<double>();
        QVERIFY2(std::abs(loss - expected) <= 1e-5 * std::max(1.0, std::abs(expected)),
                 qPrintable(QString("loss %1, LibTorch %2").arg(loss, 0, 'g', 9).arg(expected, 0, 'g', 9)));
        // The mean is the float sum divided as LibTorch's division divides it.
        QCOMPARE(fused_mean.item<float>(), (fused.detach() / items).item<float>());
        const double diff = (logits.grad() - reference_logits.grad()).abs().max().item<double>();
        QVERIFY2(diff < 1e-6, qPrintable(QString("|Δ gradient| %1").arg(diff)));
        if (classes > 1) QVERIFY(reference_logits.grad().abs().max().item<double>() > 1e-2); // not trivially zero
    }

    // As LibTorch's: a label outside the classes is an error that names it, and a NaN
    // logit makes the loss NaN (so --skip-nonfinite sees it).
    void fusedCrossEntropyBadInput() {
        const auto logits = torch::randn({4, 10});
        auto labels = torch::tensor({1, 2, 10, 3}, torch::kLong);
        try {
            fused_cross_entropy_sum(logits, labels, kIgnoreIndex);
            QFAIL("a label of 10 among 10 classes was accepted");
        } catch (const c10::Error& e) {
            QVERIFY2(std::string(e.what()).find("Target 10 is out of bounds") != std::string::npos, e.what());
        }
        labels[2] = 4;
        auto with_nan = logits.clone();
        with_nan[1][3] = std::nan("");
        QVERIFY(std::isnan(fused_cross_entropy_sum(with_nan, labels, kIgnoreIndex).item<double>()));
        QVERIFY(std::isfinite(fused_cross_entropy_sum(logits, labels, kIgnoreIndex).item<double>()));
    }

    // The ACCUM_* measurement switches: only 0 turns a feature off; anything else
    // leaves it on (with a warning on stderr for values other than 1).
    void switchesTurnOffOnlyAtZero() {
        const char* name = "ACCUM_TEST_SWITCH";
        qunsetenv(name);
        QVERIFY(!switched_off(name));
        for (const char* on : {"1", "", "off", "false"}) {
            qputenv(name, on);
            QVERIFY2(!switched_off(name), on);
        }
        qputenv(name, "0");
        QVERIFY(switched_off(name));
        qunsetenv(name);
    }

    // The data order depends on seed and epoch only, never on the batch size.
    void shuffleIndependentOfBatchSize() {
        const auto a = epoch_permutation(1000, 7, 2, true), b = epoch_permutation(1000, 7, 2, true);
        QCOMPARE(a, b);
        QVERIFY(a != epoch_permutation(1000, 7, 3, true));
        QVERIFY(a != epoch_permutation(1000, 8, 2, true));
        auto sorted = a;
        std::sort(sorted.begin(), sorted.end());
        QCOMPARE(sorted, epoch_permutation(1000, 7, 2, false));
    }
};

QTEST_GUILESS_MAIN(TestInvariants)
#include "test_invariants.moc"
