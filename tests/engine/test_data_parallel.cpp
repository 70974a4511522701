// Data-parallel training end to end: faults, resume, interrupts; ranks
// started by an external launcher; and the studio's way of running ranks (a
// Session that trains as rank 0 and starts the others), paused past the timeout.
// (N ranks against one process, in the three styles: test_data_parallel_numbers.cpp.)
//
// Every process runs on 127.0.0.1 with a free port (--master-port 0, or one
// picked here), every wait is bounded, and every process a test starts is ended.
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
#include "distributed/watchdog.h"
#include "distributed/world.h"

#include "capture.h"
#include "processes.h"
#include "wait_until.h"

using namespace accum;

namespace {

using Clock = std::chrono::steady_clock;

using Result = testing::CliResult;
// accum-run with `args` (and extra environment); killed when it outlives `timeout_ms`.
Result run_cli(const QStringList& args, int timeout_ms = 120000, const QStringList& env = {}) {
    return testing::run_cli(args, timeout_ms, env);
}

using testing::read_records;
using testing::records_of;

std::optional<SummaryRecord> summary_of(const QString& dir) {
    const auto s = records_of<SummaryRecord>(read_records(dir + "/metrics.jsonl"));
    if (s.empty()) return std::nullopt;
    return s.back();
}


// A port something listens on, for as long as it lives.
class TakenPort {
public:
    TakenPort() {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(fd_, 4) == 0 &&
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0)
            port_ = ntohs(a.sin_port);
    }
    ~TakenPort() {
        if (fd_ >= 0) ::close(fd_);
    }
    int port() const { return port_; }

private:
    int fd_ = -1;
    int port_ = 0;
};

using testing::have_fashion_mnist;

using testing::children_of;

// RANK of a process started by the launcher (its environment).
int rank_of(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/environ");
    std::string var;
    while (std::getline(f, var, '\0'))
        if (var.rfind("RANK=", 0) == 0) return std::stoi(var.substr(5));
    return -1;
}

// A short run of the MLP on synthetic sentence pairs: the embedding's gradient
// goes through autograd's AccumulateGrad, the fused dense stack's straight into
// .grad, so both paths are synced.
QStringList tiny(const QString& mode, const QString& optimizer, int batch, int steps = 4) {
    return {"--mode", mode, "--optimizer", optimizer, "--dataset", "synthetic-pairs", "--model", "mlp",
            "--batch-size", QString::number(batch), "--accumulation-steps", "4", "--max-steps", QString::number(steps),
            "--lr", "0.01", "--eval-strategy", "no", "--save-strategy", "no", "--threads", "1", "--quiet"};
}

class RecordingSink final : public accum::Sink {
public:
    std::atomic<int> steps{0}, micro_steps{0};
    std::mutex mutex;
    std::vector<MicroStepRecord> micro;
    std::vector<MemoryRecord> memory;
    void on_step(const StepRecord&) override { ++steps; }
    void on_micro_step(const MicroStepRecord& r) override {
        std::lock_guard<std::mutex> lock(mutex);
        micro.push_back(r);
        ++micro_steps;
    }
    void on_memory(const MemoryRecord& r) override {
        std::lock_guard<std::mutex> lock(mutex);
        memory.push_back(r);
    }
};

