// SPDX-License-Identifier: GPL-3.0-or-later
// Data-parallel training's numbers: accum-run --nproc-per-node 2 against one
// process, in the three styles, with the MLP, the CNN and the loss scaler.
//
// Where the numbers come from: ARCHITECTURE.md I14 (N ranks equal one process) — N ranks × B × K update
// as 1 rank × (N·B) × K, step for step — within 1e-5 (I1's tolerance;
// measured here 1e-7 … 6e-7, float rounding of a different summation order).
// The MLP and the CNN have one gradient bucket (235,146 / 421,642 floats, under
// DDP's 25 MiB): one all-reduce per update, K of them with
// --sync-each-micro-batch.
//
// Every process runs on 127.0.0.1 with a free port (--master-port 0), every
// wait is bounded, and every process a test starts is ended.
#include <QtTest/QtTest>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

#include "accum/metrics_io.h"
#include "accum/session.h"
#include "data/data_loader.h"
#include "data/dataset.h"
#include "distributed/world.h"

#include "capture.h"
#include "processes.h"
#include "wait_until.h"

using namespace accum;

using namespace accum;

namespace {

using Result = testing::CliResult;
// accum-run with `args` (and extra environment); killed when it outlives `timeout_ms`.
Result run_cli(const QStringList& args, int timeout_ms = 120000, const QStringList& env = {}) {
    return testing::run_cli(args, timeout_ms, env);
}

using testing::read_records;
using testing::records_of;

using testing::have_fashion_mnist;

// A short run of the MLP on synthetic sentence pairs: the embedding's gradient
// goes through autograd's AccumulateGrad, the fused dense stack's straight into
// .grad, so both paths are synced.
QStringList tiny(const QString& mode, const QString& optimizer, int batch, int steps = 4) {
    return {"--mode", mode, "--optimizer", optimizer, "--dataset", "synthetic-pairs", "--model", "mlp",
            "--batch-size", QString::number(batch), "--accumulation-steps", "4", "--max-steps", QString::number(steps),
            "--lr", "0.01", "--eval-strategy", "no", "--save-strategy", "no", "--threads", "1", "--quiet"};
}

} // namespace

