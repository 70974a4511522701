// The three styles through the public Session API (no torch here): step
// counts, equivalences, token normalisation, memory, resume, Trainer logs.
#include <QtTest/QtTest>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "accum/memory_planner.h"
#include "accum/metrics_io.h"
#include "accum/run_directory.h"
#include "accum/planned_run.h"
#include "accum/session.h"

#include "capture.h"
#include "wait_until.h"

using namespace accum;

namespace {

using testing::Capture;
using testing::run;

RunConfig tiny(Mode mode = Mode::Pytorch) {
    RunConfig c;
    c.mode = mode;
    c.dataset = DatasetKind::SyntheticPairs;
    c.model = ModelKind::Mlp;
    c.batch_size = 16;
    c.accumulation_steps = 4;
    c.epochs = 0;
    c.max_steps = 12;
    c.learning_rate = 0.05;
    c.eval_strategy = Strategy::No;
    return c;
}

// The CNN on Fashion-MNIST for two optimizer steps on one thread, at micro-batch
// `batch` × 1 under a tensor-memory budget: the out-of-memory cases.
RunConfig cnn_under_budget(std::int64_t batch, const std::string& budget, Mode mode = Mode::Pytorch) {
    RunConfig c = tiny(mode);
    c.dataset = DatasetKind::FashionMnist;
    c.model = ModelKind::Cnn;
    c.max_steps = 2;
    c.threads = 1;
    c.batch_size = batch;
    c.accumulation_steps = 1;
    c.memory_budget = budget;
    return c;
}

std::string write_csv(const QTemporaryDir& dir, int rows) {
    const std::string path = dir.filePath("toy.csv").toStdString();
    std::ofstream f(path);
    f << "a,b,c,label\n";
    for (int i = 0; i < rows; ++i) f << (i % 7) * 0.5 << "," << (i % 3) << "," << (i * 37 % 11) << "," << (i % 2) << "\n";
    return path;
}

// Two runs' losses step by step, relative to the second (the large batch):
// a problem, never a pass, when a loss is not finite or the steps differ.
testing::LossComparison relative_losses(const std::vector<StepRecord>& a, const std::vector<StepRecord>& b) {
    return testing::compare_losses(a, b, testing::LossMeasure::RelativeToSecond);
}

// The text of an exception that escaped a thread's body, which the test
// thread checks after join() (a Qt Test macro belongs to the test thread).
template <typename Body>
std::string run_catching(Body&& body) {
    try {
        body();
    } catch (const std::exception& e) {
        return e.what();
    } catch (...) {
        return "an exception that is not a std::exception";
    }
    return {};
}

} // namespace

