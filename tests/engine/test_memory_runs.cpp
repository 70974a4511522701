// Memory anatomy through real runs: the categories of
// every memory record, the step's peak of activations under accumulation,
// gradient checkpointing in each model and style, the estimate before a run,
// and the planner weighing both levers. The block-level pieces are tested in
// test_memory_anatomy. Torch first, then Qt Test (this target sets
// QT_NO_KEYWORDS).
#include <torch/autograd.h>

#include <QtTest/QtTest>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "accum/engine_messages.h"
#include "accum/memory_planner.h"
#include "accum/planned_run.h"
#include "accum/run_estimate.h"
#include "accum/session.h"
#include "accum/sink.h"
#include "training/control.h"
#include "training/run_context.h"

#include "capture.h"
#include "wait_until.h"

using namespace accum;

namespace {

using testing::Capture;
using testing::run;

using testing::have_fashion_mnist;

RunConfig short_run(ModelKind model, std::int64_t batch, std::int64_t k, std::int64_t steps) {
    RunConfig c;
    c.model = model;
    c.dataset = model == ModelKind::Cnn ? DatasetKind::FashionMnist : DatasetKind::SyntheticPairs;
    c.batch_size = batch;
    c.accumulation_steps = k;
    c.epochs = 0;
    c.max_steps = steps;
    c.threads = 1;
    c.eval_strategy = Strategy::No;
    c.save_strategy = Strategy::No;
    return c;
}

// The model's parameter bytes (float32), from a model built as a run builds it.
std::int64_t parameter_bytes(const RunConfig& config) {
    const auto data = load_dataset(config);
    const auto model = make_model(config, data.train, KernelSet(config.cpu_kernels, true));
    std::int64_t bytes = 0;
    for (const auto& p : model->parameters()) bytes += p.numel() * static_cast<std::int64_t>(p.element_size());
    return bytes;
}


} // namespace

