// The data-parallel module (engine/src/distributed/): environment and launch
// plan, the launcher, sharding against DistributedSampler, and the c10d process
// group with the bucketed gradient sync, between processes on 127.0.0.1.
//
// The multi-process tests start this executable again in a worker mode
// (`test_distributed --worker SCENARIO …`): as ranks through the launcher, or
// one by one with QProcess when a test must watch a single rank. Ports are
// picked free; every wait is bounded; every process a test starts is ended
// (ProcessGuard kills what is still running when the test leaves).
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
#include "distributed/process_group.h"
#include "data/sharding.h"
#include "distributed/world.h"
#include "torch_compat.h"
#include "wait_until.h"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

using namespace accum;
using namespace accum::dist;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string self_exe() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

// The threads of this process now: the entries of /proc/self/task.
int thread_count() {
    int n = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
    return n;
}

// Waits (bounded) until this process has at most `target` threads: the count then.
int threads_settle(int target, int ms) {
    int n = thread_count();
    testing::wait_until([&] { return (n = thread_count()) <= target; }, std::chrono::milliseconds(ms));
    return n;
}

std::string counts_text(int before, const std::vector<int>& after) {
    std::ostringstream s;
    s << "threads before: " << before << ", after each failure:";
    for (int n : after) s << ' ' << n;
    return s.str();
}

// ---------------------------------------------------------------- worker mode

// The gradients of the MLP 784-256-128-10 (models/mlp.cpp: three Linear layers,
// weight then bias), plus a non-contiguous one: 235,146 + 15 floats.
std::vector<std::vector<std::int64_t>> mlp_shapes() {
    return {{256, 784}, {256}, {128, 256}, {128}, {10, 128}, {10}};
}

// Rank r's gradient i: 0.001·k + (r + 1) + i at flat position k. The mean over
// N ranks is 0.001·k + (N + 1)/2 + i.
std::vector<at::Tensor> rank_gradients(int rank) {
    std::vector<at::Tensor> grads;
    const auto shapes = mlp_shapes();
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        std::int64_t n = 1;
        for (auto d : shapes[i]) n *= d;
        grads.push_back(at::arange(n, at::kFloat).mul(0.001).add(rank + 1 + static_cast<double>(i)).reshape(shapes[i]));
    }
    grads.push_back(at::full({5, 3}, static_cast<double>(rank + 1)).t()); // non-contiguous, 3 × 5
    return grads;
}

std::vector<at::Tensor> expected_mean(int world) {
    std::vector<at::Tensor> out;
    const auto shapes = mlp_shapes();
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        std::int64_t n = 1;
        for (auto d : shapes[i]) n *= d;
        out.push_back(
            at::arange(n, at::kFloat).mul(0.001).add((world + 1) / 2.0 + static_cast<double>(i)).reshape(shapes[i]));
    }
    out.push_back(at::full({3, 5}, (world + 1) / 2.0));
    return out;
}

bool all_close(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b, std::string& why) {
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!a[i].sizes().equals(b[i].sizes())) {
            why = "tensor " + std::to_string(i) + " changed shape";
            return false;
        }
        if (!at::allclose(a[i], b[i], 1e-6, 1e-6)) {
            why = "tensor " + std::to_string(i) + " differs by " +
                  std::to_string((a[i] - b[i]).abs().max().item<double>());
            return false;
        }
    }
    return true;
}

GroupOptions options_from_environment(double timeout_s) {
    const auto world = world_from_environment();
    if (!world) throw std::runtime_error("worker: RANK / WORLD_SIZE not set");
    GroupOptions o;
    o.world = *world;
    o.backend = resolve_backend(Backend::Auto, false);
    o.timeout = parse_dist_timeout(timeout_s);
    return o;
}

int report(const DistributedError& e, Clock::time_point since) {
    std::printf("ERROR kind=%s rank=%d peer=%d seconds=%.3f\nMESSAGE %s\n", failure_kind_name(e.kind()), e.rank(),
                e.peer(), seconds_since(since), e.what());
    std::fflush(stdout);
    return 6;
}

