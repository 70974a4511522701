// SPDX-License-Identifier: GPL-3.0-or-later
// The data-parallel module (engine/src/distributed/) before the ranks meet:
// the rank environment and the launch plan, the backend's choice, failures told
// by their type, sharding against DistributedSampler, and the launcher.
//
// The launcher's tests start this executable again in a worker mode
// (`test_distributed_launch --worker SCENARIO …`) as ranks through the launcher.
// Ports are picked free; every wait is bounded; every worker is reaped.
#include <ATen/ATen.h>

#include <QtTest/QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>
#include <type_traits>

#include "accum/errors.h"
#include "distributed/gradient_sync.h"
#include "distributed/launcher.h"
#include "data/sharding.h"
#include "distributed/process_group.h"
#include "distributed/store_client.h"
#include "distributed/world.h"
#include "torch_compat.h"
#include "wait_until.h"
#include "worker_launch.h"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

using namespace accum;
using namespace accum::dist;

namespace {

// ---------------------------------------------------------------- worker mode

void write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path + ".tmp");
    f << text;
    f.close();
    std::filesystem::rename(path + ".tmp", path);
}

std::string env_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v ? v : fallback;
}

volatile std::sig_atomic_t g_worker_signal = 0;
extern "C" void worker_on_signal(int sig) { g_worker_signal = sig; }
int worker_main(int argc, char** argv) {
    if (argc < 1) return 2;
    const std::string scenario = argv[0];
    const std::string rank = env_or("RANK", "?");
    if (scenario == "env" && argc >= 2) {
        std::string text;
        for (const char* name : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR",
                                 "MASTER_PORT", "ACCUM_TEST_EXTRA"})
            text += std::string(name) + "=" + env_or(name, "<unset>") + "\n";
        write_file(std::string(argv[1]) + "/rank-" + rank + ".txt", text);
        return 0;
    }
    if ((scenario == "exit" || scenario == "signal") && argc >= 4) {
        // argv: CODE-or-SIGNAL, FAILING_RANK, DELAY_MS; the other ranks wait to be stopped.
        if (rank == argv[2]) {
            // not-a-wait: the failure comes a moment into the run, as a real one would
            std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(argv[3])));
            if (scenario == "exit") return std::atoi(argv[1]);
            ::raise(std::atoi(argv[1]));
        }
        // Waits for the launcher's stop (its SIGTERM ends the process); SIGALRM
        // ends it after a minute instead, a death the tests do not accept.
        ::alarm(60);
        for (;;) ::pause();
    }
    if ((scenario == "trap" || scenario == "ignore") && argc >= 2) {
        // Records the signal that stops it (trap), or ignores SIGTERM (ignore);
        // announces itself with a ready file.
        struct sigaction sa {};
        sa.sa_handler = scenario == "trap" ? worker_on_signal : SIG_IGN;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGTERM, &sa, nullptr);
        ::sigaction(SIGINT, &sa, nullptr);
        const std::string dir = argv[1];
        write_file(dir + "/ready-" + rank, "ready\n");
        if (scenario == "ignore" && rank == "0") {
            // Fails once rank 1 ignores SIGTERM (its ready file follows its sigaction).
            if (!testing::wait_until([&] { return std::filesystem::exists(dir + "/ready-1"); },
                                     std::chrono::seconds(60)))
                return 4;
            return 3;
        }
        if (!testing::wait_until([] { return g_worker_signal != 0; }, std::chrono::seconds(60))) return 0;
        write_file(dir + "/got-" + rank, std::to_string(g_worker_signal) + "\n");
        return 128 + g_worker_signal;
    }
    std::fprintf(stderr, "unknown worker scenario %s\n", scenario.c_str());
    return 2;
}

// ---------------------------------------------------------------- test side

