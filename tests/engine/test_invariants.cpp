// Numerical invariants (docs/ARCHITECTURE.md §2) that need to look inside the engine
// (weights, .grad, the Accelerator's pieces). Torch first, then Qt Test
// (this target sets QT_NO_KEYWORDS).
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>
#include <torch/autograd.h>

#include <QtTest/QtTest>

#include <fstream>
#include <optional>

#include "accum/planned_run.h"
#include "accum/session.h"
#include "accum/sink.h"
#include "data/data_loader.h"
#include "memory/counting_allocator.h"
#include "models/model.h"
#include "styles/accelerator.h"
#include "styles/styles.h"
#include "switches.h"
#include "training/lr_scheduler.h"
#include "training/python_format.h"
#include "training/run_context.h"

#include "capture.h"

using namespace accum;

namespace {

using testing::snapshot;

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
    // ARCHITECTURE.md I1 (accumulation equals the large batch), exactly: x = 1..8, y = 2x, w0 = 0, MSE, SGD lr 0.02.
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
        Optimizer sgd(std::make_unique<torch::optim::SGD>(std::vector<torch::Tensor>{w}, torch::optim::SGDOptions(0.02)));
        const auto x = torch::arange(1, 9, torch::kFloat32), y = 2 * x;
        // Through the Accelerator's pieces, exactly as the accelerator style uses them.
        Accelerator accelerator(k);
        AcceleratedOptimizer optimizer(sgd, accelerator.gradient_state, accelerator.scaler());
        int steps = 0;
        for (int i = 0; i < 8 / batch; ++i) {
            accelerator.gradient_state.end_of_dataloader = (i + 1 == 8 / batch);
            auto scope = accelerator.accumulate(w);
            const auto xb = x.slice(0, i * batch, (i + 1) * batch), yb = y.slice(0, i * batch, (i + 1) * batch);
            accelerator.backward(torch::mse_loss(w * xb, yb));
            if (!accelerator.sync_gradients()) {
                // ARCHITECTURE.md I3: between syncs the weight has not moved.
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

    // ARCHITECTURE.md I3 on the real engine, in each style's own loop: between syncs the
    // weights are bit-identical to the window's start and .grad equals (1/K) Σ gᵢ
    // of the micro-batches so far. The sink looks at the model after every
    // micro-batch's backward (before the optimizer steps on the K-th); gᵢ comes
    // from a copy of the window-start weights on LibTorch's operators.
    void gradIsMeanOfMicroBatchGradients_data() {
        QTest::addColumn<QString>("mode");
        for (const char* m : {"pytorch", "accelerator", "trainer"}) QTest::newRow(m) << m;
    }
    void gradIsMeanOfMicroBatchGradients() {
        QFETCH(QString, mode);
        RunConfig config;
        config.mode = *parse_choice<Mode>(mode.toStdString());
        config.dataset = DatasetKind::SyntheticPairs;
        config.model = ModelKind::Mlp;
        config.batch_size = 16;
        config.accumulation_steps = 4;
        config.epochs = 0;
        config.max_steps = 2;
        config.shuffle = false;
        config.eval_strategy = Strategy::No;
        config.record_micro_steps = true;
        struct Watch : Sink {
            RunContext* ctx = nullptr;
            std::shared_ptr<Model> reference; // the same weights, for gᵢ
            std::vector<torch::Tensor> start, expected;
            int checked = 0;
            std::string failure;
            void on_micro_step(const MicroStepRecord& r) override {
                auto params = ctx->model().parameters();
                auto ref = reference->parameters();
                if (r.window_index == 1) {
                    start = snapshot(params); // the first backward does not move the weights
                    expected.clear();
                    torch::NoGradGuard no_grad;
                    for (std::size_t j = 0; j < params.size(); ++j) {
                        ref[j].copy_(start[j]);
                        expected.push_back(torch::zeros_like(start[j]));
                    }
                }
                const auto batch = ctx->train_loader().batch(r.micro_step - 1);
                const auto g = torch::autograd::grad({reference->forward(batch).loss}, ref);
                for (std::size_t j = 0; j < params.size(); ++j) {
                    expected[j] += g[j] / double(r.window_size);
                    if (!torch::equal(params[j], start[j])) failure = "the weights moved inside a window";
                    if (!torch::allclose(params[j].grad(), expected[j], 1e-5, 1e-7)) failure = ".grad != (1/K) Σ gᵢ";
                }
                ++checked;
            }
        } watch;
        RunControl control;
        RunContext ctx(config, watch, control);
        watch.ctx = &ctx;
        watch.reference = make_model(config, ctx.data().train, KernelSet(CpuKernels::Aten));
        switch (config.mode) {
        case Mode::Pytorch: run_pytorch_loop(ctx); break;
        case Mode::Accelerator: run_accelerator_style(ctx); break;
        case Mode::Trainer: run_trainer_style(ctx); break;
        }
        QCOMPARE(ctx.progress().global_step, std::int64_t(2));
        QCOMPARE(watch.checked, 8);
        QVERIFY2(watch.failure.empty(), watch.failure.c_str());
    }

    // ARCHITECTURE.md I5: a partial last window of r < K micro-batches. The Trainer divides
    // it by r (mean of the r); the PyTorch loop and the Accelerator divide by K, so
    // their update is r/K of the Trainer's (plain SGD, same state before the window).
    void partialWindowScaling_data() {
        QTest::addColumn<QString>("mode");
        QTest::newRow("pytorch") << "pytorch";
        QTest::newRow("accelerator") << "accelerator";
    }
    void partialWindowScaling() {
        QFETCH(QString, mode);
        const Mode divided_by_k = *parse_choice<Mode>(mode.toStdString());
        QTemporaryDir dir;
        RunConfig config;
        config.dataset = DatasetKind::Csv;
        config.data_path = write_csv(dir, 50); // 40 train rows: 5 micro-batches of 8
        config.batch_size = 8;
        config.accumulation_steps = 4;          // windows of 4 and r = 1
        config.epochs = 1;
        config.optimizer = OptimizerKind::Sgd;
        config.momentum = 0.0;
        config.learning_rate = 0.1;
        config.eval_strategy = Strategy::No;
        Sink sink;
        RunControl control;
        auto params_after = [&](Mode mode, std::int64_t max_steps) {
            RunConfig c = config;
            c.mode = mode;
            c.max_steps = max_steps;
            RunContext ctx(c, sink, control);
            if (mode == Mode::Trainer) run_trainer_style(ctx);
            else if (mode == Mode::Accelerator) run_accelerator_style(ctx);
            else run_pytorch_loop(ctx);
            if (ctx.progress().global_step != (max_steps > 0 ? max_steps : 2)) return std::vector<torch::Tensor>{};
            return snapshot(ctx.model().parameters());
        };
        const auto w1 = params_after(divided_by_k, 1); // after the first (full) window
        const auto wp = params_after(divided_by_k, 0);
        const auto wt = params_after(Mode::Trainer, 0);
        const auto w1t = params_after(Mode::Trainer, 1);
        QVERIFY(!w1.empty() && !wp.empty() && !wt.empty() && !w1t.empty()); // each ran its steps
        QCOMPARE(w1.size(), wt.size());
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
        LrScheduler s(sgd, *parse_choice<SchedulerKind>(kind.toStdString()), 3, 10);
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
        c.dataset = DatasetKind::SyntheticPairs;
        c.batch_size = 32;
        c.accumulation_steps = 2;
        c.epochs = 0;
        c.max_steps = 20;
        c.eval_strategy = Strategy::No;
        Squeeze sink;
        Session session;
        const auto s = run_planned(session, c, sink); // the suggestion is the planning layer's
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

    // Numbers in the Trainer's dict lines print as Python's repr(float) prints them
    // (the expected texts are Python 3's own output for these values).
    void pythonFloats_data() {
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("text");
        QTest::newRow("0.05") << 0.05 << "0.05";
        QTest::newRow("2.3026") << 2.3026 << "2.3026";
        QTest::newRow("1e-05") << 1e-05 << "1e-05";
        QTest::newRow("0.0001") << 0.0001 << "0.0001";
        QTest::newRow("100.0") << 100.0 << "100.0";
        QTest::newRow("1.0") << 1.0 << "1.0";
        QTest::newRow("0.0") << 0.0 << "0.0";
        QTest::newRow("-3.5") << -3.5 << "-3.5";
        QTest::newRow("1e+16") << 1e16 << "1e+16";
        QTest::newRow("1e15") << 1e15 << "1000000000000000.0";
        QTest::newRow("0.1+0.2") << 0.1 + 0.2 << "0.30000000000000004";
        QTest::newRow("1/3") << 1.0 / 3 << "0.3333333333333333";
        QTest::newRow("1.2345678901234568e+17") << 123456789012345678.0 << "1.2345678901234568e+17";
        QTest::newRow("2.5e-07") << 2.5e-07 << "2.5e-07";
        QTest::newRow("nan") << std::nan("") << "nan";
    }
    void pythonFloats() {
        QFETCH(double, value);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(python_float(value)), text);
    }
    void pythonRound() {
        QCOMPARE(python_round(2.30258509, 4), 2.3026);
        QCOMPARE(python_round(2.675, 2), 2.67); // 2.675 is 2.67499999… in binary, as Python says
        QCOMPARE(python_round(0.125, 2), 0.12); // an exact half goes to even
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
// SPDX-License-Identifier: GPL-3.0-or-later
