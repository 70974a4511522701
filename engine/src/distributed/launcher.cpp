#include "distributed/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <set>

#include "accum/errors.h"
#include "accum/run_config.h"

extern char** environ;

namespace accum::dist {

namespace {

using Clock = std::chrono::steady_clock;

// Exit code of a rank that failed because another rank failed first (a
// distributed failure, ARCHITECTURE.md §3.4, exit codes): a consequence, not a cause.
constexpr int kDistributedFailureExit = 6;
// How long the launcher waits for the cause after the first failure it sees is
// only a consequence (a rank reporting a lost peer may be reaped before the peer).
constexpr auto kSettle = std::chrono::milliseconds(500);
constexpr int kPollMs = 20;

std::atomic<bool> g_launching{false};
int g_wake_fd = -1;
volatile std::sig_atomic_t g_last_signal = 0;
volatile std::sig_atomic_t g_signal_count = 0;

extern "C" void on_launcher_signal(int sig) {
    const int saved = errno;
    g_last_signal = sig;
    g_signal_count = g_signal_count + 1;
    if (g_wake_fd >= 0) {
        const char c = 1;
        [[maybe_unused]] const auto n = ::write(g_wake_fd, &c, 1);
    }
    errno = saved;
}

// Catches SIGINT and SIGTERM while the workers run; puts back what was there.
class SignalScope {
public:
    SignalScope() {
        if (::pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("launcher: pipe2 failed");
        g_wake_fd = pipe_[1];
        g_signal_count = 0;
        g_last_signal = 0;
        struct sigaction sa {};
        sa.sa_handler = on_launcher_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        ::sigaction(SIGINT, &sa, &old_int_);
        ::sigaction(SIGTERM, &sa, &old_term_);
        // A process that ignores SIGCHLD has its children reaped by the kernel,
        // and waitpid() could not tell how a worker ended.
        ::sigaction(SIGCHLD, nullptr, &old_chld_);
        if (old_chld_.sa_handler == SIG_IGN) {
            struct sigaction dfl {};
            dfl.sa_handler = SIG_DFL;
            sigemptyset(&dfl.sa_mask);
            ::sigaction(SIGCHLD, &dfl, nullptr);
        }
    }
    ~SignalScope() {
        ::sigaction(SIGINT, &old_int_, nullptr);
        ::sigaction(SIGTERM, &old_term_, nullptr);
        if (old_chld_.sa_handler == SIG_IGN) ::sigaction(SIGCHLD, &old_chld_, nullptr);
        g_wake_fd = -1;
        ::close(pipe_[0]);
        ::close(pipe_[1]);
    }
    SignalScope(const SignalScope&) = delete;
    SignalScope& operator=(const SignalScope&) = delete;

    int wake_fd() const { return pipe_[0]; }
    void drain() const {
        char buf[64];
        while (::read(pipe_[0], buf, sizeof buf) > 0) {
        }
    }

private:
    int pipe_[2] = {-1, -1};
    struct sigaction old_int_ {};
    struct sigaction old_term_ {};
    struct sigaction old_chld_ {};
};

struct Worker {
    WorkerStatus status;
    bool running = false;
};

// argv / envp kept alive for execve; built before fork (the child may only make
// async-signal-safe calls).
struct ExecImage {
    std::vector<std::string> strings_argv, strings_env;
    std::vector<char*> argv, envp;
    void finish() {
        for (auto& s : strings_argv) argv.push_back(s.data());
        argv.push_back(nullptr);
        for (auto& s : strings_env) envp.push_back(s.data());
        envp.push_back(nullptr);
    }
};

ExecImage make_image(const LaunchOptions& options, const WorldInfo& world) {
    ExecImage image;
    image.strings_argv.push_back(options.executable);
    for (const auto& a : options.arguments) image.strings_argv.push_back(a);
    auto vars = options.environment;
    for (auto& kv : worker_environment(world)) vars.push_back(std::move(kv)); // the rank variables win
    std::set<std::string> ours;
    for (const auto& [k, v] : vars) ours.insert(k);
    for (char** e = environ; e && *e; ++e) {
        const std::string entry(*e);
        const auto eq = entry.find('=');
        if (eq != std::string::npos && ours.count(entry.substr(0, eq))) continue;
        image.strings_env.push_back(entry);
    }
    std::set<std::string> written;
    for (auto it = vars.rbegin(); it != vars.rend(); ++it) // the last value of a name wins
        if (written.insert(it->first).second) image.strings_env.push_back(it->first + "=" + it->second);
    image.finish();
    return image;
}

// Forks and execs one worker. Returns its pid, or -1 with `error` set (exec's
// errno text) when it could not be started; such a child is already reaped.
int spawn(ExecImage& image, std::string& error) {
    int exec_pipe[2];
    if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
        error = std::string("pipe2: ") + std::strerror(errno);
        return -1;
    }
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        error = std::string("fork: ") + std::strerror(errno);
        ::close(exec_pipe[0]);
        ::close(exec_pipe[1]);
        return -1;
    }
    if (pid == 0) {
        ::close(exec_pipe[0]);
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL); // the launcher gone, its workers go too
        if (::getppid() != parent) ::_exit(127);
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        ::sigaction(SIGINT, &dfl, nullptr);
        ::sigaction(SIGTERM, &dfl, nullptr);
        ::sigaction(SIGPIPE, &dfl, nullptr);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::execve(image.argv[0], image.argv.data(), image.envp.data());
        const int err = errno;
        [[maybe_unused]] const auto n = ::write(exec_pipe[1], &err, sizeof err);
        ::_exit(127);
    }
    ::setpgid(pid, pid); // also from here, whichever runs first
    ::close(exec_pipe[1]);
    int err = 0;
    ssize_t n;
    do {
        n = ::read(exec_pipe[0], &err, sizeof err);
    } while (n < 0 && errno == EINTR);
    ::close(exec_pipe[0]);
    if (n == static_cast<ssize_t>(sizeof err)) {
        int st = 0;
        while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
        error = std::strerror(err);
        return -1;
    }
    return pid;
}