class TestMemoryRuns : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Acceptance 1: at every memory record the four categories add up to the
    // counting allocator's total (exactly: it counts the bytes asked for, a
    // storage's nbytes); parameters equal the model's parameter bytes, gradients
    // are none or all of them, and optimizer state is 0 before the first step and
    // then 1 × (SGD with momentum) or 2 × (AdamW) the parameters. A teaching pace
    // of 0.26 s makes the run record its memory (every 250 ms) inside windows too.
    void categoriesAddUpAtEveryRecord_data() {
        QTest::addColumn<int>("model");
        QTest::addColumn<int>("optimizer");
        QTest::addColumn<int>("copies");
        QTest::newRow("cnn sgd momentum") << int(ModelKind::Cnn) << int(OptimizerKind::Sgd) << 1;
        QTest::newRow("mlp adamw") << int(ModelKind::Mlp) << int(OptimizerKind::AdamW) << 2;
        QTest::newRow("transformer adamw, checkpointing") << int(ModelKind::Transformer) << int(OptimizerKind::AdamW) << 2;
    }
    void categoriesAddUpAtEveryRecord() {
        QFETCH(int, model);
        QFETCH(int, optimizer);
        QFETCH(int, copies);
        auto c = short_run(ModelKind(model), 16, 2, 2);
        if (c.dataset == DatasetKind::FashionMnist && !have_fashion_mnist()) QSKIP("dataset-fashion-mnist is not installed");
        c.optimizer = OptimizerKind(optimizer);
        c.learning_rate = c.optimizer == OptimizerKind::AdamW ? 1e-3 : 0.05;
        c.gradient_checkpointing = c.model == ModelKind::Transformer;
        c.micro_step_delay_s = 0.26;
        const auto r = run(c);
        QVERIFY2(r.summary.status == RunStatus::Completed, r.summary.message.c_str());
        QVERIFY2(r.memory.size() >= 4, qPrintable(QString::number(r.memory.size())));
        const auto params = parameter_bytes(c);
        const double first_step = r.steps.front().elapsed_s;
        int inside_windows = 0;
        for (const auto& m : r.memory) {
            QCOMPARE(m.parameters_bytes + m.gradients_bytes + m.optimizer_state_bytes + m.activations_bytes, m.memory_bytes);
            QCOMPARE(m.parameters_bytes, params);
            QVERIFY(m.gradients_bytes == 0 || m.gradients_bytes == params);
            if (m.elapsed_s > first_step) QCOMPARE(m.optimizer_state_bytes, copies * params);
            else if (m.elapsed_s < first_step) QCOMPARE(m.optimizer_state_bytes, std::int64_t(0));
            QVERIFY(m.activations_bytes >= 0);
            inside_windows += m.gradients_bytes > 0;
            // The peak since the previous record, by its parts: they add up to it
            // (the issue asks for 1 %; the counting allocator makes it exact), it
            // holds the memory now and is within the run's peak so far.
            const auto parts = m.peak_parameters_bytes + m.peak_gradients_bytes + m.peak_optimizer_state_bytes +
                               m.peak_activations_bytes;
            QVERIFY2(std::abs(double(parts - m.interval_peak_bytes)) <= 0.01 * double(m.interval_peak_bytes),
                     qPrintable(QStringLiteral("parts %1 against interval peak %2").arg(parts).arg(m.interval_peak_bytes)));
            QCOMPARE(parts, m.interval_peak_bytes);
            QVERIFY(m.interval_peak_bytes >= m.memory_bytes);
            QVERIFY(m.interval_peak_bytes <= m.peak_memory_bytes);
            QCOMPARE(m.peak_parameters_bytes, params);
            QVERIFY(m.peak_activations_bytes >= 0 && m.peak_gradients_bytes >= 0);
        }
        QVERIFY2(inside_windows >= 1, "no record fell inside a window (gradients held)");
        // Every record after the first covers a micro-batch (the records come
        // before one, at least 250 ms apart; each micro-batch takes 260 ms): its
        // interval peak is a step's peak, with activations, not the quiet moment
        // between micro-batches.
        for (std::size_t i = 1; i < r.memory.size(); ++i)
            QVERIFY2(r.memory[i].peak_activations_bytes > r.memory[i].activations_bytes,
                     qPrintable(QStringLiteral("record %1: peak activations %2, now %3")
                                    .arg(i)
                                    .arg(r.memory[i].peak_activations_bytes)
                                    .arg(r.memory[i].activations_bytes)));
    }

    // The memory records' peak activations (what the studio's
    // bands show) shrink with the micro-batch at the same effective batch: the
    // CNN's at the run's peak at 32 × 8 below that at 64 × 4, below that at 256 × 1, while
    // parameters, gradients and optimizer state at those peaks stay the same to
    // the byte (they hold the optimizer state: the peak is the second update's).
    // Three completed runs of 2 updates each, their losses finite.
    void intervalPeakActivationsShrinkWithTheMicroBatch() {
        if (!have_fashion_mnist()) QSKIP("dataset-fashion-mnist is not installed");
        struct Seen {
            std::int64_t activations = 0;
            std::int64_t static_part = 0;
            std::int64_t peak = 0;
        };
        auto measure = [](std::int64_t batch, std::int64_t k) {
            // Each micro-batch its own record (records at least 250 ms apart), on
            // a fast machine as on a slow one.
            auto c = short_run(ModelKind::Cnn, batch, k, 2);
            c.micro_step_delay_s = 0.26;
            const auto r = run(c);
            [&] {
                QVERIFY2(r.summary.status == RunStatus::Completed, r.summary.message.c_str());
                QCOMPARE(r.steps.size(), std::size_t(2));
                for (const auto& s : r.steps) QVERIFY2(std::isfinite(s.loss), "a loss is not finite");
            }();
            // The record whose interval holds the run's peak (the second update's,
            // with the optimizer state): which record holds the largest activations
            // alone depends on timing, as the first update's (no optimizer state
            // yet) and the second's are alike.
            Seen seen;
            for (const auto& m : r.memory)
                if (m.interval_peak_bytes > seen.peak) {
                    seen.activations = m.peak_activations_bytes;
                    seen.static_part = m.peak_parameters_bytes + m.peak_gradients_bytes + m.peak_optimizer_state_bytes;
                    seen.peak = m.interval_peak_bytes;
                }
            qInfo("cnn %lld × %lld: activations at the run's peak record %lld B, static part %lld B, peak %lld B",
                  (long long)batch, (long long)k, (long long)seen.activations, (long long)seen.static_part,
                  (long long)seen.peak);
            return seen;
        };
        const auto b256 = measure(256, 1);
        if (QTest::currentTestFailed()) return;
        const auto b64 = measure(64, 4);
        if (QTest::currentTestFailed()) return;
        const auto b32 = measure(32, 8);
        if (QTest::currentTestFailed()) return;
        QVERIFY(b256.activations > 0);
        QVERIFY2(b64.activations < b256.activations, qPrintable(QString::number(b64.activations)));
        QVERIFY2(b32.activations < b64.activations, qPrintable(QString::number(b32.activations)));
        // The same 0.35 as accumulationShrinksOnlyActivations: 32/256 of the
        // batch-sized part, plus what does not scale.
        QVERIFY2(b32.activations <= 0.35 * b256.activations, qPrintable(QString::number(double(b32.activations) / b256.activations)));
        QVERIFY(b256.static_part > 0);
        QCOMPARE(b32.static_part, b256.static_part);
        QCOMPARE(b64.static_part, b256.static_part);
    }

    // Acceptance 1: the CNN's peak of activations at 32 × 8 is at most 0.35 × that
    // of 256 × 1 (the activations scale with the micro-batch: 32/256 = 0.125, plus
    // what does not), while the band beneath them — parameters, gradients and
    // optimizer state at the peak — is the same to the byte.
    void accumulationShrinksOnlyActivations() {
        if (!have_fashion_mnist()) QSKIP("dataset-fashion-mnist is not installed");
        const auto big = run(short_run(ModelKind::Cnn, 256, 1, 2));
        const auto small = run(short_run(ModelKind::Cnn, 32, 8, 2));
        QVERIFY2(big.summary.status == RunStatus::Completed, big.summary.message.c_str());
        QVERIFY2(small.summary.status == RunStatus::Completed, small.summary.message.c_str());
        auto peak_step = [](const Capture& c) {
            return *std::max_element(c.steps.begin(), c.steps.end(), [](const StepRecord& a, const StepRecord& b) {
                return a.peak_activations_bytes < b.peak_activations_bytes;
            });
        };
        const auto b = peak_step(big), s = peak_step(small);
        const double ratio = double(s.peak_activations_bytes) / double(b.peak_activations_bytes);
        qInfo("peak activations 256 × 1: %lld B, 32 × 8: %lld B (%.3f ×)", (long long)b.peak_activations_bytes,
              (long long)s.peak_activations_bytes, ratio);
        QVERIFY(b.peak_activations_bytes > 0);
        QVERIFY2(ratio <= 0.35, qPrintable(QString::number(ratio)));
        QCOMPARE(s.peak_memory_bytes - s.peak_activations_bytes, b.peak_memory_bytes - b.peak_activations_bytes);
    }

    // Acceptance 2: with --gradient-checkpointing every model in every style, with
    // dropout on, gives the same per-step losses (1e-6): the recomputed blocks draw
    // the same dropout masks (the generator's state is restored for the re-run),
    // and the gradients add up over the window as without. Also under a memory
    // budget the run needs less than without. The MLP trains per layer (dropout
    // takes it off the fused stack); "mlp fused" checkpoints the fused stack whole.
    void checkpointingKeepsTheLosses_data() {
        QTest::addColumn<int>("model");
        QTest::addColumn<int>("mode");
        QTest::addColumn<double>("dropout");
        for (const auto model : {ModelKind::Mlp, ModelKind::Cnn, ModelKind::Transformer})
            for (const auto mode : {Mode::Pytorch, Mode::Accelerator, Mode::Trainer})
                QTest::addRow("%s %s", to_string(model).c_str(), to_string(mode).c_str()) << int(model) << int(mode) << 0.1;
        QTest::addRow("mlp fused pytorch") << int(ModelKind::Mlp) << int(Mode::Pytorch) << 0.0;
    }
    void checkpointingKeepsTheLosses() {
        QFETCH(int, model);
        QFETCH(int, mode);
        QFETCH(double, dropout);
        auto c = short_run(ModelKind(model), 16, 3, 3);
        if (c.dataset == DatasetKind::FashionMnist && !have_fashion_mnist()) QSKIP("dataset-fashion-mnist is not installed");
        c.mode = Mode(mode);
        c.dropout = dropout;
        c.batch_size = c.model == ModelKind::Cnn ? 24 : 16; // the CNN's blocks run in chunks of 10 and 20 images
        const auto plain = run(c);
        c.gradient_checkpointing = true;
        const auto checkpointed = run(c);
        QVERIFY2(plain.summary.status == RunStatus::Completed, plain.summary.message.c_str());
        QVERIFY2(checkpointed.summary.status == RunStatus::Completed, checkpointed.summary.message.c_str());
        QCOMPARE(checkpointed.steps.size(), plain.steps.size());
        const auto worst = testing::compare_losses(plain.steps, checkpointed.steps);
        QVERIFY2(worst.within(1e-6), worst.what().c_str());
        for (std::size_t i = 0; i < plain.steps.size(); ++i)
            QVERIFY2(std::abs(plain.steps[i].grad_norm - checkpointed.steps[i].grad_norm) <= 1e-6 * std::max(1.0, plain.steps[i].grad_norm),
                     qPrintable(QString::number(i)));
    }

    // Acceptance 2: the gradients after one window of K micro-batches, with and
    // without checkpointing, element by element (1e-6), for each model with dropout.
    // The CNN on LibTorch's operators checkpoints both conv blocks (with the
    // fused ReLU + max-pool its second runs in chunks, not recomputed).
    void checkpointingKeepsTheGradients_data() {
        QTest::addColumn<int>("model");
        QTest::addColumn<int>("kernels");
        for (const auto model : {ModelKind::Mlp, ModelKind::Cnn, ModelKind::Transformer})
            QTest::addRow("%s", to_string(model).c_str()) << int(model) << int(CpuKernels::Fused);
        QTest::addRow("cnn, LibTorch operators") << int(ModelKind::Cnn) << int(CpuKernels::Aten);
    }
    void checkpointingKeepsTheGradients() {
        QFETCH(int, model);
        QFETCH(int, kernels);
        auto c = short_run(ModelKind(model), 24, 3, 1);
        if (c.dataset == DatasetKind::FashionMnist && !have_fashion_mnist()) QSKIP("dataset-fashion-mnist is not installed");
        c.dropout = 0.1;
        c.cpu_kernels = CpuKernels(kernels);
        auto window_gradients = [&](bool checkpointing) {
            auto config = c;
            config.gradient_checkpointing = checkpointing;
            Sink sink;
            RunControl control;
            RunContext ctx(config, sink, control);
            ctx.model().train();
            for (std::int64_t i = 0; i < config.accumulation_steps; ++i) {
                const auto outputs = ctx.model()(ctx.train_loader().batch(i));
                (outputs.loss / double(config.accumulation_steps)).backward();
            }
            std::vector<torch::Tensor> grads;
            for (const auto& p : ctx.model().parameters()) grads.push_back(p.grad().clone());
            return grads;
        };
        const auto plain = window_gradients(false);
        const auto checkpointed = window_gradients(true);
        QCOMPARE(checkpointed.size(), plain.size());
        double worst = 0, largest = 0;
        for (std::size_t i = 0; i < plain.size(); ++i) {
            QVERIFY(plain[i].defined() && checkpointed[i].defined());
            worst = std::max(worst, (plain[i] - checkpointed[i]).abs().max().item<double>());
            largest = std::max(largest, plain[i].abs().max().item<double>());
        }
        QVERIFY2(worst <= 1e-6, qPrintable(QString::number(worst)));
        QVERIFY(largest > 1e-3); // not trivially zero
    }

    // Checkpointing with accumulation under a memory budget: the CNN at 64 × 4
    // needs less with it, and completes under a budget below what the run without
    // it reached (the runs are deterministic: that one would not fit), with the
    // same losses.
    void checkpointingFitsUnderABudget() {
        if (!have_fashion_mnist()) QSKIP("dataset-fashion-mnist is not installed");
        auto c = short_run(ModelKind::Cnn, 64, 4, 2);
        const auto plain = run(c);
        c.gradient_checkpointing = true;
        const auto checkpointed = run(c);
        const auto p = plain.summary.peak_memory_bytes, q = checkpointed.summary.peak_memory_bytes;
        QVERIFY2(q < p, qPrintable(QStringLiteral("%1 vs %2").arg(q).arg(p)));
        c.memory_budget = std::to_string((p + q) / 2);
        const auto fits = run(c);
        QVERIFY2(fits.summary.status == RunStatus::Completed, fits.summary.message.c_str());
        const auto same = testing::compare_losses(fits.steps, plain.steps);
        QVERIFY2(same.within(1e-6), same.what().c_str());
    }

    // An evaluation shares the training's budget: with checkpointing the CNN
    // evaluates in the training's chunks, so a budget just above the checkpointed
    // training's own peak (measured by a run without evaluation) holds the
    // evaluations too — at full batch the first convolution's output alone is
    // 24.5 MiB at 256 images, more than that peak — and they agree with those of
    // a run without checkpointing (the same weights: its losses are the same).
    void evaluationStaysUnderTheCheckpointedPeak() {
        if (!have_fashion_mnist()) QSKIP("dataset-fashion-mnist is not installed");
        auto c = short_run(ModelKind::Cnn, 256, 1, 2);
        c.gradient_checkpointing = true;
        const auto training = run(c);
        QVERIFY2(training.summary.status == RunStatus::Completed, training.summary.message.c_str());
        const auto peak = training.summary.peak_memory_bytes;
        QVERIFY2(peak < (std::int64_t{24} << 20), qPrintable(QString::number(peak)));
        c.eval_strategy = Strategy::Steps;
        c.eval_steps = 1;
        c.memory_budget = std::to_string(peak + peak / 20);
        const auto evaluated = run(c);
        QVERIFY2(evaluated.summary.status == RunStatus::Completed, evaluated.summary.message.c_str());
        QCOMPARE(int(evaluated.evals.size()), 2);
        QVERIFY(evaluated.summary.peak_memory_bytes <= peak + peak / 20);
        c.gradient_checkpointing = false;
        c.memory_budget = "0";
        const auto plain = run(c);
        QVERIFY2(plain.summary.status == RunStatus::Completed, plain.summary.message.c_str());
        QCOMPARE(int(plain.evals.size()), 2);
        for (std::size_t i = 0; i < plain.evals.size(); ++i) {
            QVERIFY2(std::abs(plain.evals[i].eval_loss - evaluated.evals[i].eval_loss) <= 1e-5,
                     qPrintable(QStringLiteral("%1 vs %2").arg(plain.evals[i].eval_loss).arg(evaluated.evals[i].eval_loss)));
            QCOMPARE(plain.evals[i].eval_accuracy, evaluated.evals[i].eval_accuracy);
        }
    }

    // Acceptance 4: the estimate for the CNN at 256 × 1 (one probe at 16 and 32
    // samples, no training) predicts the peak of a real run within 15 %.
    void estimatePredictsTheCnnPeak() {
        if (!have_fashion_mnist()) QSKIP("dataset-fashion-mnist is not installed");
        const auto c = short_run(ModelKind::Cnn, 256, 1, 2);
        const auto e = estimate_run_memory(c);
        QVERIFY2(e.ok, e.error.c_str());
        const auto r = run(c);
        QVERIFY2(r.summary.status == RunStatus::Completed, r.summary.message.c_str());
        const double off = std::abs(e.predicted_peak_bytes - double(r.summary.peak_memory_bytes)) /
                           double(r.summary.peak_memory_bytes);
        qInfo("estimate %.0f B, measured %lld B (%.1f %% off, %.2f s)", e.predicted_peak_bytes,
              (long long)r.summary.peak_memory_bytes, 100 * off, e.seconds);
        QVERIFY2(off <= 0.15, qPrintable(QString::number(off)));
        // The static part per dtype, from the shapes: parameters = gradients, SGD momentum 1 ×.
        QCOMPARE(int(e.by_dtype.size()), 1);
        QCOMPARE(QString::fromStdString(e.by_dtype[0].dtype), QStringLiteral("Float"));
        QCOMPARE(e.parameters_bytes, parameter_bytes(c));
        QCOMPARE(e.gradients_bytes, e.parameters_bytes);
        QCOMPARE(e.optimizer_state_bytes, e.parameters_bytes);
        QCOMPARE(int(e.probes.size()), 2);
        QVERIFY(e.describe().find("predicted peak") != std::string::npos);
        // AdamW keeps two copies; K does not change the prediction.
        auto adamw = c;
        adamw.optimizer = OptimizerKind::AdamW;
        adamw.accumulation_steps = 8;
        const auto a = estimate_run_memory(adamw);
        QVERIFY2(a.ok, a.error.c_str());
        QCOMPARE(a.optimizer_state_bytes, 2 * a.parameters_bytes);
        QVERIFY(std::abs(a.activation_bytes - e.activation_bytes) <= 0.02 * e.activation_bytes);
    }

    // Bad input: the estimate says what is wrong and never throws; a cancelled
    // one stops at once.
    void estimateErrors() {
        RunConfig c = short_run(ModelKind::Mlp, 0, 1, 1);
        auto e = estimate_run_memory(c);
        QVERIFY(!e.ok);
        QVERIFY2(e.error.find("--batch-size") != std::string::npos, e.error.c_str());
        QCOMPARE(e.exit_code, 2);
        c.batch_size = 8;
        c.dataset = DatasetKind::Csv;
        c.data_path = "/nonexistent/file.csv";
        e = estimate_run_memory(c);
        QVERIFY(!e.ok);
        QCOMPARE(e.exit_code, 4);
        c.dataset = DatasetKind::SyntheticPairs;
        e = estimate_run_memory(c, [] { return true; });
        QVERIFY(e.cancelled && !e.ok);
    }

    // Acceptance (the planner): both levers are weighed — each has a candidate with
    // its own fit, checkpointing's fit needs fewer bytes per sample — and the pick
    // is the verified candidate with the most samples/s, which the message gives as
    // the reason; it runs under the budget.
    void plannerWeighsBothLevers() {
        if (!have_fashion_mnist()) QSKIP("dataset-fashion-mnist is not installed");
        auto c = short_run(ModelKind::Cnn, 256, 1, 2);
        const std::int64_t budget = 24 * 1024 * 1024;
        const auto plan = plan_memory(c, 256, budget);
        QVERIFY2(plan.feasible && plan.verified, plan.message.c_str());
        QCOMPARE(int(plan.candidates.size()), 2);
        const auto& plain = plan.candidates[0];
        const auto& checkpointed = plan.candidates[1];
        QVERIFY(!plain.gradient_checkpointing && checkpointed.gradient_checkpointing);
        QVERIFY2(checkpointed.bytes_per_sample < plain.bytes_per_sample,
                 qPrintable(QStringLiteral("%1 vs %2").arg(checkpointed.bytes_per_sample).arg(plain.bytes_per_sample)));
        QVERIFY(checkpointed.batch_size >= plain.batch_size);
        const PlanCandidate* fastest = nullptr;
        for (const auto& k : plan.candidates)
            if (k.verified && (!fastest || k.samples_per_second > fastest->samples_per_second)) fastest = &k;
        QVERIFY(fastest);
        QCOMPARE(plan.gradient_checkpointing, fastest->gradient_checkpointing);
        QCOMPARE(plan.batch_size, fastest->batch_size);
        QCOMPARE(plan.batch_size * plan.accumulation_steps, std::int64_t(256));
        QCOMPARE(plan.why.code, std::string(message_code::plan_faster)); // both verified: the faster, and by how much
        QCOMPARE(plan.why.args.at("checkpointing").empty(), !plan.gradient_checkpointing);
        QVERIFY2(plan.message.find(english_text(plan.why)) != std::string::npos, plan.message.c_str());
        qInfo("%s", plan.message.c_str());
        c.batch_size = plan.batch_size;
        c.accumulation_steps = plan.accumulation_steps;
        c.gradient_checkpointing = plan.gradient_checkpointing;
        c.memory_budget = std::to_string(budget);
        const auto r = run(c);
        QVERIFY2(r.summary.status == RunStatus::Completed, r.summary.message.c_str());
    }

    // One run per process, enforced by the engine: while a run trains (on another
    // thread, in another Session), a second run — plain, through the planning
    // layer, or as a rank — is refused with the code run_in_progress while the
    // first still trains (it has not ended: the refusal did not wait for it),
    // trains nothing and leaves the first alone; when the first has ended the
    // slot is free again.
    void secondConcurrentRunIsRefused() {
        auto slow = short_run(ModelKind::Mlp, 8, 1, 0);
        slow.epochs = 1000; // far longer than the test: it ends when stopped below
        slow.micro_step_delay_s = 0.02;
        struct FirstRecord : Capture {
            std::atomic<bool> training{false};
            std::atomic<bool> ended{false};
            void on_step(const StepRecord& r) override {
                Capture::on_step(r);
                training = true;
            }
            void on_summary(const SummaryRecord& r) override {
                Capture::on_summary(r);
                ended = true;
            }
        } first;
        std::stop_source stop_first;
        Session first_session;
        SummaryRecord first_summary;
        std::thread first_thread([&] { first_summary = first_session.run(slow, first, stop_first.get_token()); });
        struct JoinAtExit { // a failed check below must not leave the thread joinable
            std::thread& t;
            std::stop_source& stop;
            ~JoinAtExit() {
                stop.request_stop();
                if (t.joinable()) t.join();
            }
        } join_at_exit{first_thread, stop_first};
        QVERIFY2(testing::wait_until([&] { return first.training.load(); }, std::chrono::seconds(60)),
                 "the first run never made a step");

        const auto quick = short_run(ModelKind::Mlp, 8, 1, 2);
        auto refused = [&](const char* how, const SummaryRecord& s, const Capture& c) {
            QVERIFY2(s.detail.code == message_code::run_in_progress, (std::string(how) + ": " + s.message).c_str());
            QCOMPARE(s.status, RunStatus::Error);
            QCOMPARE(s.exit_code, exit_code::failure);
            QVERIFY2(s.message.find("a training run") != std::string::npos, s.message.c_str()); // what holds it
            QCOMPARE(s.optimizer_steps, std::int64_t(0));
            QVERIFY(c.steps.empty());
            QCOMPARE(c.summary.detail.code, std::string(message_code::run_in_progress)); // sent to the sink too
            QVERIFY2(!first.ended, how); // refused while the first trains, not after it
        };
        {
            Capture c;
            Session second;
            const auto s = second.run(quick, c);
            refused("Session::run", s, c);
            if (QTest::currentTestFailed()) return;
        }
        {
            Capture c;
            Session second;
            const auto s = run_planned(second, quick, c);
            refused("run_planned", s, c);
            if (QTest::currentTestFailed()) return;
        }
        {
            Capture c;
            Session second;
            dist::WorldInfo world;
            world.world_size = 2;
            world.rank = 1;
            const auto s = second.run(quick, c, {}, world);
            QVERIFY2(s.detail.code == message_code::run_in_progress, s.message.c_str());
            QVERIFY2(!first.ended, "as a rank"); // refused while the first trains
        }
        QVERIFY2(!first_session.is_paused() && first_thread.joinable(), "the first run was disturbed");
        stop_first.request_stop();
        first_thread.join();
        QVERIFY2(first_summary.status == RunStatus::Stopped, first_summary.message.c_str());
        QVERIFY(!first.steps.empty());
        // The slot is free again.
        const auto after = run(quick);
        QVERIFY2(after.summary.status == RunStatus::Completed, after.summary.message.c_str());
        QCOMPARE(after.summary.optimizer_steps, std::int64_t(2));
    }
};

QTEST_GUILESS_MAIN(TestMemoryRuns)
#include "test_memory_runs.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