EnvLookup lookup(std::map<std::string, std::string> vars) {
    return [vars](const std::string& name) -> std::optional<std::string> {
        const auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

bool process_gone(int pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

std::string read_text(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

void verify_all_reaped(const LaunchResult& r) {
    for (const auto& w : r.workers)
        if (w.pid > 0) QVERIFY2(process_gone(w.pid), qPrintable(QString("pid %1 still exists").arg(w.pid)));
}

} // namespace

class TestDistributedLaunch : public QObject {
    Q_OBJECT
private Q_SLOTS:

    void environmentAbsentMeansOneProcess() { QVERIFY(!world_from_environment(lookup({})).has_value()); }

    void environmentAsTorchrunSetsIt() {
        const auto w = world_from_environment(lookup({{"RANK", "5"},
                                                      {"LOCAL_RANK", "1"},
                                                      {"WORLD_SIZE", "8"},
                                                      {"LOCAL_WORLD_SIZE", "4"},
                                                      {"GROUP_RANK", "1"},
                                                      {"MASTER_ADDR", "node0"},
                                                      {"MASTER_PORT", "29500"}}));
        QVERIFY(w.has_value());
        QCOMPARE(w->rank, 5);
        QCOMPARE(w->local_rank, 1);
        QCOMPARE(w->world_size, 8);
        QCOMPARE(w->local_world_size, 4);
        QCOMPARE(w->node_rank, 1);
        QCOMPARE(w->master_addr, std::string("node0"));
        QCOMPARE(w->master_port, 29500);
        // Without the local variables: one machine.
        const auto single = world_from_environment(
            lookup({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "1234"}}));
        QCOMPARE(single->local_rank, 1);
        QCOMPARE(single->local_world_size, 2);
        QVERIFY(!single->agent_store);
        QCOMPARE(single->restart_count, 0);
        // torchrun's agent serves the store (its str(bool): "True") and counts its restarts.
        const auto agent = world_from_environment(lookup({{"RANK", "1"},
                                                          {"WORLD_SIZE", "2"},
                                                          {"MASTER_ADDR", "127.0.0.1"},
                                                          {"MASTER_PORT", "29500"},
                                                          {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                                                          {"TORCHELASTIC_RESTART_COUNT", "2"}}));
        QVERIFY(agent->agent_store);
        QCOMPARE(agent->restart_count, 2);
        // As torch.distributed reads it: only "True" is true.
        for (const char* value : {"False", "true", "1"})
            QVERIFY(!world_from_environment(lookup({{"RANK", "0"},
                                                    {"WORLD_SIZE", "2"},
                                                    {"MASTER_ADDR", "h"},
                                                    {"MASTER_PORT", "1"},
                                                    {"TORCHELASTIC_USE_AGENT_STORE", value}}))
                         ->agent_store);
    }

    void environmentErrorsNameTheVariable_data() {
        QTest::addColumn<QString>("vars");
        QTest::addColumn<QString>("named");
        const QString ok = "MASTER_ADDR=127.0.0.1;MASTER_PORT=29500;";
        QTest::newRow("rank not a number") << ok + "RANK=one;WORLD_SIZE=2" << "RANK='one'";
        QTest::newRow("rank too large") << ok + "RANK=2;WORLD_SIZE=2" << "RANK=2 must be below WORLD_SIZE=2";
        QTest::newRow("negative rank") << ok + "RANK=-1;WORLD_SIZE=2" << "RANK=-1";
        QTest::newRow("world zero") << ok + "RANK=0;WORLD_SIZE=0" << "WORLD_SIZE=0";
        QTest::newRow("world missing") << ok + "RANK=0" << "WORLD_SIZE is not";
        QTest::newRow("rank missing") << ok + "WORLD_SIZE=2" << "RANK is not";
        QTest::newRow("trailing junk") << ok + "RANK=0;WORLD_SIZE=2x" << "WORLD_SIZE='2x'";
        QTest::newRow("no master addr") << "MASTER_PORT=1;RANK=0;WORLD_SIZE=2" << "MASTER_ADDR";
        QTest::newRow("no master port") << "MASTER_ADDR=h;RANK=0;WORLD_SIZE=2" << "MASTER_PORT";
        QTest::newRow("port out of range") << "MASTER_ADDR=h;MASTER_PORT=70000;RANK=0;WORLD_SIZE=2" << "MASTER_PORT=70000";
        QTest::newRow("local rank") << ok + "RANK=0;WORLD_SIZE=2;LOCAL_RANK=2;LOCAL_WORLD_SIZE=2" << "LOCAL_RANK=2";
        QTest::newRow("local world") << ok + "RANK=0;WORLD_SIZE=2;LOCAL_WORLD_SIZE=3" << "LOCAL_WORLD_SIZE=3";
        QTest::newRow("restart count") << ok + "RANK=0;WORLD_SIZE=2;TORCHELASTIC_RESTART_COUNT=x"
                                       << "TORCHELASTIC_RESTART_COUNT='x'";
    }
    void environmentErrorsNameTheVariable() {
        QFETCH(QString, vars);
        QFETCH(QString, named);
        std::map<std::string, std::string> m;
        for (const auto& kv : vars.split(';', Qt::SkipEmptyParts)) {
            const auto eq = kv.indexOf('=');
            m[kv.left(eq).toStdString()] = kv.mid(eq + 1).toStdString();
        }
        try {
            world_from_environment(lookup(m));
            QFAIL("no error");
        } catch (const ConfigError& e) {
            QVERIFY2(QString(e.what()).contains(named), e.what());
        }
    }

    void launchPlanRanksAcrossMachines() {
        LaunchPlan plan;
        plan.nproc_per_node = 4;
        plan.nnodes = 3;
        plan.node_rank = 2;
        plan.master_addr = "10.0.0.1";
        plan.master_port = 29500;
        validate(plan);
        QCOMPARE(worker_world(plan, 0).rank, 8);
        QCOMPARE(worker_world(plan, 3).rank, 11);
        const auto w = worker_world(plan, 1);
        QCOMPARE(w.rank, 9);
        QCOMPARE(w.world_size, 12);
        QCOMPARE(w.local_rank, 1);
        QCOMPARE(w.local_world_size, 4);
        QCOMPARE(w.node_rank, 2);
        // What a worker gets is what world_from_environment reads back.
        std::map<std::string, std::string> env;
        for (const auto& [k, v] : worker_environment(w)) env[k] = v;
        const auto back = world_from_environment(lookup(env));
        QCOMPARE(back->rank, 9);
        QCOMPARE(back->world_size, 12);
        QCOMPARE(back->master_addr, std::string("10.0.0.1"));
        QCOMPARE(back->master_port, 29500);
        QCOMPARE(back->node_rank, 2);
    }

    void launchPlanErrorsNameTheOption_data() {
        QTest::addColumn<int>("nproc");
        QTest::addColumn<int>("nnodes");
        QTest::addColumn<int>("nodeRank");
        QTest::addColumn<QString>("addr");
        QTest::addColumn<int>("port");
        QTest::addColumn<QString>("named");
        QTest::newRow("nproc 0") << 0 << 1 << 0 << "" << 0 << "--nproc-per-node";
        QTest::newRow("nnodes 0") << 1 << 0 << 0 << "" << 0 << "--nnodes";
        QTest::newRow("node rank") << 1 << 2 << 2 << "h" << 5 << "--node-rank";
        QTest::newRow("no addr") << 1 << 2 << 0 << "" << 5 << "--master-addr";
        QTest::newRow("no port") << 1 << 2 << 0 << "h" << 0 << "--master-port";
        QTest::newRow("bad port") << 1 << 1 << 0 << "" << 65536 << "--master-port";
    }
    void launchPlanErrorsNameTheOption() {
        QFETCH(int, nproc);
        QFETCH(int, nnodes);
        QFETCH(int, nodeRank);
        QFETCH(QString, addr);
        QFETCH(int, port);
        QFETCH(QString, named);
        LaunchPlan plan{nproc, nnodes, nodeRank, addr.toStdString(), port};
        try {
            validate(plan);
            QFAIL("no error");
        } catch (const ConfigError& e) {
            QVERIFY2(QString(e.what()).contains(named), e.what());
        }
    }

    void freePortIsFree() {
        const int port = pick_free_port();
        QVERIFY(port > 0 && port < 65536);
        // Nothing listens there: a connection is refused.
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<std::uint16_t>(port));
        ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
        QVERIFY(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0);
        ::close(fd);
    }

    void backendChoice() {
        // The process group takes the run's --backend as RunConfig holds it: one
        // enum, parsed and named by the option table (an unknown one: test_config,
        // and test_data_parallel through accum-run).
        static_assert(std::is_same_v<dist::Backend, accum::Backend>);
        QVERIFY(accum::parse_choice<Backend>("gloo") == Backend::Gloo);
        QCOMPARE(accum::to_string(Backend::Nccl), std::string("nccl"));
        QVERIFY(backend_built(Backend::Gloo)); // libgloo-dev is in the set-up
        QCOMPARE(resolve_backend(Backend::Auto, false), Backend::Gloo);
        QCOMPARE(resolve_backend(Backend::Gloo, false), Backend::Gloo);
        // NCCL never serves a model on the CPU, and not at all without NCCL in the build.
        try {
            resolve_backend(Backend::Nccl, false);
            QFAIL("no error");
        } catch (const ConfigError& e) {
            QVERIFY2(QString(e.what()).contains("--backend nccl"), e.what());
        }
        if (!backend_built(Backend::Nccl)) QVERIFY_THROWS_EXCEPTION(ConfigError, resolve_backend(Backend::Nccl, true));
        QVERIFY_THROWS_EXCEPTION(ConfigError, parse_dist_timeout(0));
        QVERIFY_THROWS_EXCEPTION(ConfigError, parse_dist_timeout(-3));
        QCOMPARE(parse_dist_timeout(60).count(), 60000LL);
        QCOMPARE(parse_dist_timeout(0.25).count(), 250LL);
        // A group that cannot be joined is refused before anything is reached,
        // naming what is wrong with it: here an unresolved backend, or a rank
        // outside the world.
        GroupOptions bad;
        bad.world.world_size = 2;
        bad.world.rank = 0;
        bad.world.master_addr = "127.0.0.1";
        bad.world.master_port = 1;
        bad.backend = Backend::Auto;
        for (const int rank : {0, 2}) {
            bad.world.rank = rank;
            if (rank == 2) bad.backend = Backend::Gloo;
            try {
                ProcessGroup::connect(bad);
                QFAIL("no error");
            } catch (const ConfigError& e) {
                QVERIFY2(QString(e.what()).contains("rank " + QString::number(rank) + " of 2") &&
                             QString(e.what()).contains("not a group that can be joined"),
                         e.what());
            }
        }
    }

    // ------------------------------------------------ failures by their type

    // A failure's kind comes from the exception's type, never its wording:
    // c10d's client with nothing listening throws c10d::TimeoutError (both
    // LibTorch lines); the store client's own errors (store_client.h) say
    // which they are; 2.x's typed c10 errors go by their type; an exception of
    // no known type is Failed whatever its text says. Gloo's I/O errors, which
    // have one type for a timeout and a lost connection, are told apart by
    // whether the operation had waited its timeout out: stalledPeerIsATimeout
    // and killedPeerSurfacesAsTypedError provoke both.
    void classifierGoesByType() {
        auto kind = [](const std::exception& e, bool waited_out = false) {
            return QString(failure_kind_name(classify_failure(e, waited_out)));
        };
        c10d::TCPStoreOptions so;
        so.port = static_cast<std::uint16_t>(pick_free_port());
        so.isServer = false;
        so.waitWorkers = false;
        so.timeout = std::chrono::milliseconds(300);
        try {
            c10d::TCPStore store("127.0.0.1", so);
            QFAIL("connected to a port nobody listens on");
        } catch (const std::exception& e) {
            QVERIFY2(compat::c10d_error_type(e) == compat::C10dErrorType::Timeout, e.what());
            QCOMPARE(kind(e), QString("timeout"));
        }
        QCOMPARE(kind(StoreError(StoreError::Kind::Timeout, "the store did not answer within 3 s")), QString("timeout"));
        QCOMPARE(kind(StoreError(StoreError::Kind::Closed, "the store: Broken pipe")), QString("peer-lost"));
        const std::runtime_error worded("Read error [127.0.0.1]:1: Connection reset by peer; timed out");
        QCOMPARE(kind(worded), QString("failed"));
        QCOMPARE(kind(worded, true), QString("failed"));
#if ACCUM_TORCH_AT_LEAST(2, 0)
        try {
            C10_THROW_ERROR(DistNetworkError, "Connection reset by peer");
        } catch (const std::exception& e) {
            QCOMPARE(kind(e), QString("peer-lost"));
        }
        try {
            C10_THROW_ERROR(DistStoreError, "Socket Timeout");
        } catch (const std::exception& e) {
            QCOMPARE(kind(e), QString("timeout"));
        }
#endif
    }

    // ------------------------------------------------ sharding

    // Reference shards printed by Python (Debian's python3-torch 1.13):
    //   perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed + epoch)).tolist()
    //   s = DistributedSampler(range(n), num_replicas=N, rank=r, shuffle=True, seed=seed, drop_last=False)
    //   s.set_epoch(epoch); list(s)
    // DistributedSampler draws the same permutation itself, then pads and strides.
    void shardingMatchesDistributedSampler_data() {
        QTest::addColumn<QVector<qint64>>("perm");
        QTest::addColumn<int>("world");
        QTest::addColumn<QVector<QVector<qint64>>>("shards");
        QTest::newRow("n=10 N=3 seed=0 epoch=0")
            << QVector<qint64>{4, 1, 7, 5, 3, 9, 0, 8, 6, 2} << 3
            << QVector<QVector<qint64>>{{4, 5, 0, 2}, {1, 3, 8, 4}, {7, 9, 6, 1}};
        QTest::newRow("n=7 N=4 seed=42 epoch=1")
            << QVector<qint64>{3, 1, 2, 4, 5, 0, 6} << 4 << QVector<QVector<qint64>>{{3, 5}, {1, 0}, {2, 6}, {4, 3}};
        QTest::newRow("n=2 N=5 seed=7 epoch=0 (padding longer than the data)")
            << QVector<qint64>{1, 0} << 5 << QVector<QVector<qint64>>{{1}, {0}, {1}, {0}, {1}};
        QTest::newRow("n=12 N=3 seed=1 epoch=2 (no padding)")
            << QVector<qint64>{10, 9, 1, 6, 4, 11, 3, 7, 2, 0, 8, 5} << 3
            << QVector<QVector<qint64>>{{10, 6, 3, 0}, {9, 4, 7, 8}, {1, 11, 2, 5}};
        QTest::newRow("n=1 N=2 seed=0 epoch=0") << QVector<qint64>{0} << 2 << QVector<QVector<qint64>>{{0}, {0}};
    }
    void shardingMatchesDistributedSampler() {
        QFETCH(QVector<qint64>, perm);
        QFETCH(int, world);
        QFETCH(QVector<QVector<qint64>>, shards);
        const std::vector<std::int64_t> order(perm.begin(), perm.end());
        for (int r = 0; r < world; ++r) {
            const auto got = shard(order, r, world);
            QCOMPARE(QVector<qint64>(got.begin(), got.end()), shards[r]);
            QCOMPARE(static_cast<std::int64_t>(got.size()), shard_length(perm.size(), world));
        }
    }

    // ARCHITECTURE.md I14: the ranks' j-th micro-batches of B together are the
    // j-th micro-batch of N·B of one rank, whenever N·B divides the padded length.
    void shardsInterleaveIntoTheSingleRunsBatches() {
        std::vector<std::int64_t> order(96);
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int64_t>((i * 37) % 96);
        const int world = 2, b = 8;
        const auto s0 = shard(order, 0, world), s1 = shard(order, 1, world);
        for (std::size_t j = 0; j < s0.size() / b; ++j) {
            std::vector<std::int64_t> together(s0.begin() + j * b, s0.begin() + (j + 1) * b);
            together.insert(together.end(), s1.begin() + j * b, s1.begin() + (j + 1) * b);
            std::vector<std::int64_t> single(order.begin() + j * world * b, order.begin() + (j + 1) * world * b);
            std::sort(together.begin(), together.end());
            std::sort(single.begin(), single.end());
            QCOMPARE(together, single);
        }
        QCOMPARE(shard({}, 0, 3).size(), std::size_t{0});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, shard(order, 2, 2));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, shard(order, 0, 0));
    }

    // ------------------------------------------------ launcher

    void launcherGivesEveryWorkerItsRank() {
        QTemporaryDir dir;
        auto o = worker_launch(2, {"env", dir.path()});
        o.plan.nnodes = 2;
        o.plan.node_rank = 1;
        o.plan.master_addr = "127.0.0.1";
        o.plan.master_port = pick_free_port();
        o.environment = {{"ACCUM_TEST_EXTRA", "yes"}, {"RANK", "99"}}; // RANK is the launcher's
        const auto r = launch_workers(o);
        QCOMPARE(r.exit_code, 0);
        QCOMPARE(r.failed_rank, -1);
        QCOMPARE(r.workers.size(), std::size_t{2});
        for (int local = 0; local < 2; ++local) {
            const int rank = 2 + local; // node 1 × 2 per node + local
            const auto text = read_text(dir.filePath(QString("rank-%1.txt").arg(rank)).toStdString());
            QVERIFY2(text.find("RANK=" + std::to_string(rank) + "\n") != std::string::npos, text.c_str());
            QVERIFY(text.find("LOCAL_RANK=" + std::to_string(local) + "\n") != std::string::npos);
            QVERIFY(text.find("WORLD_SIZE=4\n") != std::string::npos);
            QVERIFY(text.find("LOCAL_WORLD_SIZE=2\n") != std::string::npos);
            QVERIFY(text.find("GROUP_RANK=1\n") != std::string::npos);
            QVERIFY(text.find("MASTER_PORT=" + std::to_string(o.plan.master_port) + "\n") != std::string::npos);
            QVERIFY(text.find("ACCUM_TEST_EXTRA=yes\n") != std::string::npos);
            QCOMPARE(r.workers[local].rank, rank);
        }
        verify_all_reaped(r);
    }

    // The other ranks would run for a minute: stopped by the launcher's SIGTERM,
    // they did not run out their time.
    void launcherStopsTheRestWhenOneFails() {
        const auto r = launch_workers(worker_launch(3, {"exit", "3", "1", "200"}));
        QCOMPARE(r.exit_code, 3);
        QCOMPARE(r.failed_rank, 1);
        QCOMPARE(r.workers[1].exit_code, 3);
        for (int i : {0, 2}) {
            QCOMPARE(r.workers[i].signal, SIGTERM);
            QVERIFY(r.workers[i].stopped_by_launcher);
        }
        QVERIFY2(QString::fromStdString(r.message).contains("rank 1") &&
                     QString::fromStdString(r.message).contains("exited with code 3"),
                 r.message.c_str());
        verify_all_reaped(r);
    }

    void launcherReportsADeathBySignal() {
        const auto r = launch_workers(worker_launch(2, {"signal", QString::number(SIGKILL), "0", "200"}));
        QCOMPARE(r.exit_code, 6); // a rank lost: a distributed failure (ARCHITECTURE.md §3.4, exit codes)
        QCOMPARE(r.failed_rank, 0);
        QCOMPARE(r.workers[0].signal, SIGKILL);
        QVERIFY2(QString::fromStdString(r.message).contains("SIGKILL"), r.message.c_str());
        QCOMPARE(r.workers[1].signal, SIGTERM);
        verify_all_reaped(r);
    }

    void launcherKillsWhatIgnoresSigterm() {
        QTemporaryDir dir;
        auto o = worker_launch(2, {"ignore", dir.path()});
        o.stop_grace = std::chrono::milliseconds(500);
        const auto r = launch_workers(o);
        QCOMPARE(r.exit_code, 3);
        QCOMPARE(r.failed_rank, 0);
        QCOMPARE(r.workers[1].signal, SIGKILL);
        verify_all_reaped(r);
    }

    void launcherReportsAProgramThatCannotStart() {
        LaunchOptions o;
        o.executable = "/nonexistent/accum-worker";
        o.plan.nproc_per_node = 2;
        const auto r = launch_workers(o);
        QCOMPARE(r.exit_code, 127);
        QCOMPARE(r.failed_rank, 0);
        QVERIFY2(QString::fromStdString(r.message).contains("could not be started"), r.message.c_str());
        QVERIFY(QString::fromStdString(r.workers[0].start_error).contains("No such file"));
        QCOMPARE(r.workers[1].pid, -1);
    }

    void launcherPassesOnSigterm() {
        QTemporaryDir dir;
        auto o = worker_launch(2, {"trap", dir.path()});
        // Once both workers are ready, SIGTERM to this process (the launcher's).
        std::atomic<bool> sent{false};
        std::thread sender([&] {
            if (testing::wait_until(
                    [&] { return QFile::exists(dir.filePath("ready-0")) && QFile::exists(dir.filePath("ready-1")); },
                    std::chrono::seconds(20))) {
                ::kill(::getpid(), SIGTERM);
                sent = true;
            }
        });
        const auto r = launch_workers(o);
        sender.join();
        QVERIFY(sent);
        QCOMPARE(r.interrupt_signal, SIGTERM);
        QCOMPARE(r.exit_code, 128 + SIGTERM);
        QCOMPARE(r.failed_rank, -1);
        for (int rank : {0, 1}) {
            QCOMPARE(read_text(dir.filePath(QString("got-%1").arg(rank)).toStdString()), std::to_string(SIGTERM) + "\n");
            QCOMPARE(r.workers[rank].exit_code, 128 + SIGTERM);
        }
        verify_all_reaped(r);
    }

};

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "--worker") return worker_main(argc - 2, argv + 2);
    QCoreApplication app(argc, argv);
    TestDistributedLaunch test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_distributed_launch.moc"
