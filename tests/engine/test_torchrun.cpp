// accum-run under torch 2.x's own torchrun, for real.
//
//   torchrun --no-python --nproc-per-node 2 accum-run …            static rendezvous: the
//       agent serves the store on MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True), every
//       worker joins it as a client
//   torchrun --no-python --nnodes 2 --rdzv-backend c10d --rdzv-endpoint HOST:PORT … (×2)
//       c10d rendezvous on two local agents: MASTER_ADDR/PORT name the store the
//       rendezvous' rank-0 agent serves on a free port of its own
//   torchrun … --max-restarts 1, a worker killed mid-run: the agent restarts the group
//       (TORCHELASTIC_RESTART_COUNT=1), which resumes from the latest checkpoint
//
// Each trains as one process × (N·B) × K does (1e-5). torchrun is the one of the
// torch 2.x virtual environment scripts/setup-libtorch2.sh makes: CMake's
// ACCUM_TORCHRUN, passed here as $ACCUM_TORCHRUN; without it the tests skip,
// saying where they looked. Ports are free ones; every process is ended.
#include <QtTest/QtTest>

#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "accum/metrics_io.h"
#include "capture.h"
#include "distributed/world.h"
#include "processes.h"

#include "torch_compat.h"

using namespace accum;

namespace {

QString torchrun() { return qEnvironmentVariable("ACCUM_TORCHRUN"); }

// QSKIP's text when torchrun is not there.
QByteArray torchrun_missing() {
    const QString path = torchrun();
    if (path.isEmpty()) return "ACCUM_TORCHRUN is not set (CMake passes it): run scripts/setup-libtorch2.sh";
    if (!QFileInfo(path).isExecutable())
        return ("no torchrun at " + path + ": run scripts/setup-libtorch2.sh (it makes that virtual environment)")
            .toLocal8Bit();
    return {};
}

// QSKIP's text where a run under torchrun 2.x cannot train: this build's store
// client does not speak torch 2.x's store (foreignStoreIsRefused checks what it says).
QByteArray cannot_train_under_torchrun() {
    if (const auto why = torchrun_missing(); !why.isEmpty()) return why;
    if (!compat::kStoreClientSpeaksTorch2)
        return QByteArray("LibTorch ") + compat::kTorchVersion +
               " cannot join torchrun 2.x's store: foreignStoreIsRefused checks its error";
    return {};
}

using Result = testing::CliResult;
using testing::finish;
Result run(const QString& program, const QStringList& args) { return testing::run_program(program, args, 120000); }

using testing::read_steps;

std::optional<SummaryRecord> summary_of(const QString& dir) {
    QFile f(dir + "/summary.json");
    if (!f.open(QIODevice::ReadOnly)) return std::nullopt;
    std::string error;
    const auto r = parse_json_line(f.readAll().trimmed().toStdString(), error);
    if (!r || !std::holds_alternative<SummaryRecord>(*r)) return std::nullopt;
    return std::get<SummaryRecord>(*r);
}

// The MLP on synthetic sentence pairs, K = 4: `batch` per process.
QStringList training(const QString& mode, const QString& optimizer, int batch, int steps) {
    return {"--mode", mode, "--optimizer", optimizer, "--dataset", "synthetic-pairs", "--model", "mlp",
            "--batch-size", QString::number(batch), "--accumulation-steps", "4", "--max-steps",
            QString::number(steps), "--lr", "0.01", "--eval-strategy", "no", "--threads", "1", "--quiet",
            "--dist-timeout", "30"};
}

// The reference: one process × (2·B) × K.
std::vector<StepRecord> one_process(const QStringList& args, const QString& dir) {
    const auto r = run(ACCUM_RUN_EXE, args + QStringList{"--output-dir", dir});
    if (r.exit_code != 0) qWarning("reference run: %s", qPrintable(r.err));
    return read_steps(dir + "/metrics.jsonl");
}

using testing::children_of;

std::string environment_of(pid_t pid, const std::string& name) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/environ");
    std::string var;
    while (std::getline(f, var, '\0'))
        if (var.rfind(name + "=", 0) == 0) return var.substr(name.size() + 1);
    return {};
}

// Kills torchrun and whatever it started, should a test end early.
struct Reaper {
    std::vector<QProcess*> launchers;
    ~Reaper() {
        for (auto* p : launchers) {
            if (p->state() == QProcess::NotRunning) continue;
            for (const auto child : children_of(static_cast<pid_t>(p->processId()))) ::kill(child, SIGKILL);
            p->kill();
            p->waitForFinished();
        }
    }
};

} // namespace