// Correctness of the sync, the bucketing, broadcast, scalars; exit 0 when all hold.
int worker_allreduce(double timeout_s) {
    auto group = ProcessGroup::connect(options_from_environment(timeout_s));
    const int rank = group->rank(), world = group->world_size();
    auto fail = [&](const std::string& what) {
        std::fprintf(stderr, "[rank %d] %s\n", rank, what.c_str());
        return 1;
    };
    std::string why;

    // One 25 MiB bucket holds them all: one call.
    auto grads = rank_gradients(rank);
    GradientSync sync(*group);
    sync.average(grads);
    if (!all_close(grads, expected_mean(world), why)) return fail("default buckets: " + why);
    const std::int64_t floats = 256 * 784 + 256 + 128 * 256 + 128 + 10 * 128 + 10 + 15;
    if (sync.counters().calls != 1 || sync.buckets() != 1) return fail("default buckets: not one call");
    if (sync.counters().bytes != floats * 4) return fail("default buckets: bytes " + std::to_string(sync.counters().bytes));

    // 100 KiB buckets: [802,816 B] alone (above the cap), [1,024 B], [131,072 B]
    // alone, [512 + 5,120 + 40 + 60 B]: 4 calls per sync.
    GradientSync small(*group, 100 * 1024);
    for (int round = 0; round < 2; ++round) {
        grads = rank_gradients(rank);
        small.average(grads);
        if (!all_close(grads, expected_mean(world), why)) return fail("100 KiB buckets: " + why);
    }
    if (small.buckets() != 4) return fail("100 KiB buckets: " + std::to_string(small.buckets()) + " buckets");
    const auto c = small.take_counters();
    if (c.calls != 8 || c.bytes != 2 * floats * 4 || c.seconds <= 0) return fail("100 KiB buckets: counters");
    if (small.counters().calls != 0) return fail("take_counters did not reset");

    // Parameters' .grad, one of them missing on every rank (zeros are averaged).
    auto p0 = at::zeros({4}).requires_grad_(true), p1 = at::zeros({2, 2}).requires_grad_(true);
    p0.mutable_grad() = at::full({4}, static_cast<double>(rank));
    sync.average_gradients_of({p0, p1});
    if (!at::allclose(p0.grad(), at::full({4}, (world - 1) / 2.0)) || !at::equal(p1.grad(), at::zeros({2, 2})))
        return fail("average_gradients_of");

    // Extras ride in the last bucket: summed, not averaged, and one call still.
    {
        auto q0 = at::zeros({4}).requires_grad_(true), q1 = at::zeros({3}).requires_grad_(true);
        q0.mutable_grad() = at::full({4}, static_cast<double>(rank));
        q1.mutable_grad() = at::full({3}, 2.0 * rank);
        GradientSync riding(*group);
        std::vector<float> extras{1.0f, static_cast<float>(rank), rank == 0 ? 0.5f : 0.0f};
        riding.average_gradients_of({q0, q1}, extras);
        if (!at::allclose(q0.grad(), at::full({4}, (world - 1) / 2.0)) ||
            !at::allclose(q1.grad(), at::full({3}, (world - 1.0))))
            return fail("extras: gradients not averaged");
        if (extras[0] != static_cast<float>(world) || extras[1] != world * (world - 1) / 2.0f || extras[2] != 0.5f)
            return fail("extras: not summed");
        if (riding.counters().calls != 1 || riding.counters().bytes != (4 + 3 + 3) * 4)
            return fail("extras: not in the one bucket");
        // A bucket of half-precision gradients: the extras get a float bucket of their own.
        auto h = at::zeros({2}, at::kHalf).requires_grad_(true);
        h.mutable_grad() = at::full({2}, static_cast<double>(rank), at::kHalf);
        std::vector<float> more{2.0f};
        riding.average_gradients_of({h}, more);
        if (more[0] != 2.0f * world || riding.buckets() != 2) return fail("extras: half bucket");
    }

    // Gradients as views into the bucket (DDP's gradient_as_bucket_view): the
    // values are kept by bind_gradients, averaged in place, and stay views.
    {
        std::vector<at::Tensor> ps;
        for (const auto& g : rank_gradients(rank)) {
            auto p = at::zeros(g.sizes()).requires_grad_(true);
            p.mutable_grad() = g.contiguous();
            ps.push_back(p);
        }
        ps.back().mutable_grad() = at::Tensor(); // one without a gradient: zeros
        GradientSync bound(*group);
        bound.bind_gradients(ps);
        const void* first = ps.front().grad().data_ptr();
        auto expected = expected_mean(world);
        expected.back() = at::zeros({3, 5});
        // Autograd accumulates into .grad in place: so do these.
        for (std::size_t i = 0; i + 1 < ps.size(); ++i) ps[i].mutable_grad().mul_(2).div_(2);
        bound.average_gradients_of(ps);
        std::vector<at::Tensor> got;
        for (const auto& p : ps) got.push_back(p.grad());
        if (!all_close(got, expected, why)) return fail("bind_gradients: " + why);
        if (ps.front().grad().data_ptr() != first || bound.buckets() != 1) return fail("bind_gradients: not views");
    }

    // Rank 0's weights everywhere.
    std::vector<at::Tensor> params{at::full({256, 784}, static_cast<double>(rank)).requires_grad_(true),
                                   at::full({7}, rank * 10.0)};
    broadcast_tensors(*group, params);
    if (!at::equal(params[0], at::zeros({256, 784})) || !at::equal(params[1], at::zeros({7})))
        return fail("broadcast_tensors");

    // Scalars and agreement.
    if (std::abs(group->all_reduce_mean(rank + 1.0) - (world + 1) / 2.0) > 1e-12) return fail("all_reduce_mean");
    const auto m = group->all_reduce({static_cast<double>(rank), 1.0}, ReduceOp::Max);
    if (m[0] != world - 1 || m[1] != 1.0) return fail("all_reduce max");
    if (!group->all_agree(0xfeedface12345678ull)) return fail("all_agree: same value");
    if (world > 1 && group->all_agree(rank == 0 ? 1u : 2u)) return fail("all_agree: different values");
    group->barrier();
    std::printf("OK rank %d\n", rank);
    return 0;
}