// A run of two processes as the studio starts it: rank 0 on a thread here,
// rank 1 an accum-run worker; a long one unless `adjust` changes its config.
// Stopped (and released from a pause) and joined when it goes out of scope, so
// a check that fails while it runs leaves no joinable thread behind. The
// engine thread runs no check of its own (a Qt Test macro belongs to the test
// thread): it keeps the summary, or the text of an exception that escaped
// run(), for the test to read once `over` is set or the thread is joined.
class HostedRun {
public:
    explicit HostedRun(const std::function<void(RunConfig&)>& adjust = {}, const std::string& worker = ACCUM_RUN_EXE) {
        config.dataset = DatasetKind::SyntheticPairs;
        config.batch_size = 32;
        config.epochs = 0;
        config.max_steps = 1000;
        config.eval_strategy = Strategy::No;
        config.save_strategy = Strategy::No;
        config.nproc_per_node = 2;
        config.threads = 1;
        config.micro_step_delay_s = 0.01;
        if (adjust) adjust(config);
        session.set_worker_program(worker);
        engine = std::thread([this] {
            try {
                summary = session.run(config, sink, stop.get_token());
            } catch (const std::exception& e) {
                error = std::string("run() threw: ") + e.what();
            } catch (...) {
                error = "run() threw something that is not a std::exception";
            }
            over = true;
        });
    }
    ~HostedRun() {
        if (!engine.joinable()) return;
        stop.request_stop();
        session.resume();
        engine.join();
    }
    // Waits for the run to end by itself.
    void join() {
        if (engine.joinable()) engine.join();
    }
    HostedRun(const HostedRun&) = delete;
    HostedRun& operator=(const HostedRun&) = delete;
    // Waits (bounded) for the run to end by itself: false when it has not.
    bool wait_over(int ms) {
        if (!testing::wait_until([this] { return over.load(); }, std::chrono::milliseconds(ms))) return false;
        join();
        return true;
    }
    // Asks the run to stop and waits (bounded) for it to end: false when it has
    // not. The seconds it took are printed as `name`'s figure for bench/latencies.py.
    bool stop_and_wait(int ms, const char* name) {
        const auto asked = Clock::now();
        stop.request_stop();
        if (!wait_over(ms)) return false;
        std::printf("BENCH %s %.2f s\n", name, std::chrono::duration<double>(Clock::now() - asked).count());
        return true;
    }
    // Why the run is over already, for a check that it is not; empty while it
    // runs (the engine thread writes the summary until `over` is set).
    std::string why_over() const {
        if (!over.load()) return {};
        return error.empty() ? summary.message : error;
    }

    RunConfig config;
    Session session;
    RecordingSink sink;
    std::stop_source stop;
    SummaryRecord summary;
    std::string error; // an exception that escaped run(); read once `over` is set
    std::atomic<bool> over{false};

private:
    std::thread engine;
};

} // namespace