bool is_consequence(const WorkerStatus& s) { return s.signal == 0 && s.exit_code == kDistributedFailureExit; }

std::string rank_list(const std::vector<int>& ranks) {
    std::string out;
    for (std::size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
    return out;
}

} // namespace

std::string signal_name(int signal) {
    const char* abbreviation = ::sigabbrev_np(signal); // "KILL"
    return abbreviation ? std::string("SIG") + abbreviation : "signal " + std::to_string(signal);
}

std::string WorkerStatus::describe() const {
    std::string who = "rank " + std::to_string(rank);
    if (pid > 0) who += " (pid " + std::to_string(pid) + (host.empty() ? "" : ", host " + host) + ")";
    else if (!host.empty()) who += " (host " + host + ")";
    if (pid <= 0) return who + " could not be started" + (start_error.empty() ? "" : ": " + start_error);
    if (signal != 0)
        return who + " was killed by signal " + std::to_string(signal) + " (" + signal_name(signal) + ")" +
               (stopped_by_launcher ? ", sent by the launcher" : "");
    if (exit_code >= 0) return who + " exited with code " + std::to_string(exit_code);
    return who + " is running";
}

LaunchResult launch_workers(const LaunchOptions& options) {
    validate(options.plan);
    if (options.executable.empty()) throw ConfigError("launch: no executable to start");
    bool expected = false;
    if (!g_launching.compare_exchange_strong(expected, true))
        throw ConfigError("launch: another launch is running in this process");
    struct Release {
        ~Release() { g_launching.store(false); }
    } release;

    LaunchPlan plan = options.plan;
    if (plan.master_port == 0) plan.master_port = pick_free_port(plan.master_addr.empty() ? "127.0.0.1" : plan.master_addr);

    LaunchResult result;
    result.master_port = plan.master_port;
    std::vector<int> local_ranks = options.local_ranks;
    if (local_ranks.empty())
        for (int i = 0; i < plan.nproc_per_node; ++i) local_ranks.push_back(i);
    for (const int i : local_ranks)
        if (i < 0 || i >= plan.nproc_per_node)
            throw ConfigError("launch: local rank " + std::to_string(i) + " is not in 0 … " +
                              std::to_string(plan.nproc_per_node - 1));
    std::vector<Worker> workers(local_ranks.size());
    // Several machines: the messages say which one (its address toward the master).
    const std::string host =
        plan.nnodes > 1 && !is_loopback_host(plan.master_addr) ? address_toward(plan.master_addr) : std::string();
    for (std::size_t j = 0; j < local_ranks.size(); ++j) {
        workers[j].status.local_rank = local_ranks[j];
        workers[j].status.rank = global_rank(plan, local_ranks[j]);
        workers[j].status.host = host;
    }
    // By local rank: the index into `workers`.
    auto index_of = [&](int local_rank) {
        return static_cast<int>(std::find(local_ranks.begin(), local_ranks.end(), local_rank) - local_ranks.begin());
    };

    std::optional<SignalScope> signals;
    if (options.forward_signals) signals.emplace();
    bool stopping = false; // options.stop said so
    std::optional<int> failed;            // local index of the failure that ended the run
    std::vector<int> failures;            // local indices, in the order they were seen
    std::optional<Clock::time_point> decide_at;
    std::optional<Clock::time_point> kill_at; // SIGKILL whatever still runs
    int signals_handled = 0;

    auto stop_running = [&](int sig) {
        for (auto& w : workers)
            if (w.running) {
                ::kill(w.status.pid, sig);
                w.status.stopped_by_launcher = true;
            }
    };

    // Start them all (a start failure is a failure like any other).
    for (auto& w : workers) {
        ExecImage image = make_image(options, worker_world(plan, w.status.local_rank));
        std::string error;
        const int pid = spawn(image, error);
        if (pid < 0) {
            w.status.start_error = error;
            failures.push_back(w.status.local_rank);
            decide_at = Clock::now();
            break;
        }
        w.status.pid = pid;
        w.running = true;
    }

    auto any_running = [&] {
        return std::any_of(workers.begin(), workers.end(), [](const Worker& w) { return w.running; });
    };
    while (any_running() || (decide_at && !failed)) {
        if (signals) {
            pollfd p{signals->wake_fd(), POLLIN, 0};
            ::poll(&p, 1, kPollMs);
            signals->drain();
        } else {
            ::poll(nullptr, 0, kPollMs);
        }
        const auto now = Clock::now();
        if (!stopping && options.stop && options.stop()) {
            stopping = true;
            if (!failed) {
                stop_running(SIGTERM);
                kill_at = now + options.stop_grace;
            }
        }

        const int count = signals ? static_cast<int>(g_signal_count) : signals_handled;
        if (count > signals_handled) {
            if (result.interrupt_signal == 0 && !failed) {
                result.interrupt_signal = g_last_signal;
                for (auto& w : workers)
                    if (w.running) ::kill(w.status.pid, result.interrupt_signal); // passed on, once
                kill_at = now + options.stop_grace;
            } else {
                stop_running(SIGKILL); // a second signal: no more waiting
            }
            signals_handled = count;
        }

        for (auto& w : workers) {
            if (!w.running) continue;
            int st = 0;
            const pid_t r = ::waitpid(w.status.pid, &st, WNOHANG);
            if (r == 0) continue;
            if (r < 0 && errno == EINTR) continue;
            w.running = false;
            if (r > 0 && WIFSIGNALED(st)) w.status.signal = WTERMSIG(st);
            else if (r > 0 && WIFEXITED(st)) w.status.exit_code = WEXITSTATUS(st);
            if (!w.status.succeeded() && !failed && result.interrupt_signal == 0 && !w.status.stopped_by_launcher) {
                failures.push_back(w.status.local_rank);
                const auto when = is_consequence(w.status) ? now + kSettle : now;
                decide_at = decide_at ? std::min(*decide_at, when) : when;
            }
        }

        if (!failed && decide_at && now >= *decide_at) {
            // The cause: the first failure that is not a consequence of another's.
            const auto cause = std::find_if(failures.begin(), failures.end(),
                                            [&](int i) { return !is_consequence(workers[index_of(i)].status); });
            failed = index_of(cause != failures.end() ? *cause : failures.front());
            stop_running(SIGTERM);
            kill_at = now + options.stop_grace;
        }
        if (kill_at && now >= *kill_at) {
            stop_running(SIGKILL);
            kill_at.reset();
        }
    }

    for (auto& w : workers) {
        if (w.status.pid <= 0 && w.status.start_error.empty()) w.status.start_error = "not started";
        result.workers.push_back(w.status);
    }
    if (failed) {
        const auto& s = workers[*failed].status;
        result.failed_rank = s.rank;
        result.exit_code = s.pid <= 0 ? 127 : s.signal != 0 ? kDistributedFailureExit : s.exit_code > 0 ? s.exit_code : 1;
        result.message = s.describe();
        std::vector<int> stopped;
        for (const auto& w : workers)
            if (w.status.stopped_by_launcher) stopped.push_back(w.status.rank);
        if (!stopped.empty()) result.message += "; the launcher stopped rank" + std::string(stopped.size() > 1 ? "s " : " ") + rank_list(stopped);
    } else if (result.interrupt_signal != 0) {
        result.exit_code = 128 + result.interrupt_signal;
        result.message = "interrupted by " + signal_name(result.interrupt_signal) + ", passed on to the workers";
    }
    return result;
}

LaunchOutcome launch_ranks(const RunConfig& config, const std::string& program,
                           const std::vector<std::string>& arguments) {
    LaunchOptions options;
    options.executable = program;
    options.arguments = arguments;
    options.plan.nproc_per_node = config.nproc_per_node;
    options.plan.nnodes = config.nnodes;
    options.plan.node_rank = config.node_rank;
    options.plan.master_addr = config.master_addr;
    options.plan.master_port = config.master_port; // 0: a free one (one machine)
    // A rank that survives a failure ends by itself within --dist-timeout + 2 s
    // (a collective's deadline); SIGTERM reaches one that is computing at its
    // next window, SIGKILL after this grace any that does not end.
    options.stop_grace = std::chrono::seconds(10);
    const LaunchResult result = launch_workers(options);
    LaunchOutcome outcome;
    outcome.exit_code = result.exit_code;
    outcome.message = result.message;
    outcome.master_port = result.master_port;
    return outcome;
}

} // namespace accum::dist
// SPDX-License-Identifier: GPL-3.0-or-later