// All-reduces of 4 MiB until the test kills a rank; a survivor reports how its
// error surfaced. Exit 6 on DistributedError, 1 when none comes.
int worker_loop(double timeout_s) {
    const auto start = Clock::now();
    std::unique_ptr<ProcessGroup> group;
    try {
        group = ProcessGroup::connect(options_from_environment(timeout_s));
    } catch (const DistributedError& e) {
        return report(e, start);
    }
    auto t = at::ones({1 << 20});
    for (int i = 0; i < 200000; ++i) {
        const auto before = Clock::now();
        try {
            group->all_reduce(t);
            t.fill_(1);
        } catch (const DistributedError& e) {
            return report(e, before);
        }
        if (i == 20) {
            std::printf("RUNNING\n");
            std::fflush(stdout);
        }
    }
    return 1;
}

// Joins and leaves: exit 0, or 6 with the error.
int worker_join(double timeout_s) {
    const auto start = Clock::now();
    try {
        auto group = ProcessGroup::connect(options_from_environment(timeout_s));
        group->barrier();
    } catch (const DistributedError& e) {
        return report(e, start);
    }
    std::printf("JOINED\n");
    return 0;
}

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
    const double timeout_s = argc >= 2 ? std::atof(argv[1]) : 10.0;
    try {
        if (scenario == "allreduce") return worker_allreduce(timeout_s);
        if (scenario == "loop") return worker_loop(timeout_s);
        if (scenario == "join") return worker_join(timeout_s);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "[rank %s] unexpected: %s\n", rank.c_str(), e.what());
        return 1;
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

// A rank started on its own, with the rank variables; killed if still running
// when the guard goes.
struct Rank {
    std::unique_ptr<QProcess> process = std::make_unique<QProcess>();
    Clock::time_point started;
    ~Rank() {
        if (process->state() != QProcess::NotRunning) {
            process->kill();
            process->waitForFinished(5000);
        }
    }
};

std::unique_ptr<Rank> start_rank(int rank, int world, int port, const QStringList& args,
                                 const QStringList& extra_env = {}) {
    auto r = std::make_unique<Rank>();
    auto env = QProcessEnvironment::systemEnvironment();
    for (const auto& kv : extra_env) env.insert(kv.section('=', 0, 0), kv.section('=', 1));
    env.insert("RANK", QString::number(rank));
    env.insert("LOCAL_RANK", QString::number(rank));
    env.insert("WORLD_SIZE", QString::number(world));
    env.insert("LOCAL_WORLD_SIZE", QString::number(world));
    env.insert("MASTER_ADDR", "127.0.0.1");
    env.insert("MASTER_PORT", QString::number(port));
    r->process->setProcessEnvironment(env);
    r->process->setProcessChannelMode(QProcess::SeparateChannels);
    r->process->setProgram(QString::fromStdString(self_exe()));
    r->process->setArguments(QStringList{"--worker"} + args);
    r->started = Clock::now();
    r->process->start();
    return r;
}