class TestDataParallel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Acceptance 2: kill -9 of rank 1 mid-run ends rank 0 and the launcher with
    // exit 6 naming rank 1 and its signal (noticed, not the 300 s timeout run
    // out: the test waits a minute); --resume from the last
    // checkpoint with 2 ranks then gives the same losses as an uninterrupted
    // 2-rank run (1e-5).
    void killedRankThenResume() {
        QTemporaryDir killed, whole;
        // Teaching pace slows the run (40 ms a micro-batch) so that it is killed mid-way.
        const QStringList common = tiny("pytorch", "sgd", 32, 16) +
                                   QStringList{"--save-strategy", "steps", "--save-steps", "2", "--nproc-per-node", "2",
                                               "--master-port", "0", "--dist-timeout", "300"};
        QProcess launcher;
        launcher.start(ACCUM_RUN_EXE,
                       common + QStringList{"--micro-step-delay", "0.04", "--output-dir", killed.path()});
        QVERIFY(launcher.waitForStarted(10000));
        const QString checkpoint = killed.filePath("checkpoint-4/trainer_state.json");
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(checkpoint), 60000);
        pid_t rank1 = -1;
        for (const auto pid : children_of(static_cast<pid_t>(launcher.processId())))
            if (rank_of(pid) == 1) rank1 = pid;
        QVERIFY(rank1 > 0);
        const auto killed_at = Clock::now();
        QCOMPARE(::kill(rank1, SIGKILL), 0);
        // Noticed, not waited out: the wait ends long before --dist-timeout (300 s).
        const bool ended = launcher.waitForFinished(60000);
        std::printf("BENCH data_parallel.killed_rank_noticed %.2f s\n",
                    std::chrono::duration<double>(Clock::now() - killed_at).count());
        if (!ended) {
            for (const auto pid : children_of(static_cast<pid_t>(launcher.processId()))) ::kill(pid, SIGKILL);
            launcher.kill();
            launcher.waitForFinished();
            QFAIL("the launcher did not end after rank 1 was killed");
        }
        QCOMPARE(launcher.exitCode(), 6);
        const auto err = QString::fromUtf8(launcher.readAllStandardError());
        QVERIFY2(err.contains("rank 1") && err.contains("SIGKILL"), qPrintable(err));
        const auto summary = summary_of(killed.path());
        QVERIFY(summary);
        QCOMPARE(summary->exit_code, 6);
        QVERIFY2(QString::fromStdString(summary->message).contains("rank 1"), summary->message.c_str());
        QVERIFY2(summary->optimizer_steps < 16, "the run ended before it was killed");

        // The last checkpoint is complete: resume it with 2 ranks.
        const auto resumed = run_cli(common + QStringList{"--output-dir", killed.path(), "--resume", killed.path()});
        QVERIFY2(resumed.exit_code == 0, qPrintable(resumed.err));
        const auto uninterrupted = run_cli(common + QStringList{"--output-dir", whole.path()});
        QVERIFY2(uninterrupted.exit_code == 0, qPrintable(uninterrupted.err));
        const auto steps = records_of<StepRecord>(read_records(killed.filePath("metrics.jsonl")));
        const auto reference = records_of<StepRecord>(read_records(whole.filePath("metrics.jsonl")));
        QCOMPARE(reference.size(), std::size_t(16));
        QVERIFY2(!steps.empty(), "the resumed run wrote no steps");
        QCOMPARE(steps.back().step, std::int64_t(16));
        const auto against_whole = testing::compare_shared_steps(reference, steps);
        QVERIFY2(against_whole.within(1e-5), against_whole.what().c_str());

        // A different number of processes is refused, naming the option.
        const auto three = run_cli(tiny("pytorch", "sgd", 32, 18) +
                                   QStringList{"--nproc-per-node", "3", "--master-port", "0", "--output-dir",
                                               killed.path(), "--resume", killed.path()});
        QCOMPARE(three.exit_code, 2);
        QVERIFY2(three.err.contains("2 processes") && three.err.contains("--nproc-per-node"), qPrintable(three.err));
    }

    // Ctrl-C reaches every rank through the launcher; they agree at the next
    // gradient sync, stop together, save, and the launcher exits 130.
    void interruptStopsEveryRank() {
        QTemporaryDir dir;
        QProcess launcher;
        launcher.start(ACCUM_RUN_EXE, tiny("trainer", "sgd", 32, 200) +
                                          QStringList{"--nproc-per-node", "2", "--master-port", "0", "--save-strategy",
                                                      "steps", "--save-steps", "1000", "--micro-step-delay", "0.02",
                                                      "--output-dir", dir.path()});
        QVERIFY(launcher.waitForStarted(10000));
        QTRY_VERIFY_WITH_TIMEOUT(
            testing::read_steps(dir.filePath("metrics.jsonl"), testing::FileState::MayBeCut).size() >= 2, 60000);
        ::kill(static_cast<pid_t>(launcher.processId()), SIGINT);
        if (!launcher.waitForFinished(30000)) {
            for (const auto pid : children_of(static_cast<pid_t>(launcher.processId()))) ::kill(pid, SIGKILL);
            launcher.kill();
            launcher.waitForFinished();
            QFAIL("the launcher did not end after SIGINT");
        }
        QCOMPARE(launcher.exitCode(), 130);
        const auto summary = summary_of(dir.path());
        QVERIFY(summary);
        QCOMPARE(summary->status, RunStatus::Stopped);
        QVERIFY(summary->optimizer_steps < 200);
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("checkpoint-%1/rng_state_1.pt").arg(summary->optimizer_steps))));
    }

    // Processes started by another launcher (torchrun, a scheduler) with RANK,
    // WORLD_SIZE, MASTER_ADDR and MASTER_PORT join as those ranks: rank 0 writes
    // the run, rank 1 prints nothing; --nproc-per-node may be left out.
    void externallyLaunchedRanksJoin() {
        QTemporaryDir dir, reference;
        const int port = dist::pick_free_port();
        const auto env = [&](int rank) {
            QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
            e.insert("RANK", QString::number(rank));
            e.insert("LOCAL_RANK", QString::number(rank));
            e.insert("WORLD_SIZE", "2");
            e.insert("LOCAL_WORLD_SIZE", "2");
            e.insert("MASTER_ADDR", "127.0.0.1");
            e.insert("MASTER_PORT", QString::number(port));
            return e;
        };
        QProcess r0, r1;
        r0.setProcessEnvironment(env(0));
        r1.setProcessEnvironment(env(1));
        const auto args = tiny("accelerator", "adamw", 32) + QStringList{"--output-dir", dir.path()};
        r1.start(ACCUM_RUN_EXE, args);
        r0.start(ACCUM_RUN_EXE, args);
        const bool done = r0.waitForFinished(60000) && r1.waitForFinished(60000);
        if (!done) {
            r0.kill();
            r1.kill();
            r0.waitForFinished();
            r1.waitForFinished();
            QFAIL("the ranks did not finish");
        }
        QCOMPARE(r0.exitCode(), 0);
        QCOMPARE(r1.exitCode(), 0);
        QCOMPARE(r1.readAllStandardOutput(), QByteArray());
        QCOMPARE(r1.readAllStandardError(), QByteArray());
        const auto one = run_cli(tiny("accelerator", "adamw", 64) + QStringList{"--output-dir", reference.path()});
        QCOMPARE(one.exit_code, 0);
        const auto a = records_of<StepRecord>(read_records(reference.filePath("metrics.jsonl")));
        const auto b = records_of<StepRecord>(read_records(dir.filePath("metrics.jsonl")));
        QCOMPARE(b.size(), std::size_t(4));
        const auto two_ranks = testing::compare_shared_steps(a, b);
        QVERIFY2(two_ranks.within(1e-5), two_ranks.what().c_str());
        const auto summary = summary_of(dir.path());
        QVERIFY(summary);
        QCOMPARE(summary->world_size, 2);
    }

    // Eager PyTorch's DistributedDataParallel continues the engine's 2-rank
    // checkpoint with the same losses: the code panel's Python loop
    // (resources/code/pytorch_loop.py, Debian's python3-torch) as two processes
    // with the rank variables, each on its DistributedSampler shard.
    void eagerDdpContinuesTheRanks() {
        if (!have_fashion_mnist()) QSKIP("no Fashion-MNIST (dataset-fashion-mnist)");
        QProcess probe;
        probe.start("/usr/bin/python3", {"-c", "import torch.distributed as d, numpy; assert d.is_gloo_available()"});
        if (!probe.waitForFinished(60000) || probe.exitStatus() != QProcess::NormalExit || probe.exitCode() != 0)
            QSKIP("Debian's python3-torch is not installed (scripts/debian-packages.txt lists it)");
        QTemporaryDir dir;
        const auto r = run_cli({"--mode", "pytorch", "--model", "mlp", "--batch-size", "32", "--accumulation-steps",
                                "4", "--nproc-per-node", "2", "--master-port", "0", "--max-steps", "16",
                                "--save-strategy", "steps", "--save-steps", "8", "--eval-strategy", "no", "--seed", "3",
                                "--threads", "1", "--quiet", "--output-dir", dir.path()});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        std::map<std::int64_t, double> engine;
        for (const auto& s : records_of<StepRecord>(read_records(dir.filePath("metrics.jsonl")))) engine[s.step] = s.loss;
        QCOMPARE(engine.size(), std::size_t(16));
        const int port = dist::pick_free_port();
        QProcess py[2];
        for (int rank = 0; rank < 2; ++rank) {
            auto e = QProcessEnvironment::systemEnvironment();
            e.insert("RANK", QString::number(rank));
            e.insert("WORLD_SIZE", "2");
            e.insert("MASTER_ADDR", "127.0.0.1");
            e.insert("MASTER_PORT", QString::number(port));
            py[rank].setProcessEnvironment(e);
            py[rank].start("/usr/bin/python3", {ACCUM_SOURCE_DIR "/resources/code/pytorch_loop.py", "--checkpoint",
                                                dir.filePath("checkpoint-8"), "--steps", "8"});
        }
        const bool done = py[0].waitForFinished(120000) && py[1].waitForFinished(120000);
        if (!done) {
            for (auto& p : py) {
                p.kill();
                p.waitForFinished();
            }
            QFAIL("the Python processes did not finish");
        }
        QVERIFY2(py[0].exitCode() == 0 && py[1].exitCode() == 0,
                 (py[0].readAllStandardError() + py[1].readAllStandardError()).constData());
        QCOMPARE(py[1].readAllStandardOutput(), QByteArray()); // rank 0 prints
        int compared = 0;
        for (const QByteArray& line : py[0].readAllStandardOutput().split('\n')) {
            if (line.isEmpty()) continue;
            const auto o = QJsonDocument::fromJson(line).object();
            const auto step = o["step"].toInteger();
            QCOMPARE(step, std::int64_t(9 + compared));
            const double diff = std::abs(o["loss"].toDouble() - engine.at(step));
            QVERIFY2(diff <= 1e-5, qPrintable(QString("step %1: |Δ loss| %2").arg(step).arg(diff)));
            ++compared;
        }
        QCOMPARE(compared, 8);
    }

    // Clear errors, never a hang: the port taken (6), options against the
    // launcher's environment, an unknown backend, retrying batch sizes (2).
    void clearErrors() {
        TakenPort taken;
        QVERIFY(taken.port() > 0);
        QTemporaryDir dir;
        const auto busy = run_cli(tiny("pytorch", "sgd", 32) + QStringList{"--nproc-per-node", "2", "--master-port",
                                                                            QString::number(taken.port()),
                                                                            "--dist-timeout", "600", "--output-dir",
                                                                            dir.path()},
                                 60000); // a failure, not the 600 s of --dist-timeout: killed (-1) past a minute
        QCOMPARE(busy.exit_code, 6);
        QVERIFY2(busy.err.contains("already in use") && busy.err.contains(QString::number(taken.port())),
                 qPrintable(busy.err));

        const auto against = run_cli(tiny("pytorch", "sgd", 32) + QStringList{"--nproc-per-node", "4"}, 60000,
                                     {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=1"});
        QCOMPARE(against.exit_code, 2);
        QVERIFY2(against.err.contains("WORLD_SIZE=2") && against.err.contains("--nproc-per-node"),
                 qPrintable(against.err));

        const auto backend = run_cli({"--backend", "mpi", "--nproc-per-node", "2"});
        QCOMPARE(backend.exit_code, 2);
        QVERIFY2(backend.err.contains("--backend"), qPrintable(backend.err));

        const auto retry = run_cli(tiny("trainer", "sgd", 32) + QStringList{"--nproc-per-node", "2",
                                                                             "--auto-find-batch-size"});
        QCOMPARE(retry.exit_code, 2);
        QVERIFY2(retry.err.contains("--auto-find-batch-size"), qPrintable(retry.err));
    }

    // A rank that fails before the rendezvous is noticed fast.
    // Ranks started by hand (no launcher to stop the rest), --dist-timeout 600:
    // rank 0 refusing its output directory (a check only rank 0 makes) or unable
    // to listen (another program holds the port), or rank 1 with an option
    // against its environment — the other rank stops within seconds, naming the
    // failure where it can learn it, instead of after the 600 s.
    void failureBeforeTheRendezvousIsSeenFast_data() {
        QTest::addColumn<QString>("what");
        QTest::newRow("rank 0: output directory holds a run") << "output-dir";
        QTest::newRow("rank 0: port taken") << "port";
        QTest::newRow("rank 1: option against WORLD_SIZE") << "rank1-option";
    }
    void failureBeforeTheRendezvousIsSeenFast() {
        QFETCH(QString, what);
        QTemporaryDir dir;
        TakenPort taken; // held for the "port" row only
        const int port = what == "port" ? taken.port() : dist::pick_free_port();
        QVERIFY(port > 0);
        if (what == "output-dir") {
            QFile config(dir.filePath("accum_config.json"));
            QVERIFY(config.open(QIODevice::WriteOnly));
            config.write("{}\n");
        }
        auto start_rank = [&](QProcess& p, int rank, const QStringList& extra) {
            auto e = QProcessEnvironment::systemEnvironment();
            e.insert("RANK", QString::number(rank));
            e.insert("WORLD_SIZE", "2");
            e.insert("MASTER_ADDR", "127.0.0.1");
            e.insert("MASTER_PORT", QString::number(port));
            p.setProcessEnvironment(e);
            p.start(ACCUM_RUN_EXE, tiny("pytorch", "sgd", 32) + extra +
                                       QStringList{"--dist-timeout", "600", "--output-dir", dir.path()});
        };
        QProcess r0, r1;
        const auto started = Clock::now();
        start_rank(r1, 1, what == "rank1-option" ? QStringList{"--nproc-per-node", "4"} : QStringList{});
        start_rank(r0, 0, {});
        // The one that did not fail by itself: it must end within seconds.
        QProcess& waiting = what == "rank1-option" ? r0 : r1;
        QProcess& failing = what == "rank1-option" ? r1 : r0;
        // Within the wait (a minute), long before --dist-timeout (600 s).
        const bool ended = waiting.waitForFinished(60000);
        std::printf("BENCH data_parallel.failure_before_rendezvous %.2f s\n",
                    std::chrono::duration<double>(Clock::now() - started).count());
        failing.waitForFinished(30000);
        for (QProcess* p : {&r0, &r1})
            if (p->state() != QProcess::NotRunning) {
                p->kill();
                p->waitForFinished();
            }
        const auto waiting_err = QString::fromUtf8(waiting.readAllStandardError());
        const auto failing_err = QString::fromUtf8(failing.readAllStandardError());
        QVERIFY2(ended, "the other rank waited out --dist-timeout");
        QCOMPARE(waiting.exitCode(), 6);
        if (what == "output-dir") {
            QCOMPARE(failing.exitCode(), 2);
            QVERIFY2(waiting_err.contains("rank 1: rank 0 failed before the rendezvous: --output-dir: " + dir.path() +
                                          " already holds a run"),
                     qPrintable(waiting_err));
        } else if (what == "port") {
            QCOMPARE(failing.exitCode(), 6);
            QVERIFY2(failing_err.contains("already in use"), qPrintable(failing_err));
            QVERIFY2(waiting_err.contains("is not rank 0's store") && waiting_err.contains(QString::number(port)),
                     qPrintable(waiting_err));
        } else {
            QCOMPARE(failing.exitCode(), 2);
            QVERIFY2(waiting_err.contains("rank 0: rank 1 failed before the rendezvous: --nproc-per-node 4"),
                     qPrintable(waiting_err));
        }
    }

    // The studio's way: a Session trains as rank 0 on its own thread and starts
    // rank 1 as accum-run. A pause holds both ranks (agreed at the next sync)
    // for longer than --dist-timeout, one micro-batch is stepped, and the run
    // then completes; no process is left behind. The ranks agree every so often
    // to go on waiting (Session::times_held() grows each time): that is the
    // event waited on, not a span of time.
    void sessionHostsRanksAndPausesTogether() {
        HostedRun run([](RunConfig& c) {
            c.accumulation_steps = 4;
            c.max_steps = 30;
            c.dist_timeout_s = 2;
            c.record_micro_steps = true;
            c.micro_step_delay_s = 0.02;
        });
        auto& session = run.session;
        auto& sink = run.sink;
        const auto& summary = run.summary;
        const auto& over = run.over;
        QTRY_VERIFY_WITH_TIMEOUT(sink.steps.load() >= 2 || over.load(), 60000);
        QVERIFY2(!over.load(), run.why_over().c_str());
        session.pause();
        // The pause is agreed at the next sync: then nothing moves.
        QTRY_VERIFY_WITH_TIMEOUT(session.times_held() >= 1 || over.load(), 60000);
        QVERIFY2(!over.load(), run.why_over().c_str());
        const int held = sink.micro_steps.load();
        // Held together past the 2 s timeout: the ranks still agree to wait after it.
        const auto past_timeout = Clock::now() + std::chrono::duration<double>(run.config.dist_timeout_s + 1);
        const auto agreements = session.times_held();
        QTRY_VERIFY_WITH_TIMEOUT((session.times_held() > agreements && Clock::now() > past_timeout) || over.load(),
                                 60000);
        QVERIFY2(!over.load(), run.why_over().c_str());
        const auto after_timeout = session.times_held();
        QTRY_VERIFY_WITH_TIMEOUT(session.times_held() > after_timeout || over.load(), 60000);
        QVERIFY2(!over.load(), run.why_over().c_str());
        QCOMPARE(sink.micro_steps.load(), held);
        session.step_once();
        QTRY_COMPARE_WITH_TIMEOUT(sink.micro_steps.load(), held + 1, 10000);
        // Held again after the one micro-batch: it cannot move, so none came after it.
        const auto after_step = session.times_held();
        QTRY_VERIFY_WITH_TIMEOUT(session.times_held() > after_step, 10000);
        QCOMPARE(sink.micro_steps.load(), held + 1);
        session.resume();
        QVERIFY2(run.wait_over(120000), "the run did not end after the resume");
        QVERIFY2(run.error.empty(), run.error.c_str());
        QCOMPARE(summary.status, RunStatus::Completed);
        QCOMPARE(summary.optimizer_steps, std::int64_t(30));
        QCOMPARE(summary.world_size, 2);
        // No accum-run left: the workers were reaped before run() returned.
        QVERIFY(children_of(::getpid()).empty());
        // The code panel's facts: no all-reduce on the first K-1 micro-batches of a window, one on the last.
        std::lock_guard<std::mutex> lock(sink.mutex);
        for (const auto& m : sink.micro)
            QCOMPARE(m.grad_allreduces, std::int64_t(m.window_index == m.window_size ? 1 : 0));
        bool rank1 = false;
        for (const auto& m : sink.memory) rank1 = rank1 || m.rank == 1;
        QVERIFY(rank1);
    }

    // Stop from the studio: every rank stops at the next sync, the workers end.
    void sessionStopEndsWorkers() {
        HostedRun run;
        QTRY_VERIFY_WITH_TIMEOUT(run.sink.steps.load() >= 1 || run.over.load(), 60000);
        QVERIFY2(!run.over.load(), run.why_over().c_str());
        QVERIFY2(run.stop_and_wait(60000, "data_parallel.session_stop"), "the run did not end after the stop");
        QVERIFY2(run.error.empty(), run.error.c_str());
        QCOMPARE(run.summary.status, RunStatus::Stopped);
        QVERIFY(run.summary.optimizer_steps < 1000);
        QVERIFY(children_of(::getpid()).empty());
    }

    // Stop while a rank is stalled (SIGSTOP): the studio does not wait out the
    // timeout (600 s here): rank 0 gives the sync up soon after the stop, the
    // stopped worker is killed, and nothing is left behind.
    void sessionStopWithStalledRank() {
        HostedRun run([](RunConfig& c) { c.dist_timeout_s = 600; });
        QTRY_VERIFY_WITH_TIMEOUT(run.sink.steps.load() >= 1 || run.over.load(), 60000);
        QVERIFY2(!run.over.load(), run.why_over().c_str());
        const auto workers = children_of(::getpid());
        QCOMPARE(int(workers.size()), 1);
        QCOMPARE(::kill(workers.front(), SIGSTOP), 0);
        QTRY_COMPARE_WITH_TIMEOUT(testing::process_state(workers.front()), 'T', 10000); // stopped
        QVERIFY2(run.stop_and_wait(60000, "data_parallel.stop_with_stalled_rank"),
                 "the run waited for the stalled rank");
        QVERIFY2(run.error.empty(), run.error.c_str());
        QVERIFY(run.summary.status == RunStatus::Error || run.summary.status == RunStatus::Stopped);
        QVERIFY(children_of(::getpid()).empty());
    }

    // Without the worker program the studio's run is a clear error.
    void sessionWithoutWorkerProgram() {
        RunConfig c;
        c.dataset = DatasetKind::SyntheticPairs;
        c.nproc_per_node = 2;
        Session session;
        RecordingSink sink;
        const auto summary = session.run(c, sink);
        QCOMPARE(summary.status, RunStatus::Error);
        QCOMPARE(summary.exit_code, exit_code::invalid_arguments);
        QVERIFY(QString::fromStdString(summary.message).contains("accum-run"));
    }

    // The studio lives on after a run that could not start: a worker program
    // that ends at once makes rank 0 give its join up (within the wait of a
    // minute, not after the 600 s of --dist-timeout), and the join's thread ends
    // with it. Three in a row: each time, once the process has no more threads
    // than before the first (waited for, bounded), it is counted.
    void failedJoinsLeaveNoThread() {
        auto count_threads = [] {
            int n = 0;
            for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
            return n;
        };
        (void)accum::dist::watchdog(); // the process's one watchdog, started once, is not a join's
        const int before = count_threads();
        std::vector<int> after;
        for (int round = 0; round < 3; ++round) {
            {
                HostedRun run(
                    [](RunConfig& c) {
                        c.dist_timeout_s = 600;
                        c.micro_step_delay_s = 0;
                    },
                    "/bin/false");
                const auto start = Clock::now();
                QVERIFY2(run.wait_over(60000), "rank 0 waited for a worker that had ended");
                std::printf("BENCH data_parallel.failed_join %.2f s\n",
                            std::chrono::duration<double>(Clock::now() - start).count());
                QVERIFY2(run.error.empty(), run.error.c_str());
                QCOMPARE(run.summary.status, RunStatus::Error);
                QCOMPARE(run.summary.exit_code, exit_code::distributed_failure);
            }
            int n = count_threads();
            testing::wait_until([&] { return (n = count_threads()) <= before; }, std::chrono::seconds(10));
            after.push_back(n);
        }
        std::ostringstream text;
        text << "threads before: " << before << ", after each failed join:";
        for (int n : after) text << ' ' << n;
        const std::string counts = text.str();
        for (int n : after) QVERIFY2(n <= before, counts.c_str());
        std::printf("%s\n", counts.c_str());
        QVERIFY(children_of(::getpid()).empty());
    }

    // DistributedSampler's shards: the j-th batches of N ranks together are the
    // j-th batch of one loader with an N-times larger batch, and every rank
    // counts the window's label items of all ranks (num_items_in_batch).
    void loaderShards() {
        const auto data = make_synthetic_lm(3, 101, 4); // 101 samples: ranks padded to 51
        DataLoader one(data.train, 20, true, 7);
        DataLoader r0(data.train, 10, true, 7), r1(data.train, 10, true, 7);
        r0.shard(0, 2);
        r1.shard(1, 2);
        for (const std::int64_t epoch : {0, 3}) {
            one.set_epoch(epoch);
            r0.set_epoch(epoch);
            r1.set_epoch(epoch);
            QCOMPARE(r0.size(), std::int64_t(6)); // ceil(51 / 10)
            QCOMPARE(r1.size(), r0.size());
            // A sample's fingerprint: its tokens weighed by random weights (distinct samples differ).
            const auto w = torch::rand({data.train.inputs.size(1)}, torch::kDouble);
            auto fingerprints = [&](const Batch& b) { return std::get<0>(b.input_ids.to(torch::kDouble).matmul(w).sort()); };
            for (std::int64_t j = 0; j + 1 < r0.size(); ++j) { // the last holds the padding
                Batch both = r0.batch(j);
                both.input_ids = torch::cat({both.input_ids, r1.batch(j).input_ids});
                QVERIFY(torch::allclose(fingerprints(one.batch(j)), fingerprints(both)));
                QCOMPARE(r0.items_in(j, j + 1), one.items_in(j, j + 1));
                if (j + 2 < r0.size()) QCOMPARE(r1.items_in(j, j + 2), one.items_in(j, j + 2));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestDataParallel)
#include "test_data_parallel.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