class TestStyles : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // ARCHITECTURE.md I4: E epochs of L micro-batches give E·ceil(L/K) optimizer steps in
    // every style, also when L % K != 0 (the last partial window is flushed).
    void stepCounts_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<int>("k");
        for (const char* m : {"pytorch", "accelerator", "trainer"})
            for (int k : {1, 3, 4, 13, 20}) QTest::newRow((std::string(m) + " K" + std::to_string(k)).c_str()) << m << k;
    }
    void stepCounts() {
        QFETCH(QString, mode);
        QFETCH(int, k);
        QTemporaryDir dir;
        RunConfig c = tiny(*parse_choice<Mode>(mode.toStdString()));
        c.dataset = DatasetKind::Csv;
        c.data_path = write_csv(dir, 125); // 100 train rows → L = 13 micro-batches of 8 (last has 4)
        c.batch_size = 8;
        c.accumulation_steps = k;
        c.max_steps = 0;
        c.epochs = 2;
        const auto r = run(c);
        QCOMPARE(r.summary.status, RunStatus::Completed);
        const std::int64_t L = 13;
        QCOMPARE(r.summary.optimizer_steps, 2 * ((L + k - 1) / k));
        QCOMPARE(r.summary.micro_steps, 2 * L);
        QCOMPARE(r.summary.samples_seen, std::int64_t(200));
    }

    // ARCHITECTURE.md I1: micro-batch B × K equals batch B·K (same data order) for SGD,
    // SGD with momentum and AdamW, within 1e-5 relative, at every step.
    void accumulationEqualsLargeBatch_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<double>("momentum");
        for (const char* mode : {"pytorch", "accelerator", "trainer"}) {
            QTest::addRow("%s sgd", mode) << mode << "sgd" << 0.0;
            QTest::addRow("%s momentum", mode) << mode << "sgd" << 0.9;
            QTest::addRow("%s adamw", mode) << mode << "adamw" << 0.0;
        }
    }
    void accumulationEqualsLargeBatch() {
        QFETCH(QString, mode);
        QFETCH(QString, optimizer);
        QFETCH(double, momentum);
        RunConfig small = tiny(*parse_choice<Mode>(mode.toStdString()));
        small.optimizer = *parse_choice<OptimizerKind>(optimizer.toStdString());
        small.momentum = momentum;
        small.learning_rate = optimizer == "adamw" ? 1e-3 : 0.05;
        small.weight_decay = optimizer == "adamw" ? 0.01 : 0.0;
        RunConfig big = small;
        big.batch_size = 64;
        big.accumulation_steps = 1;
        const auto a = run(small), b = run(big);
        QCOMPARE(a.steps.size(), std::size_t(12));
        QCOMPARE(b.steps.size(), std::size_t(12));
        const auto diff = relative_losses(a.steps, b.steps);
        QVERIFY2(diff.compared() && diff.largest < 1e-5, diff.what().c_str());
        QVERIFY(a.steps.back().loss < a.steps.front().loss); // it learns
    }

    // Clipping once per window equals clipping the large batch.
    void clippingOncePerWindow() {
        RunConfig small = tiny();
        small.max_grad_norm = 0.05;
        RunConfig big = small;
        big.batch_size = 64;
        big.accumulation_steps = 1;
        const auto a = run(small), b = run(big);
        QVERIFY2(a.summary.status == RunStatus::Completed, a.summary.message.c_str());
        QVERIFY2(b.summary.status == RunStatus::Completed, b.summary.message.c_str());
        QCOMPARE(a.steps.size(), std::size_t(12));
        QCOMPARE(b.steps.size(), std::size_t(12));
        QVERIFY(a.steps.front().grad_norm > 0.05); // clipping is active
        const auto diff = relative_losses(a.steps, b.steps);
        QVERIFY2(diff.compared() && diff.largest < 1e-5, ("clipped trajectories differ: " + diff.what()).c_str());
    }

    // The counter-example: BatchNorm normalises over the micro-batch, so B × K is
    // not B·K.
    void batchNormBreaksEquivalence() {
        RunConfig small = tiny();
        small.batch_norm = true;
        RunConfig big = small;
        big.batch_size = 64;
        big.accumulation_steps = 1;
        const auto a = run(small), b = run(big);
        QVERIFY2(a.summary.status == RunStatus::Completed, a.summary.message.c_str());
        QVERIFY2(b.summary.status == RunStatus::Completed, b.summary.message.c_str());
        QCOMPARE(a.steps.size(), std::size_t(12));
        QCOMPARE(b.steps.size(), std::size_t(12));
        const auto diff = relative_losses(a.steps, b.steps);
        QVERIFY2(diff.apart_by_more_than(1e-3), ("BatchNorm runs should differ: " + diff.what()).c_str());
    }

    // ARCHITECTURE.md I7: the three styles give the same trajectory when L % K == 0.
    void threeStylesAgree() {
        const auto p = run(tiny(Mode::Pytorch)), a = run(tiny(Mode::Accelerator)), t = run(tiny(Mode::Trainer));
        QCOMPARE(p.steps.size(), std::size_t(12));
        QCOMPARE(a.steps.size(), std::size_t(12));
        QCOMPARE(t.steps.size(), std::size_t(12));
        const auto accelerator = testing::compare_losses(p.steps, a.steps), trainer = testing::compare_losses(p.steps, t.steps);
        QVERIFY2(accelerator.within(1e-5), ("accelerator: " + accelerator.what()).c_str());
        QVERIFY2(trainer.within(1e-5), ("trainer: " + trainer.what()).c_str());
        for (std::size_t i = 0; i < p.steps.size(); ++i) QCOMPARE(p.steps[i].learning_rate, t.steps[i].learning_rate);
    }

    // ARCHITECTURE.md I6: with variable-length sequences, token normalisation makes
    // micro-batch 4 × K 4 match 16 × 1; the per-micro-batch mean does not.
    void tokenNormalisation_data() {
        QTest::addColumn<QString>("mode");
        QTest::newRow("pytorch") << "pytorch";
        QTest::newRow("accelerator") << "accelerator";
        QTest::newRow("trainer") << "trainer";
    }
    void tokenNormalisation() {
        QFETCH(QString, mode);
        RunConfig small = tiny(*parse_choice<Mode>(mode.toStdString()));
        small.dataset = DatasetKind::SyntheticLm;
        small.model = ModelKind::Transformer;
        small.batch_size = 4;
        small.accumulation_steps = 4;
        small.max_steps = 6;
        small.optimizer = OptimizerKind::AdamW;
        small.learning_rate = 1e-3;
        small.loss_normalization = LossNormalization::Tokens;
        RunConfig big = small;
        big.batch_size = 16;
        big.accumulation_steps = 1;
        const auto a = run(small), b = run(big);
        QVERIFY2(a.summary.status == RunStatus::Completed, a.summary.message.c_str());
        QVERIFY2(b.summary.status == RunStatus::Completed, b.summary.message.c_str());
        QCOMPARE(a.steps.size(), std::size_t(6));
        QCOMPARE(b.steps.size(), std::size_t(6));
        const auto tokens = testing::compare_losses(a.steps, b.steps);
        QVERIFY2(tokens.compared() && tokens.largest < 1e-4, tokens.what().c_str());
        small.loss_normalization = big.loss_normalization = LossNormalization::Mean;
        const auto c = run(small), d = run(big);
        QCOMPARE(c.steps.size(), std::size_t(6));
        QCOMPARE(d.steps.size(), std::size_t(6));
        const auto mean = testing::compare_losses(c.steps, d.steps);
        QVERIFY2(mean.apart_by_more_than(1e-3), mean.what().c_str());
    }

    // ARCHITECTURE.md I9: peak memory is set by the micro-batch, not by K.
    void peakMemoryFollowsMicroBatch() {
        RunConfig c = tiny();
        c.dataset = DatasetKind::FashionMnist;
        c.model = ModelKind::Cnn;
        c.batch_size = 32;
        c.accumulation_steps = 1;
        c.max_steps = 3;
        c.threads = 1;
        const auto p1 = run(c).summary.peak_memory_bytes;
        c.accumulation_steps = 8;
        const auto p8 = run(c).summary.peak_memory_bytes;
        c.batch_size = 256;
        c.accumulation_steps = 1;
        const auto big = run(c).summary.peak_memory_bytes;
        QVERIFY(p1 > 0);
        QVERIFY2(std::abs(double(p8) - double(p1)) <= 0.05 * double(p1),
                 (std::to_string(p1) + " vs " + std::to_string(p8)).c_str());
        QVERIFY2(double(p8) < 0.5 * double(big), (std::to_string(p8) + " vs " + std::to_string(big)).c_str());
    }

    // A budget between the two peaks: the large batch runs out of memory, the
    // suggestion in its summary is measured (halving would give 128 × 2, which needs
    // about 45 MiB and runs out again; with gradient checkpointing when that measured
    // faster), and the suggestion completes under the same budget.
    void budgetOutOfMemoryAndRecovery() {
        RunConfig c = cnn_under_budget(256, "40MiB");
        const auto oom = run(c);
        QCOMPARE(oom.summary.status, RunStatus::OutOfMemory);
        QCOMPARE(oom.summary.exit_code, 3);
        QVERIFY(oom.summary.message.find("micro-batch 256") != std::string::npos);
        QVERIFY(oom.summary.message.find("40.0 MiB") != std::string::npos);
        QCOMPARE(oom.summary.suggested_batch_size * oom.summary.suggested_accumulation_steps, std::int64_t(256));
        QVERIFY2(oom.summary.message.find("measured to fit") != std::string::npos, oom.summary.message.c_str());
        QVERIFY(std::any_of(oom.logs.begin(), oom.logs.end(), [](const std::string& l) {
            return l.rfind("out of memory: measuring which micro-batch", 0) == 0;
        }));
        c.batch_size = oom.summary.suggested_batch_size;
        c.accumulation_steps = oom.summary.suggested_accumulation_steps;
        c.gradient_checkpointing = oom.summary.suggested_gradient_checkpointing; // when it measured faster
        const auto ok = run(c);
        QVERIFY2(ok.summary.status == RunStatus::Completed, ok.summary.message.c_str());
        QVERIFY(ok.summary.peak_memory_bytes <= 40 * 1024 * 1024);
    }

    // A stop while the suggestion is being measured ends the measuring at once
    // and leaves the halving guess in the summary.
    void stopWhileMeasuringTheSuggestion() {
        RunConfig c = cnn_under_budget(256, "40MiB");
        struct StopOnMeasuring : Capture {
            std::stop_source stop;
            void on_log(const std::string& l) override {
                Capture::on_log(l);
                if (l.rfind("out of memory: measuring", 0) == 0) stop.request_stop();
            }
        } sink;
        Session session;
        const auto s = run_planned(session, c, sink, sink.stop.get_token());
        QCOMPARE(s.status, RunStatus::OutOfMemory);
        QVERIFY2(s.message.find("Try micro-batch 128 × 2") != std::string::npos, s.message.c_str());
        QCOMPARE(sink.logs.back().rfind("out of memory: measuring", 0), std::size_t(0)); // no probe ran
    }

    // When not even micro-batch 1 fits, the summary says so and suggests nothing.
    void budgetNothingFits() {
        RunConfig c = cnn_under_budget(64, "5MiB"); // parameters, gradients and momentum alone take about 5 MiB
        const auto r = run(c);
        QCOMPARE(r.summary.status, RunStatus::OutOfMemory);
        QCOMPARE(r.summary.suggested_batch_size, std::int64_t(0));
        QVERIFY2(r.summary.message.find("Measured: even micro-batch 1") != std::string::npos, r.summary.message.c_str());
    }

    // The planner: peak grows with the micro-batch close to linearly, and its pick
    // (micro-batch × K = target, with gradient checkpointing if that measured
    // faster) runs under the budget without running out of memory.
    void plannerPickRuns() {
        RunConfig c = tiny();
        c.dataset = DatasetKind::FashionMnist;
        c.model = ModelKind::Cnn;
        c.threads = 1;
        const std::int64_t budget = 40 * 1024 * 1024;
        const auto plan = plan_memory(c, 256, budget);
        QVERIFY2(plan.feasible && plan.verified, plan.message.c_str());
        QCOMPARE(plan.batch_size * plan.accumulation_steps, std::int64_t(256));
        QVERIFY(plan.batch_size < 256 || plan.gradient_checkpointing); // 256 × 1 does not fit without it
        for (std::size_t i = 1; i < plan.measurements.size(); ++i)
            QVERIFY(plan.measurements[i].peak_bytes > plan.measurements[i - 1].peak_bytes);
        for (const auto& m : plan.measurements) { // the straight line explains each measurement within 10%
            const double predicted = plan.fixed_bytes + plan.bytes_per_sample * double(m.batch_size);
            QVERIFY2(std::abs(predicted - double(m.peak_bytes)) < 0.10 * double(m.peak_bytes), std::to_string(m.batch_size).c_str());
        }
        c.batch_size = plan.batch_size;
        c.accumulation_steps = plan.accumulation_steps;
        c.gradient_checkpointing = plan.gradient_checkpointing;
        c.memory_budget = "40MiB";
        c.max_steps = 3;
        const auto r = run(c);
        QVERIFY2(r.summary.status == RunStatus::Completed, r.summary.message.c_str());
    }

    // auto_find_batch_size retries with int(B × 0.9) and raises K to keep the
    // effective batch (at least) the same.
    void autoFindBatchSize() {
        RunConfig c = cnn_under_budget(256, "40MiB", Mode::Trainer);
        c.auto_find_batch_size = true;
        const auto r = run(c);
        QVERIFY2(r.summary.status == RunStatus::Completed, r.summary.message.c_str());
        int retries = 0;
        for (const auto& l : r.logs) retries += l.rfind("auto_find_batch_size: out of memory; retrying with micro-batch ", 0) == 0;
        QVERIFY(retries >= 1);
        QVERIFY(r.summary.message.find("auto_find_batch_size chose micro-batch ") != std::string::npos);
        std::smatch m;
        QVERIFY(std::regex_search(r.summary.message, m, std::regex(R"(chose micro-batch (\d+) × (\d+))")));
        const auto b = std::stoll(m[1]), k = std::stoll(m[2]);
        QVERIFY(b < 256 && b * k >= 256 && b * (k - 1) < 256); // the effective batch kept, or the nearest above
        QCOMPARE(r.summary.samples_seen, 2 * b * k);
    }

    // The scheduler pitfall: stepped per micro-batch, a linear schedule ends K times too early.
    void schedulerPerMicroBatchPitfall() {
        RunConfig c = tiny();
        c.scheduler = SchedulerKind::Linear;
        c.scheduler_per_micro_batch = true;
        const auto wrong = run(c);
        c.scheduler_per_micro_batch = false;
        const auto right = run(c);
        QCOMPARE(wrong.steps.size(), std::size_t(12));
        QCOMPARE(right.steps.size(), std::size_t(12));
        // right: step s uses lr·(1 − (s−1)/12); wrong: the schedule has moved 4 micro-steps per update.
        QVERIFY(std::abs(right.steps[3].learning_rate - 0.05 * (1 - 3.0 / 12)) < 1e-9);
        QCOMPARE(wrong.steps[3].learning_rate, 0.0); // after 3 updates = 12 micro-steps, the schedule is done
        QVERIFY(wrong.steps.back().learning_rate == 0.0 && right.steps.back().learning_rate > 0.0);
    }

    // Trainer log lines read like the Transformers Trainer's and carry its keys:
    // {'loss': …} exactly at multiples of --logging-steps (as _maybe_log_save_evaluate's
    // should_log), numbers as Python prints floats (repr: 0.05, not 0.050000).
    void trainerLogLines_data() {
        QTest::addColumn<int>("epochs");
        QTest::addColumn<int>("max_steps");
        QTest::addColumn<QList<int>>("logged_at");
        // 4000 samples / 64 = 63 micro-batches (last partial) → ceil(63/4) = 16 steps.
        QTest::newRow("one epoch, 16 steps") << 1 << 0 << QList<int>{5, 10, 15};
        QTest::newRow("max steps 7") << 0 << 7 << QList<int>{5};
        QTest::newRow("max steps 10") << 0 << 10 << QList<int>{5, 10};
    }
    void trainerLogLines() {
        QFETCH(int, epochs);
        QFETCH(int, max_steps);
        QFETCH(QList<int>, logged_at);
        RunConfig c = tiny(Mode::Trainer);
        c.max_steps = max_steps;
        c.epochs = epochs;
        c.batch_size = 64;
        c.accumulation_steps = 4;
        c.logging_steps = 5;
        c.eval_strategy = Strategy::Epoch;
        const auto r = run(c);
        QVERIFY2(r.summary.status == RunStatus::Completed, r.summary.message.c_str());
        QCOMPARE(r.summary.optimizer_steps, std::int64_t(epochs ? 16 : max_steps));
        QCOMPARE(r.steps.size(), std::size_t(epochs ? 16 : max_steps)); // the losses below read steps 1 … 15
        const std::string number = R"((-?[0-9]+\.[0-9]+(e-[0-9]+)?|-?[0-9]e-[0-9]+))";
        const std::regex step_line("^\\{'loss': " + number + ", 'grad_norm': " + number + ", 'learning_rate': 0\\.05, 'epoch': " +
                                   number + "\\}$");
        const std::regex eval_line("^\\{'eval_loss': " + number + ", 'eval_accuracy': " + number + ", 'eval_f1': " + number +
                                   ", 'eval_runtime': " + number + ", 'eval_samples_per_second': " + number +
                                   ", 'eval_steps_per_second': " + number + ", 'epoch': " + number + "\\}$");
        const std::regex final_line("^\\{'train_runtime': " + number + ", 'train_samples_per_second': " + number +
                                    ", 'train_steps_per_second': " + number + ", 'train_loss': " + number +
                                    ", 'epoch': " + number + "\\}$");
        std::vector<std::string> step_lines;
        int evals = 0, finals = 0;
        for (const auto& l : r.logs) {
            if (l.rfind("{'loss'", 0) == 0) {
                QVERIFY2(std::regex_match(l, step_line), l.c_str());
                step_lines.push_back(l);
            }
            evals += std::regex_match(l, eval_line);
            finals += std::regex_match(l, final_line);
        }
        QCOMPARE(int(step_lines.size()), int(logged_at.size()));
        QCOMPARE(evals, 1);
        QCOMPARE(finals, 1);
        QVERIFY2(r.logs.back().rfind("{'train_runtime'", 0) == 0, r.logs.back().c_str()); // the last line
        // Each logged loss is the mean of the window losses since the last log,
        // unrounded, as Transformers 5 logs it.
        int previous = 0;
        for (qsizetype n = 0; n < logged_at.size(); ++n) {
            double mean = 0;
            for (int i = previous; i < logged_at[n]; ++i) mean += r.steps[std::size_t(i)].loss / (logged_at[n] - previous);
            previous = logged_at[n];
            QVERIFY(std::abs(std::stod(step_lines[std::size_t(n)].substr(9)) - mean) <= 1e-9);
        }
        // epoch is fractional while training.
        QVERIFY(r.steps[4].epoch > 0.3 && r.steps[4].epoch < 0.33);
    }

    // The trained model is saved at the end whatever the save interval (as
    // Transformers' DefaultFlowCallback saves at max_steps): after --max-steps 9
    // --save-steps 5 the newest checkpoint is checkpoint-9, resuming from it gives
    // the losses of an uninterrupted 12-step run (a resume inside an epoch: it has
    // 63 updates), and --save-total-limit 1 keeps only the final one.
    void finalCheckpointAtTheLastStep_data() {
        QTest::addColumn<QString>("mode");
        QTest::newRow("pytorch") << "pytorch";
        QTest::newRow("accelerator") << "accelerator";
        QTest::newRow("trainer") << "trainer";
    }
    void finalCheckpointAtTheLastStep() {
        QFETCH(QString, mode);
        QTemporaryDir dir, limited, full_dir;
        RunConfig c = tiny(*parse_choice<Mode>(mode.toStdString()));
        c.max_steps = 9;
        c.momentum = 0.9;
        c.dropout = 0.1; // the random state must come back too
        c.save_strategy = Strategy::Steps;
        c.save_steps = 5;
        c.output_dir = dir.path().toStdString();
        const auto nine = run(c);
        QVERIFY2(nine.summary.status == RunStatus::Completed, nine.summary.message.c_str());
        QCOMPARE(QDir(dir.path()).entryList({"checkpoint-*"}, QDir::Dirs, QDir::Name),
                 (QStringList{"checkpoint-5", "checkpoint-9"}));
        QCOMPARE(latest_checkpoint(c.output_dir), dir.filePath("checkpoint-9").toStdString());

        RunConfig uninterrupted = c;
        uninterrupted.max_steps = 12;
        uninterrupted.output_dir = full_dir.path().toStdString();
        const auto full = run(uninterrupted);
        RunConfig resumed = uninterrupted;
        resumed.output_dir = c.output_dir;
        resumed.resume_from = c.output_dir;
        const auto rest = run(resumed);
        QVERIFY2(rest.summary.status == RunStatus::Completed, rest.summary.message.c_str());
        QCOMPARE(full.steps.size(), std::size_t(12));
        QCOMPARE(rest.steps.size(), std::size_t(3));
        for (std::size_t i = 0; i < 3; ++i) QCOMPARE(rest.steps[i].step, std::int64_t(10 + i));
        const auto against_whole = testing::compare_shared_steps(full.steps, rest.steps);
        QVERIFY2(against_whole.within(1e-5), against_whole.what().c_str());

        c.save_total_limit = 1;
        c.output_dir = limited.path().toStdString();
        QCOMPARE(run(c).summary.status, RunStatus::Completed);
        QCOMPARE(QDir(limited.path()).entryList({"checkpoint-*"}, QDir::Dirs), QStringList{"checkpoint-9"});
    }

    // With --save-strategy epoch, the end of the last epoch is saved, and so is a
    // --max-steps end inside an epoch.
    void finalCheckpointWithEpochStrategy() {
        QTemporaryDir dir, mid;
        RunConfig c = tiny(Mode::Trainer);
        c.batch_size = 64;   // 63 micro-batches, 16 updates per epoch
        c.max_steps = 0;
        c.epochs = 2;
        c.save_strategy = Strategy::Epoch;
        c.output_dir = dir.path().toStdString();
        QCOMPARE(run(c).summary.status, RunStatus::Completed);
        QCOMPARE(QDir(dir.path()).entryList({"checkpoint-*"}, QDir::Dirs, QDir::Name),
                 (QStringList{"checkpoint-16", "checkpoint-32"}));
        c.epochs = 0;
        c.max_steps = 20; // ends inside the second epoch
        c.output_dir = mid.path().toStdString();
        QCOMPARE(run(c).summary.status, RunStatus::Completed);
        QCOMPARE(QDir(mid.path()).entryList({"checkpoint-*"}, QDir::Dirs, QDir::Name),
                 (QStringList{"checkpoint-16", "checkpoint-20"}));
    }

    // Checkpoint → resume continues exactly like an uninterrupted run.
    void resumeMatchesUninterrupted_data() {
        QTest::addColumn<QString>("mode");
        QTest::newRow("pytorch") << "pytorch";
        QTest::newRow("accelerator") << "accelerator";
        QTest::newRow("trainer") << "trainer";
    }
    void resumeMatchesUninterrupted() {
        QFETCH(QString, mode);
        QTemporaryDir full_dir, part_dir;
        RunConfig c = tiny(*parse_choice<Mode>(mode.toStdString()));
        c.max_steps = 0;
        c.epochs = 2;
        c.batch_size = 64;
        c.dropout = 0.1; // resuming must restore the random state too
        c.momentum = 0.9;
        c.save_strategy = Strategy::Epoch;
        c.output_dir = full_dir.path().toStdString();
        const auto full = run(c);
        QCOMPARE(full.summary.status, RunStatus::Completed);

        RunConfig first = c;
        first.epochs = 1;
        first.output_dir = part_dir.path().toStdString();
        const auto one = run(first);
        QVERIFY2(one.summary.status == RunStatus::Completed, one.summary.message.c_str());
        QVERIFY(QDir(part_dir.filePath("checkpoint-" + QString::number(one.summary.optimizer_steps))).exists());
        QVERIFY(QFile::exists(part_dir.filePath("checkpoint-" + QString::number(one.summary.optimizer_steps) +
                                                "/trainer_state.json")));
        RunConfig second = c;
        second.output_dir = part_dir.path().toStdString();
        second.resume_from = part_dir.path().toStdString();
        const auto rest = run(second);
        QVERIFY2(rest.summary.status == RunStatus::Completed, rest.summary.message.c_str());
        QVERIFY(!one.steps.empty() && !rest.steps.empty());
        QCOMPARE(one.steps.size() + rest.steps.size(), full.steps.size());
        for (std::size_t i = 0; i < rest.steps.size(); ++i)
            QCOMPARE(rest.steps[i].step, full.steps[one.steps.size() + i].step);
        const auto against_whole = testing::compare_shared_steps(full.steps, rest.steps);
        QVERIFY2(against_whole.within(1e-5), against_whole.what().c_str());
    }

    // Pause holds the run at a micro-batch boundary; Step one micro-batch lets
    // exactly one more through; resume runs it to its end. "Not one more" is read
    // once the run waits again (Session::times_held() grew): held, it cannot
    // move. The run's thread is a std::jthread given the run's stop token: when a
    // check fails before the join, its destructor stops the paused run and joins it.
    void pauseAndStepOneMicroBatch() {
        RunConfig c = tiny();
        c.record_micro_steps = true;
        struct Micro : Capture {
            std::atomic<int> micro{0};
            void on_micro_step(const MicroStepRecord&) override { ++micro; }
        } sink;
        Session session;
        session.pause(); // before the run starts: it waits before its first micro-batch
        std::string error;
        std::jthread runner([&](std::stop_token stop) { error = run_catching([&] { session.run(c, sink, stop); }); });
        QTRY_VERIFY_WITH_TIMEOUT(session.times_held() >= 1, 30000);
        QCOMPARE(sink.micro.load(), 0);
        QVERIFY(session.is_paused());
        for (int expected = 1; expected <= 3; ++expected) {
            const auto held = session.times_held();
            session.step_once();
            // One micro-batch, then held again at the next boundary.
            QTRY_VERIFY_WITH_TIMEOUT(session.times_held() > held, 10000);
            QCOMPARE(sink.micro.load(), expected); // and not one more
        }
        session.resume();
        runner.join();
        QVERIFY2(error.empty(), error.c_str());
        QCOMPARE(sink.summary.status, RunStatus::Completed);
        QCOMPARE(sink.micro.load(), 48); // 12 updates × K 4
    }

    // A stop through run()'s token that comes before the run has started still
    // stops it, before any data are loaded; the next run on the same Session,
    // with a token of its own, is not touched by it.
    void stopBeforeTheRunStarts() {
        RunConfig c = tiny();
        Session session;
        std::stop_source early;
        early.request_stop();
        Capture capture;
        const auto stopped = session.run(c, capture, early.get_token());
        QCOMPARE(stopped.status, RunStatus::Stopped);
        QCOMPARE(stopped.exit_code, 130);
        QCOMPARE(stopped.message, std::string("stopped before the run started"));
        QVERIFY(capture.steps.empty());
        std::stop_source next;
        QCOMPARE(session.run(c, capture, next.get_token()).status, RunStatus::Completed);
    }

    // Stop from another thread, asked once the run has made its first update,
    // ends it as "stopped" before its 50 epochs. How long the stop takes is a
    // figure of bench/latencies.py (this test prints it), not a check here.
    void stopFromAnotherThread() {
        RunConfig c = tiny();
        c.max_steps = 0;
        c.epochs = 50;
        struct Counting : Capture {
            std::atomic<int> updates{0};
            void on_step(const StepRecord& r) override {
                Capture::on_step(r);
                ++updates;
            }
        } capture;
        Session session;
        std::stop_source stop;
        std::atomic<bool> asked_in_time{false};
        std::chrono::steady_clock::time_point asked;
        std::jthread stopper([&] {
            asked_in_time = testing::wait_until([&] { return capture.updates.load() >= 1; }, std::chrono::seconds(60));
            asked = std::chrono::steady_clock::now();
            stop.request_stop();
        });
        const auto summary = session.run(c, capture, stop.get_token());
        const auto returned = std::chrono::steady_clock::now();
        stopper.join();
        QVERIFY2(asked_in_time, "the run made no update to stop after");
        QCOMPARE(summary.status, RunStatus::Stopped);
        QCOMPARE(summary.exit_code, 130);
        QVERIFY(summary.optimizer_steps >= 1);
        std::printf("BENCH styles.stop %.0f ms\n",
                    std::chrono::duration<double, std::milli>(returned - asked).count());
    }
};

QTEST_GUILESS_MAIN(TestStyles)
#include "test_styles.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
