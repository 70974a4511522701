// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include "accum/errors.h"
#include "accum/run_config.h"

extern char** environ;

namespace accum::dist {

namespace {

// Exit code of a rank that failed because another rank failed first (a
// distributed failure, ARCHITECTURE.md §3.4, exit codes): a consequence, not a cause.
constexpr int kDistributedFailureExit = 6;
// How long the launcher waits for the cause after the first failure it sees is
// only a consequence (a rank reporting a lost peer may be reaped before the peer).
constexpr auto kSettle = std::chrono::milliseconds(500);

volatile sig_atomic_t g_last_signal = 0;
volatile sig_atomic_t g_signal_count = 0;

extern "C" void on_launcher_signal(int sig) {
    g_last_signal = sig;
    g_signal_count = g_signal_count + 1;
}

// Sets a signal's action while it lives; puts back what was there.
class SignalAction {
public:
    SignalAction(int sig, void (*handler)(int)) : sig_(sig) {
        struct sigaction sa {};
        sa.sa_handler = handler;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        ::sigaction(sig, &sa, &old_);
    }
    ~SignalAction() { ::sigaction(sig_, &old_, nullptr); }
    SignalAction(const SignalAction&) = delete;
    SignalAction& operator=(const SignalAction&) = delete;

private:
    int sig_;
    struct sigaction old_ {};
};

// The launcher's environment, options.environment over it, the rank variables
// over both; the last value of a name wins.
std::vector<std::string> environment_of(const LaunchOptions& options, const WorldInfo& world) {
    std::map<std::string, std::string> ours;
    for (const auto& [k, v] : options.environment) ours[k] = v;
    for (const auto& [k, v] : worker_environment(world)) ours[k] = v;
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string entry(*e);
        if (!ours.count(entry.substr(0, entry.find('=')))) env.push_back(entry);
    }
    for (const auto& [k, v] : ours) env.push_back(k + "=" + v);
    return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

// Forks and execs one worker. Not posix_spawn: only the child itself can ask
// for PR_SET_PDEATHSIG. argv and envp are built before the fork (the child may
// only make async-signal-safe calls). Returns its pid, or -1 with `error` set
// (exec's errno text) when it could not be started; such a child is already reaped.
int spawn(std::vector<std::string> args, std::vector<std::string> env, std::string& error) {
    const auto argv = pointers(args);
    const auto envp = pointers(env);
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
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL); // the launcher gone, its workers go too
        if (::getppid() != parent) ::_exit(127);
        for (const int sig : {SIGINT, SIGTERM, SIGPIPE}) ::signal(sig, SIG_DFL); // even where ignored here
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::execve(argv[0], argv.data(), envp.data());
        const int err = errno;
        [[maybe_unused]] const auto n = ::write(exec_pipe[1], &err, sizeof err);
        ::_exit(127);
    }
    ::setpgid(pid, pid); // also from here, whichever runs first
    ::close(exec_pipe[1]);
    int err = 0;
    const ssize_t n = TEMP_FAILURE_RETRY(::read(exec_pipe[0], &err, sizeof err)); // 0: exec closed the pipe
    ::close(exec_pipe[0]);
    if (n != static_cast<ssize_t>(sizeof err)) return pid;
    TEMP_FAILURE_RETRY(::waitpid(pid, nullptr, 0));
    error = std::strerror(err);
    return -1;
}

bool is_consequence(const WorkerStatus& s) { return s.signal == 0 && s.exit_code == kDistributedFailureExit; }

// The name of a signal ("SIGKILL"), or "signal N".
std::string signal_name(int signal) {
    const char* abbreviation = ::sigabbrev_np(signal); // "KILL"
    return abbreviation ? std::string("SIG") + abbreviation : "signal " + std::to_string(signal);
}

// rank_name() and what became of it: "rank 1 (pid 4242) exited with code 3", …
std::string describe(const WorkerStatus& s) {
    const std::string who = rank_name(s.rank, s.pid, s.host);
    if (s.pid <= 0) return who + " could not be started" + (s.start_error.empty() ? "" : ": " + s.start_error);
    if (s.signal != 0)
        return who + " was killed by signal " + std::to_string(s.signal) + " (" + signal_name(s.signal) + ")" +
               (s.stopped_by_launcher ? ", sent by the launcher" : "");
    if (s.exit_code >= 0) return who + " exited with code " + std::to_string(s.exit_code);
    return who + " is running";
}

} // namespace