// Waits (bounded) until the rank prints `line`; false on timeout or exit.
bool wait_for_line(Rank& r, const QByteArray& line, int ms) {
    QByteArray seen;
    const auto until = Clock::now() + std::chrono::milliseconds(ms);
    while (Clock::now() < until) {
        r.process->waitForReadyRead(50);
        seen += r.process->readAllStandardOutput();
        if (seen.contains(line)) return true;
        if (r.process->state() == QProcess::NotRunning) return false;
    }
    return false;
}

struct Outcome {
    bool finished = false;
    int exit_code = -1;
    double seconds = 0;
    QByteArray out;
    QByteArray err;
    std::map<std::string, std::string> fields; // from the "ERROR k=v …" line
};

Outcome finish(Rank& r, int ms) {
    Outcome o;
    o.finished = r.process->waitForFinished(ms);
    o.seconds = seconds_since(r.started);
    o.out = r.process->readAllStandardOutput();
    o.err = r.process->readAllStandardError();
    if (o.finished && r.process->exitStatus() == QProcess::NormalExit) o.exit_code = r.process->exitCode();
    for (const auto& line : o.out.split('\n')) {
        if (!line.startsWith("ERROR ")) continue;
        for (const auto& kv : line.mid(6).split(' ')) {
            const auto eq = kv.indexOf('=');
            if (eq > 0) o.fields[kv.left(eq).toStdString()] = kv.mid(eq + 1).toStdString();
        }
    }
    return o;
}

// How long the rank took to see its failure, from its ERROR line: a figure for
// bench/latencies.py, not a check (the kind of failure is the check).
void bench_figure(const char* name, const Outcome& o) {
    const auto seconds = o.fields.find("seconds");
    if (seconds != o.fields.end()) std::printf("BENCH %s %s s\n", name, seconds->second.c_str());
}

// A socket that listens on 127.0.0.1 and never accepts or answers.
class SilentListener {
public:
    SilentListener() {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = 0;
        ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
        socklen_t len = sizeof a;
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0 ||
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
            port_ = -1;
        else
            port_ = ntohs(a.sin_port);
    }
    ~SilentListener() {
        if (fd_ >= 0) ::close(fd_);
    }
    int port() const { return port_; }

private:
    int fd_ = -1;
    int port_ = -1;
};

std::string read_text(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

LaunchOptions worker_launch(int nproc, const QStringList& args) {
    LaunchOptions o;
    o.executable = self_exe();
    o.arguments = {"--worker"};
    for (const auto& a : args) o.arguments.push_back(a.toStdString());
    o.plan.nproc_per_node = nproc;
    o.stop_grace = std::chrono::seconds(5);
    return o;
}

void verify_all_reaped(const LaunchResult& r) {
    for (const auto& w : r.workers)
        if (w.pid > 0) QVERIFY2(process_gone(w.pid), qPrintable(QString("pid %1 still exists").arg(w.pid)));
}

} // namespace