class TestDataParallelNumbers : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Acceptance 1: 2 ranks × 32 × K 4 give the same per-step losses as
    // 1 rank × 64 × 4, in each style, for SGD with momentum and AdamW; one
    // gradient all-reduce per update, K with --sync-each-micro-batch (whose
    // losses match too); none in one process.
    void ranksMatchOneProcess_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("optimizer");
        for (const char* mode : {"pytorch", "accelerator", "trainer"})
            for (const char* opt : {"sgd", "adamw"}) QTest::addRow("%s %s", mode, opt) << mode << opt;
    }
    void ranksMatchOneProcess() {
        QFETCH(QString, mode);
        QFETCH(QString, optimizer);
        QTemporaryDir one, two, each;
        const auto a = run_cli(tiny(mode, optimizer, 64) + QStringList{"--output-dir", one.path()});
        QVERIFY2(a.exit_code == 0, qPrintable(a.err));
        const auto b = run_cli(tiny(mode, optimizer, 32) +
                               QStringList{"--nproc-per-node", "2", "--master-port", "0", "--output-dir", two.path()});
        QVERIFY2(b.exit_code == 0, qPrintable(b.err));
        const auto c = run_cli(tiny(mode, optimizer, 32) + QStringList{"--nproc-per-node", "2", "--master-port", "0",
                                                                        "--sync-each-micro-batch", "--output-dir",
                                                                        each.path()});
        QVERIFY2(c.exit_code == 0, qPrintable(c.err));
        const auto ra = read_records(one.filePath("metrics.jsonl")), rb = read_records(two.filePath("metrics.jsonl")),
                   rc = read_records(each.filePath("metrics.jsonl"));
        const auto sa = records_of<StepRecord>(ra), sb = records_of<StepRecord>(rb), sc = records_of<StepRecord>(rc);
        QCOMPARE(sa.size(), std::size_t(4));
        QCOMPARE(sb.size(), sa.size());
        QCOMPARE(sc.size(), sa.size());
        const auto two_ranks = testing::compare_shared_steps(sa, sb);
        QVERIFY2(two_ranks.within(1e-5), two_ranks.what().c_str());
        const auto each_micro_batch = testing::compare_shared_steps(sa, sc);
        QVERIFY2(each_micro_batch.within(1e-5), each_micro_batch.what().c_str());
        for (std::size_t i = 0; i < sa.size(); ++i) {
            QCOMPARE(sa[i].grad_allreduces, std::int64_t(0));
            QCOMPARE(sb[i].grad_allreduces, std::int64_t(1));
            QCOMPARE(sc[i].grad_allreduces, std::int64_t(4));
            // Both ranks' samples: the effective batch 32 × 4 × 2 per update.
            QCOMPARE(sb[i].samples_seen, sa[i].samples_seen);
            QCOMPARE(sb[i].samples_seen, std::int64_t(256) * sb[i].step);
            QVERIFY(sb[i].allreduce_bytes > 0 && sb[i].allreduce_seconds > 0);
            QCOMPARE(sc[i].allreduce_bytes, 4 * sb[i].allreduce_bytes);
            // The window's last micro-batch: K micro-steps per update on every rank.
            QCOMPARE(sb[i].micro_step, 4 * sb[i].step);
        }
        const auto summary = records_of<SummaryRecord>(rb);
        QVERIFY(!summary.empty());
        QCOMPARE(summary.back().world_size, 2);
        const auto one_summary = records_of<SummaryRecord>(ra);
        QVERIFY(!one_summary.empty());
        QCOMPARE(one_summary.back().world_size, 1);
        // Memory per rank: rank 0's own records, and rank 1's figures from the syncs.
        bool rank0 = false, rank1 = false;
        for (const auto& m : records_of<MemoryRecord>(rb)) {
            rank0 = rank0 || (m.rank == 0 && m.memory_bytes > 0);
            rank1 = rank1 || (m.rank == 1 && m.memory_bytes > 0 && m.rss_bytes > 0);
        }
        QVERIFY(rank0);
        QVERIFY(rank1);
        // Rank 0 alone printed (its summary: --quiet) and wrote.
        QVERIFY2(!b.out.contains("[rank 1]") && !b.err.contains("[rank"), qPrintable(b.out + b.err));
    }

    // The CNN's gradients come through autograd's AccumulateGrad only (no fused
    // kernel): the same invariant on Fashion-MNIST, with a checkpoint that holds
    // both ranks' RNG states.
    void cnnRanksMatchOneProcess() {
        if (!have_fashion_mnist()) QSKIP("no Fashion-MNIST (dataset-fashion-mnist)");
        QTemporaryDir one, two;
        const QStringList common{"--model", "cnn", "--accumulation-steps", "4", "--max-steps", "3", "--eval-strategy",
                                 "no", "--save-strategy", "steps", "--save-steps", "3", "--threads", "1", "--quiet"};
        const auto a = run_cli(common + QStringList{"--batch-size", "64", "--output-dir", one.path()});
        QVERIFY2(a.exit_code == 0, qPrintable(a.err));
        const auto b = run_cli(common + QStringList{"--batch-size", "32", "--nproc-per-node", "2", "--master-port", "0",
                                                    "--output-dir", two.path()});
        QVERIFY2(b.exit_code == 0, qPrintable(b.err));
        const auto sa = records_of<StepRecord>(read_records(one.filePath("metrics.jsonl")));
        const auto sb = records_of<StepRecord>(read_records(two.filePath("metrics.jsonl")));
        QCOMPARE(sa.size(), std::size_t(3));
        QCOMPARE(sb.size(), std::size_t(3));
        const auto two_ranks = testing::compare_shared_steps(sa, sb);
        QVERIFY2(two_ranks.within(1e-5), two_ranks.what().c_str());
        for (const auto& s : sb) QCOMPARE(s.grad_allreduces, std::int64_t(1));
        QVERIFY(QFile::exists(two.filePath("checkpoint-3/rng_state.pt")));
        QVERIFY(QFile::exists(two.filePath("checkpoint-3/rng_state_1.pt")));
        QVERIFY(!QFile::exists(one.filePath("checkpoint-3/rng_state_1.pt")));
    }

    // A loss scaler with data parallel, in each style: at float32's largest
    // scale the gradients overflow in some windows; the ranks average gradients
    // divided before their sum (as DDP does), so 2 × 32 × 4 skips the same
    // windows as 1 × 64 × 4 (the sum of two ranks' scaled gradients would
    // overflow where their mean does not), with the same losses and scales.
    void lossScalerAcrossRanks_data() {
        QTest::addColumn<QString>("mode");
        for (const char* mode : {"pytorch", "accelerator", "trainer"}) QTest::addRow("%s", mode) << mode;
    }
    void lossScalerAcrossRanks() {
        QFETCH(QString, mode);
        if (!have_fashion_mnist()) QSKIP("no Fashion-MNIST (dataset-fashion-mnist)");
        QTemporaryDir one, two;
        const QStringList common = tiny(mode, "sgd", 32, 20) + QStringList{"--dataset", "fashion-mnist",
                                                                            "--loss-scaling", "dynamic",
                                                                            "--loss-scale-init", "3.4e38", "--lr", "0.1"};
        const auto a = run_cli(common + QStringList{"--batch-size", "64", "--output-dir", one.path()});
        QVERIFY2(a.exit_code == 0, qPrintable(a.err));
        const auto b = run_cli(common + QStringList{"--nproc-per-node", "2", "--master-port", "0", "--output-dir",
                                                    two.path()});
        QVERIFY2(b.exit_code == 0, qPrintable(b.err));
        const auto sa = records_of<StepRecord>(read_records(one.filePath("metrics.jsonl")));
        const auto sb = records_of<StepRecord>(read_records(two.filePath("metrics.jsonl")));
        QCOMPARE(sa.size(), std::size_t(20));
        QCOMPARE(sb.size(), sa.size());
        int skipped = 0;
        for (std::size_t i = 0; i < sa.size(); ++i) {
            QCOMPARE(sb[i].skipped, sa[i].skipped);
            QCOMPARE(sb[i].loss_scale, sa[i].loss_scale);
            skipped += sa[i].skipped ? 1 : 0;
        }
        QVERIFY2(skipped >= 1, "no window overflowed: the test would not see the sum overflow");
        const auto two_ranks = testing::compare_shared_steps(sa, sb);
        QVERIFY2(two_ranks.within(1e-5), two_ranks.what().c_str());
    }
};

QTEST_GUILESS_MAIN(TestDataParallelNumbers)
#include "test_data_parallel_numbers.moc"