LaunchResult launch_workers(const LaunchOptions& options) {
    validate(options.plan);
    if (options.executable.empty()) throw ConfigError("launch: no executable to start");
    static std::mutex launching; // the signal handlers' counts are the process's
    const std::unique_lock<std::mutex> only(launching, std::try_to_lock);
    if (!only) throw ConfigError("launch: another launch is running in this process");

    LaunchPlan plan = options.plan;
    if (plan.master_port == 0) plan.master_port = pick_free_port(plan.master_addr.empty() ? "127.0.0.1" : plan.master_addr);
    LaunchResult result;
    if (options.first_local_rank < 0 || options.first_local_rank >= plan.nproc_per_node)
        throw ConfigError("launch: local rank " + std::to_string(options.first_local_rank) + " is not in 0 … " +
                          std::to_string(plan.nproc_per_node - 1));
    // Several machines: the messages say which one (its address toward the master).
    const std::string host =
        plan.nnodes > 1 && !is_loopback_host(plan.master_addr) ? address_toward(plan.master_addr) : std::string();
    auto& workers = result.workers; // by local rank
    std::vector<bool> running;      // started and not reaped yet

    // SIGINT and SIGTERM are counted while the workers run, the loop reading the
    // count every kPoll (a signal to its own thread ends the wait at once).
    std::optional<SignalAction> on_int, on_term, on_chld;
    if (options.forward_signals) {
        g_signal_count = 0;
        on_int.emplace(SIGINT, on_launcher_signal);
        on_term.emplace(SIGTERM, on_launcher_signal);
        // A process that ignores SIGCHLD has its children reaped by the kernel,
        // and waitpid() could not tell how a worker ended.
        struct sigaction chld {};
        if (::sigaction(SIGCHLD, nullptr, &chld) == 0 && chld.sa_handler == SIG_IGN) on_chld.emplace(SIGCHLD, SIG_DFL);
    }
    bool stopping = false;                     // options.stop said so
    std::optional<std::size_t> failed;         // the failure that ended the run (index into workers)
    std::vector<std::size_t> failures;         // indices into workers, in the order they were seen
    auto decide_at = Clock::time_point::max(); // when to pick the cause among them
    auto kill_at = Clock::time_point::max();   // SIGKILL whatever still runs then
    int signals_handled = 0;

    // Sends `sig` to the workers still running, marked stopped by the launcher
    // unless it only passes a signal on; SIGKILL follows after stop_grace.
    auto signal_running = [&](int sig, bool passed_on = false) {
        for (std::size_t j = 0; j < workers.size(); ++j)
            if (running[j]) {
                ::kill(workers[j].pid, sig);
                workers[j].stopped_by_launcher = workers[j].stopped_by_launcher || !passed_on;
            }
        kill_at = sig == SIGKILL ? Clock::time_point::max() : Clock::now() + options.stop_grace;
    };

    // Start them in order; after one that cannot start (a failure like any
    // other), the rest are listed, not started.
    std::vector<std::string> args{options.executable};
    args.insert(args.end(), options.arguments.begin(), options.arguments.end());
    for (int i = options.first_local_rank; i < plan.nproc_per_node; ++i) {
        const WorldInfo world = worker_world(plan, i);
        auto& w = workers.emplace_back();
        w.rank = world.rank;
        w.local_rank = i;
        w.host = host;
        if (failures.empty()) w.pid = spawn(args, environment_of(options, world), w.start_error);
        else w.start_error = "not started";
        if (w.pid <= 0 && failures.empty()) failures.push_back(workers.size() - 1);
        running.push_back(w.pid > 0);
    }
    if (!failures.empty()) decide_at = Clock::now();

    while (std::find(running.begin(), running.end(), true) != running.end() || (!failures.empty() && !failed)) {
        ::poll(nullptr, 0, static_cast<int>(kPoll.count()));
        const auto now = Clock::now();
        if (!stopping && options.stop && options.stop()) {
            stopping = true;
            if (!failed) signal_running(SIGTERM);
        }

        const int count = options.forward_signals ? static_cast<int>(g_signal_count) : signals_handled;
        if (count > signals_handled) {
            if (result.interrupt_signal == 0 && !failed) {
                result.interrupt_signal = g_last_signal;
                signal_running(result.interrupt_signal, true); // passed on, once
            } else {
                signal_running(SIGKILL); // a second signal: no more waiting
            }
            signals_handled = count;
        }

        for (std::size_t j = 0; j < workers.size(); ++j) {
            if (!running[j]) continue;
            auto& w = workers[j];
            int st = 0;
            const pid_t r = ::waitpid(w.pid, &st, WNOHANG);
            if (r == 0 || (r < 0 && errno == EINTR)) continue;
            running[j] = false;
            if (r > 0 && WIFSIGNALED(st)) w.signal = WTERMSIG(st);
            else if (r > 0 && WIFEXITED(st)) w.exit_code = WEXITSTATUS(st);
            if (!w.succeeded() && !failed && result.interrupt_signal == 0 && !w.stopped_by_launcher) {
                failures.push_back(j);
                const auto when = is_consequence(w) ? now + kSettle : now;
                decide_at = std::min(decide_at, when);
            }
        }

        if (!failed && now >= decide_at) {
            // The cause: the first failure that is not a consequence of another's.
            const auto cause = std::find_if(failures.begin(), failures.end(),
                                            [&](std::size_t j) { return !is_consequence(workers[j]); });
            failed = cause != failures.end() ? *cause : failures.front();
            signal_running(SIGTERM);
        }
        if (now >= kill_at) signal_running(SIGKILL);
    }

    std::string stopped; // the ranks the launcher stopped: "0, 2"
    int stopped_count = 0;
    for (const auto& w : workers)
        if (w.stopped_by_launcher) stopped += (stopped_count++ ? ", " : "") + std::to_string(w.rank);
    if (failed) {
        const auto& s = workers[*failed];
        result.failed_rank = s.rank;
        result.exit_code = s.pid <= 0 ? 127 : s.signal != 0 ? kDistributedFailureExit : s.exit_code > 0 ? s.exit_code : 1;
        result.message = describe(s);
        if (stopped_count > 0)
            result.message += "; the launcher stopped rank" + std::string(stopped_count > 1 ? "s " : " ") + stopped;
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
    options.plan = {config.nproc_per_node, config.nnodes, config.node_rank, config.master_addr, config.master_port};
    // A rank that survives a failure ends by itself within --dist-timeout + 2 s
    // (a collective's deadline); SIGTERM reaches one that is computing at its
    // next window, SIGKILL after this grace any that does not end.
    options.stop_grace = std::chrono::seconds(10);
    const LaunchResult result = launch_workers(options);
    return {result.exit_code, result.message};
}

} // namespace accum::dist