class TestDistributed : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // ------------------------------------------------ environment and plans

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
        QCOMPARE(world_size(plan), 12);
        QCOMPARE(global_rank(plan, 0), 8);
        QCOMPARE(global_rank(plan, 3), 11);
        const auto w = worker_world(plan, 1);
        QCOMPARE(w.rank, 9);
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

    // ------------------------------------------------ the store's wire protocol

    // torchrun's agent serves the store and keeps it over restarts: the ranks
    // of every attempt join it as clients (rank 0 too) and meet under rank 0's
    // fresh token — the second attempt's rank 1, started first, finds the first
    // attempt's token and roster and must not take them for its own.
    void agentStoreServesEveryAttempt() {
        // The stand-in agent is this build's own store (torchrun 2.x's: test_torchrun).
        const int port = pick_free_port();
        c10d::TCPStoreOptions so;
        so.port = static_cast<std::uint16_t>(port);
        so.isServer = true;
        so.numWorkers = 1;
        so.waitWorkers = false;
        so.timeout = std::chrono::seconds(30);
        auto agent = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", so); // the agent's, on MASTER_PORT
        for (int attempt = 0; attempt < 2; ++attempt) {
            const QStringList env{"TORCHELASTIC_USE_AGENT_STORE=True",
                                  "TORCHELASTIC_RESTART_COUNT=" + QString::number(attempt)};
            // Rank 1 first: rank 0 starts once rank 1 is at the store (its probe
            // key is there), where the first attempt's leader key still is.
            const auto keys = agent->getNumKeys();
            auto r1 = start_rank(1, 2, port, {"allreduce", "20"}, env);
            if (attempt == 1) QTRY_VERIFY_WITH_TIMEOUT(agent->getNumKeys() > keys, 30000);
            auto r0 = start_rank(0, 2, port, {"allreduce", "20"}, env);
            for (auto* r : {r0.get(), r1.get()}) {
                const auto o = finish(*r, 60000);
                QVERIFY2(o.finished, "a rank hung");
                QVERIFY2(o.exit_code == 0, (o.out + o.err).constData());
            }
        }
        QVERIFY(agent->check({"accum/leader"})); // they met in the agent's store
    }

    // A program on the port that accepts and never answers is not a store: c10d's
    // client would wait on it for good; the rank says so within its answer
    // timeout (3 s), long before --dist-timeout (60 s; the rank is waited for 30 s).
    void silentProgramIsNotAStore() {
        SilentListener silent;
        QVERIFY(silent.port() > 0);
        auto r = start_rank(1, 2, silent.port(), {"join", "60"});
        const auto o = finish(*r, 30000);
        QVERIFY2(o.finished, "the rank waited on a program that is not a store");
        QVERIFY2(o.exit_code == 6, (o.out + o.err).constData());
        QCOMPARE(o.fields.at("kind"), std::string("unreachable"));
        QVERIFY2(o.out.contains("is not rank 0's store"), o.out.constData());
    }

    // ------------------------------------------------ process group

    void allReduceAcrossRanks_data() {
        QTest::addColumn<int>("ranks");
        QTest::newRow("2 ranks") << 2;
        QTest::newRow("3 ranks") << 3;
    }
    void allReduceAcrossRanks() {
        QFETCH(int, ranks);
        const auto r = launch_workers(worker_launch(ranks, {"allreduce", "20"}));
        QVERIFY2(r.exit_code == 0, r.message.c_str());
        for (const auto& w : r.workers) QCOMPARE(w.exit_code, 0);
    }

    // kill -9 of one rank while all-reduces run: every survivor gets a
    // DistributedError naming the lost rank, as a lost peer (its sockets
    // close), not as a timeout (300 s; the survivors are waited for a minute).
    void killedPeerSurfacesAsTypedError_data() {
        QTest::addColumn<int>("world");
        QTest::addColumn<int>("victim");
        QTest::newRow("2 ranks, rank 1 killed") << 2 << 1;
        QTest::newRow("2 ranks, rank 0 (the store) killed") << 2 << 0;
        QTest::newRow("3 ranks, rank 1 killed") << 3 << 1;
    }
    void killedPeerSurfacesAsTypedError() {
        QFETCH(int, world);
        QFETCH(int, victim);
        const int port = pick_free_port();
        const double timeout_s = 300;
        std::vector<std::unique_ptr<Rank>> ranks;
        for (int i = 0; i < world; ++i) ranks.push_back(start_rank(i, world, port, {"loop", QString::number(timeout_s)}));
        for (auto& r : ranks) QVERIFY2(wait_for_line(*r, "RUNNING", 20000), "the ranks did not start all-reducing");
        ranks[victim]->process->kill(); // SIGKILL
        for (int i = 0; i < world; ++i) {
            if (i == victim) continue;
            const auto o = finish(*ranks[i], 60000);
            QVERIFY2(o.finished, "a survivor hung");
            QVERIFY2(o.exit_code == 6, o.out.constData());
            QCOMPARE(o.fields.at("kind"), std::string("peer-lost"));
            QCOMPARE(o.fields.at("rank"), std::to_string(i));
            bench_figure("distributed.peer_lost", o);
            const QByteArray named = QByteArray::number(victim) + " (pid " +
                                     QByteArray::number(static_cast<qint64>(ranks[victim]->process->processId()));
            if (world == 2) {
                QCOMPARE(o.fields.at("peer"), std::to_string(victim));
                QVERIFY2(o.out.contains("rank " + named + ") was lost"), o.out.constData());
            } else {
                // With three ranks, another survivor that has already ended may be named too.
                QVERIFY2(o.out.contains(named), o.out.constData());
            }
        }
    }

    // A peer that stops (SIGSTOP) mid-all-reduce keeps its sockets open: the
    // survivor's collective waits the timeout out and fails as a timeout (Gloo's
    // I/O error after the whole timeout), naming the stalled rank, well within
    // the timeout + 10 s. Rank 0 stopped stops the store too: the survivor's
    // look for a published failure gets no answer, and waits for it at most
    // the answer timeout (store_client.h).
    void stalledPeerIsATimeout_data() {
        QTest::addColumn<int>("victim");
        QTest::newRow("rank 1 stopped") << 1;
        QTest::newRow("rank 0 (the store) stopped") << 0;
    }
    void stalledPeerIsATimeout() {
        QFETCH(int, victim);
        const int port = pick_free_port();
        const double timeout_s = 2;
        std::vector<std::unique_ptr<Rank>> ranks;
        for (int i = 0; i < 2; ++i) ranks.push_back(start_rank(i, 2, port, {"loop", QString::number(timeout_s)}));
        for (auto& r : ranks) QVERIFY2(wait_for_line(*r, "RUNNING", 20000), "the ranks did not start all-reducing");
        const auto stopped = static_cast<pid_t>(ranks[victim]->process->processId());
        QCOMPARE(::kill(stopped, SIGSTOP), 0);
        const auto o = finish(*ranks[1 - victim], static_cast<int>((timeout_s + 10) * 1000));
        ::kill(stopped, SIGKILL);
        ::kill(stopped, SIGCONT);
        QVERIFY2(o.finished, "the survivor hung");
        QVERIFY2(o.exit_code == 6, o.out.constData());
        QCOMPARE(o.fields.at("kind"), std::string("timeout"));
        QVERIFY2(o.out.contains("did not complete within"), o.out.constData());
        // Within the timeout + 10 s: finish() waited that long at most.
        std::printf("BENCH distributed.stalled_peer %s s\n", o.fields.at("seconds").c_str());
    }

    void portInUseIsAClearError() {
        SilentListener taken;
        QVERIFY(taken.port() > 0);
        auto r = start_rank(0, 2, taken.port(), {"join", "5"});
        const auto o = finish(*r, 20000);
        QVERIFY(o.finished);
        QVERIFY2(o.exit_code == 6, o.out.constData());
        QCOMPARE(o.fields.at("kind"), std::string("address-in-use"));
        QVERIFY2(o.out.contains("cannot listen on port " + QByteArray::number(taken.port())), o.out.constData());
        bench_figure("distributed.port_in_use", o);
    }

    void silentMasterEndsWithinTheTimeout() {
        SilentListener silent; // accepts connections in the kernel, never answers
        QVERIFY(silent.port() > 0);
        const double timeout_s = 1;
        auto r = start_rank(1, 2, silent.port(), {"join", QString::number(timeout_s)});
        const auto o = finish(*r, static_cast<int>((timeout_s + 15) * 1000));
        QVERIFY2(o.finished, "the rank hung on a silent master");
        QVERIFY2(o.exit_code == 6, (o.out + o.err).constData());
        QCOMPARE(o.fields.at("kind"), std::string("unreachable"));
        bench_figure("distributed.silent_master", o);
    }

    void noMasterListeningEndsWithinTheTimeout() {
        const double timeout_s = 1;
        auto r = start_rank(1, 2, pick_free_port(), {"join", QString::number(timeout_s)});
        const auto o = finish(*r, static_cast<int>((timeout_s + 15) * 1000));
        QVERIFY2(o.finished, "the rank hung without a master");
        QVERIFY2(o.exit_code == 6, (o.out + o.err).constData());
        QCOMPARE(o.fields.at("kind"), std::string("unreachable"));
        bench_figure("distributed.no_master", o);
    }

    void missingRankIsNamed() {
        const double timeout_s = 1;
        auto r = start_rank(0, 3, pick_free_port(), {"join", QString::number(timeout_s)});
        const auto o = finish(*r, static_cast<int>((timeout_s + 15) * 1000));
        QVERIFY2(o.finished, "rank 0 hung waiting for the others");
        QVERIFY2(o.exit_code == 6, (o.out + o.err).constData());
        QCOMPARE(o.fields.at("kind"), std::string("timeout"));
        QCOMPARE(o.fields.at("peer"), std::string("1"));
        QVERIFY2(o.out.contains("ranks 1, 2 did not arrive"), o.out.constData());
        bench_figure("distributed.missing_rank", o);
    }

    // ------------------------------------------------ a process that lives on

    // The studio hosts run after run: a join its caller gives up (a stop, or
    // the workers gone: `abandon`) must not leave its thread behind until
    // --dist-timeout (20 s here) has passed. Joins given up while rank 0 waits
    // for the others, while rank 1 finds nothing listening, and while rank 1
    // waits for a master that accepts and never answers: each time, within
    // 2 s of the error, the thread count is back where it was.
    void abandonedJoinsLeaveNoThread() {
        SilentListener silent;
        QVERIFY(silent.port() > 0);
        const int before = thread_count();
        std::vector<int> after;
        for (int round = 0; round < 2; ++round) {
            for (const int rank : {0, 1, 1}) {
                const bool to_silent = rank == 1 && after.size() % 3 == 2;
                GroupOptions o;
                o.world.rank = rank;
                o.world.local_rank = rank;
                o.world.world_size = 2;
                o.world.local_world_size = 2;
                o.world.master_port = to_silent ? silent.port() : pick_free_port();
                o.backend = resolve_backend(Backend::Auto, false);
                o.timeout = std::chrono::seconds(20);
                const auto start = Clock::now();
                o.abandon = [start] { return Clock::now() - start > std::chrono::milliseconds(300); };
                try {
                    ProcessGroup::connect(o);
                    QFAIL("joined a group nobody else joined");
                } catch (const DistributedError& e) {
                    QVERIFY2(e.kind() == DistributedError::Kind::Failed, e.what());
                }
                after.push_back(threads_settle(before, 2000));
            }
        }
        const std::string counts = counts_text(before, after);
        for (int n : after) QVERIFY2(n <= before, counts.c_str());
        std::printf("%s\n", counts.c_str());
    }

    // A group that joined and then failed (its peer gone: the next all-reduce
    // fails) is destroyed off the caller's thread, not leaked: Gloo's threads
    // and the store's end within seconds, and nothing grows from one to the next.
    void failedGroupsLeaveNoThread() {
        // What a first use starts once (LibTorch's, Qt's) is not a failure's.
        {
            auto warm = start_rank(1, 2, pick_free_port(), {"exit", "0", "1", "0"});
            QVERIFY(finish(*warm, 10000).finished);
            (void)at::ones({4}).sum().item<float>();
        }
        const int before = thread_count();
        std::vector<int> after;
        for (int round = 0; round < 3; ++round) {
            const int port = pick_free_port();
            auto peer = start_rank(1, 2, port, {"join", "10"});
            GroupOptions o;
            o.world.rank = 0;
            o.world.world_size = 2;
            o.world.local_world_size = 2;
            o.world.master_port = port;
            o.backend = resolve_backend(Backend::Auto, false);
            o.timeout = std::chrono::seconds(10);
            auto group = ProcessGroup::connect(o);
            group->barrier();
            const auto o1 = finish(*peer, 20000);
            QVERIFY2(o1.finished && o1.exit_code == 0, (o1.out + o1.err).constData());
            auto t = at::ones({4});
            try {
                group->all_reduce(t);
                QFAIL("an all-reduce with a peer gone succeeded");
            } catch (const DistributedError&) {
            }
            QVERIFY(group->failed());
            const auto destroyed = Clock::now();
            group.reset();
            std::printf("BENCH distributed.destroy_failed_group %.3f s\n", seconds_since(destroyed));
            after.push_back(threads_settle(before, 3000));
        }
        const std::string counts = counts_text(before, after);
        for (int n : after) QVERIFY2(n <= before, counts.c_str());
        std::printf("%s\n", counts.c_str());
    }
};

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "--worker") return worker_main(argc - 2, argv + 2);
    QCoreApplication app(argc, argv);
    TestDistributed test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_distributed.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