class TestTorchrun : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // A build whose store client cannot speak torchrun's store (LibTorch 1.13
    // under torchrun 2.x) stops at once with exit 2 (invalid arguments: the
    // build chosen), naming the fix, instead of waiting out --dist-timeout
    // (60 s here; the run is waited for 30 s at most). On a 2.x build the same
    // launch trains (staticRendezvous).
    void foreignStoreIsRefused() {
        if (const auto why = torchrun_missing(); !why.isEmpty()) QSKIP(why.constData());
        if (compat::kStoreClientSpeaksTorch2) QSKIP("this build speaks torchrun 2.x's store (staticRendezvous trains)");
        QTemporaryDir two;
        const int port = dist::pick_free_port();
        QProcess launcher;
        Reaper reaper{{&launcher}};
        launcher.start(torchrun(), QStringList{"--no-python", "--nproc-per-node", "2", "--master-addr", "127.0.0.1",
                                               "--master-port", QString::number(port), ACCUM_RUN_EXE} +
                                       training("pytorch", "sgd", 16, 8) +
                                       QStringList{"--dist-timeout", "60", "--output-dir", two.path()});
        const auto r = finish(launcher, 30000);
        QVERIFY2(r.exit_code != -1, "accum-run under torchrun 2.x waited instead of refusing its store");
        QVERIFY2(r.exit_code != 0, qPrintable(r.out + r.err));
        const QString all = r.out + r.err;
        QVERIFY2(all.contains("exitcode  : 2") || all.contains("exitcode: 2"), qPrintable(all));
        QVERIFY2(all.contains("does not answer this build's store client"), qPrintable(all));
        QVERIFY2(all.contains("scripts/build-libtorch2.sh"), qPrintable(all));
    }

    // torchrun --no-python --nproc-per-node 2: the agent's store on MASTER_PORT,
    // joined by both workers (rank 0 serving one of its own there would fail,
    // "address already in use"); 2 × 16 × 4 = 1 × 32 × 4 step for step, within
    // 1e-5. AdamW's steps after the fourth are held to
    // 1e-3: AdamW divides each coordinate by its own running RMS, so where a
    // coordinate's gradient is near zero, the rounding by which an all-reduced
    // mean differs from one process's sum becomes an update of order lr. Seed 0
    // meets such a point at step 6 on 2.11 (measured: 5e-6 at step 6, 1.2e-4 at
    // step 7; seeds 1-3 stay under 6e-8 at every step there, and every seed on
    // 1.13), so it is no fault of the launch, which the first 4 steps check.
    void staticRendezvous_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<int>("strict_steps");
        QTest::newRow("pytorch sgd") << "pytorch" << "sgd" << 8;
        QTest::newRow("trainer adamw") << "trainer" << "adamw" << 4;
    }
    void staticRendezvous() {
        if (const auto why = cannot_train_under_torchrun(); !why.isEmpty()) QSKIP(why.constData());
        QFETCH(QString, mode);
        QFETCH(QString, optimizer);
        QFETCH(int, strict_steps);
        QTemporaryDir one, two;
        const auto reference = one_process(training(mode, optimizer, 32, 8), one.path());
        QCOMPARE(reference.size(), std::size_t(8));
        const int port = dist::pick_free_port();
        const auto r = run(torchrun(), QStringList{"--no-python", "--nproc-per-node", "2", "--master-addr", "127.0.0.1",
                                                   "--master-port", QString::number(port), ACCUM_RUN_EXE} +
                                           training(mode, optimizer, 16, 8) + QStringList{"--output-dir", two.path()});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
        const auto steps = read_steps(two.path() + "/metrics.jsonl");
        QCOMPARE(steps.size(), std::size_t(8));
        const auto losses = testing::compare_losses(reference, steps);
        const auto first = [&](const std::vector<StepRecord>& v) {
            return std::vector<StepRecord>(v.begin(), v.begin() + strict_steps);
        };
        const auto strict = testing::compare_losses(first(reference), first(steps));
        QVERIFY2(strict.within(1e-5), strict.what().c_str());
        // The steps after strict_steps (none for SGD).
        QVERIFY2(losses.within(1e-3), losses.what().c_str());
        for (const auto& s : steps) QCOMPARE(s.grad_allreduces, std::int64_t(1));
        const auto summary = summary_of(two.path());
        QVERIFY(summary);
        QCOMPARE(summary->world_size, 2);
        QVERIFY2(!r.err.contains("already in use"), qPrintable(r.err));
    }

    // Two agents with the c10d rendezvous (--nnodes 2, one process each), as two
    // machines would run it: the rendezvous' rank-0 agent serves a store of its
    // own on a free port and names it in MASTER_ADDR (its host name) and
    // MASTER_PORT, with TORCHELASTIC_USE_AGENT_STORE=True. 2 × 16 × 4 = 1 × 32 × 4.
    void c10dRendezvousTwoAgents() {
        if (const auto why = cannot_train_under_torchrun(); !why.isEmpty()) QSKIP(why.constData());
        QTemporaryDir one, two;
        const auto reference = one_process(training("accelerator", "sgd", 32, 8), one.path());
        QCOMPARE(reference.size(), std::size_t(8));
        const int port = dist::pick_free_port();
        const QStringList agent{"--no-python", "--nnodes", "2", "--nproc-per-node", "1", "--rdzv-backend", "c10d",
                                "--rdzv-endpoint", "127.0.0.1:" + QString::number(port), "--rdzv-id",
                                "accum-test-" + QString::number(::getpid()), ACCUM_RUN_EXE};
        const QStringList args = agent + training("accelerator", "sgd", 16, 8) + QStringList{"--output-dir", two.path()};
        QProcess a, b;
        Reaper reaper{{&a, &b}};
        a.start(torchrun(), args);
        b.start(torchrun(), args);
        const auto ra = finish(a, 120000), rb = finish(b, 120000);
        QVERIFY2(ra.exit_code == 0, qPrintable(ra.out + ra.err));
        QVERIFY2(rb.exit_code == 0, qPrintable(rb.out + rb.err));
        const auto steps = read_steps(two.path() + "/metrics.jsonl");
        QCOMPARE(steps.size(), std::size_t(8));
        const auto losses = testing::compare_losses(reference, steps);
        QVERIFY2(losses.within(1e-5), losses.what().c_str());
        QCOMPARE(summary_of(two.path())->world_size, 2);
    }

    // --max-restarts 1 and rank 1 killed (-9) after the checkpoint of step 4:
    // torchrun restarts the group with TORCHELASTIC_RESTART_COUNT=1, the new
    // workers resume from the latest complete checkpoint (the log says so), and
    // the 16 steps' losses are those of one uninterrupted process × 32 × 4.
    void restartResumesFromTheLatestCheckpoint() {
        if (const auto why = cannot_train_under_torchrun(); !why.isEmpty()) QSKIP(why.constData());
        QTemporaryDir one, dir;
        const QStringList saving{"--save-strategy", "steps", "--save-steps", "2"};
        const auto reference = one_process(training("pytorch", "sgd", 32, 16) + saving, one.path());
        QCOMPARE(reference.size(), std::size_t(16));
        const int port = dist::pick_free_port();
        QProcess launcher;
        Reaper reaper{{&launcher}};
        // Teaching pace (40 ms a micro-batch) so that the kill lands mid-run.
        launcher.start(torchrun(), QStringList{"--no-python", "--nproc-per-node", "2", "--max-restarts", "1",
                                               "--monitor-interval", "0.1", "--master-addr", "127.0.0.1",
                                               "--master-port", QString::number(port), ACCUM_RUN_EXE} +
                                       training("pytorch", "sgd", 16, 16) + saving +
                                       QStringList{"--micro-step-delay", "0.04", "--output-dir", dir.path()});
        QVERIFY(launcher.waitForStarted(10000));
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(dir.filePath("checkpoint-4/trainer_state.json")) ||
                                     launcher.state() == QProcess::NotRunning,
                                 60000);
        pid_t rank1 = -1;
        for (const auto pid : children_of(static_cast<pid_t>(launcher.processId())))
            if (environment_of(pid, "RANK") == "1") rank1 = pid;
        QVERIFY2(rank1 > 0, "no worker of rank 1 under torchrun");
        QCOMPARE(environment_of(rank1, "TORCHELASTIC_USE_AGENT_STORE"), std::string("True"));
        QCOMPARE(environment_of(rank1, "TORCHELASTIC_RESTART_COUNT"), std::string("0"));
        QCOMPARE(::kill(rank1, SIGKILL), 0);
        const auto r = finish(launcher, 120000);
        QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains("torchrun restart 1 (TORCHELASTIC_RESTART_COUNT=1): resuming from " + dir.path() +
                                "/checkpoint-"),
                 qPrintable(r.out));
        const auto steps = read_steps(dir.path() + "/metrics.jsonl");
        QCOMPARE(steps.size(), std::size_t(16)); // the records through the checkpoint, then the resumed steps
        const auto losses = testing::compare_losses(reference, steps);
        QVERIFY2(losses.within(1e-5), losses.what().c_str());
        const auto summary = summary_of(dir.path());
        QVERIFY(summary);
        QCOMPARE(summary->status, RunStatus::Completed);
        QCOMPARE(summary->optimizer_steps, std::int64_t(16));
    }
};

QTEST_GUILESS_MAIN(TestTorchrun)
#include "test_torchrun.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
