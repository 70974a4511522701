#include "distributed/process_group.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#ifdef ACCUM_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef ACCUM_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "accum/data_parallel.h"
#include "accum/errors.h"
#include "distributed/background.h"
#include "distributed/rendezvous.h"
#include "torch_compat.h"

namespace accum::dist {

namespace {

// The backends' base class (torch_compat.h): both have the same collectives
// with the same signatures.
#if ACCUM_C10D_BACKEND_CLASS
using C10dBackend = c10d::Backend;
#else
using C10dBackend = c10d::ProcessGroup;
#endif

using Clock = std::chrono::steady_clock;
using Kind = DistributedError::Kind;

// Joining may take the store's wait (timeout) and then the backend's connection:
// the whole is given half the timeout more (1 … 5 s) before it is declared stuck.
std::chrono::milliseconds join_slack(std::chrono::milliseconds timeout) {
    return std::clamp<std::chrono::milliseconds>(timeout / 2, std::chrono::seconds(1), std::chrono::seconds(5));
}
// A collective's own deadline inside Gloo is the timeout; the caller waits this
// much longer so that Gloo's message, which says more, comes first.
constexpr auto kWaitSlack = std::chrono::seconds(2);
// A collective is first waited for by yielding the CPU in a loop, and only
// then by sleeping in Work::wait(): a rank that sleeps through the MLP's
// all-reduce after its backward waits for its idle vCPU to be woken each time
// a peer's data arrive, one that yields waits only as long as the all-reduce
// takes (measured on the 2-vCPU machine, 2 ranks of the MLP, one thread each:
// bench/RESULTS.md § Figures quoted in the code, "yielding wait").
// sched_yield() lets any thread that is ready run first (Gloo's own, another
// program's), so the wait takes nobody's turn; a peer later than this sleeps.
constexpr auto kYieldingWait = std::chrono::milliseconds(50);
// A collective that outlasts the yielding wait (a slow link) is waited for in
// slices of a millisecond, between which `abort` and the store are looked at;
// Gloo's work says when it completes (its future's callback), so the wait ends
// then, not at the end of a slice: on a slow link a slept-out millisecond
// after each all-reduce is measurable (bench/TWO_HOSTS_RESULTS.md).
struct Completion {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    void set() {
        {
            std::lock_guard<std::mutex> lock(mutex);
            done = true;
        }
        cv.notify_all();
    }
    void wait_for(std::chrono::milliseconds slice) {
        std::unique_lock<std::mutex> lock(mutex);
        cv.wait_for(lock, slice, [&] { return done; });
    }
};

// While a collective waits longer, the store is asked every this often whether
// a peer has left its failure there (one round trip).
constexpr auto kFailureLook = std::chrono::milliseconds(200);

// What the joining thread hands back, shared with it. A caller that stops
// waiting (its `abandon`, or the deadline) sets `cancelled`: every wait of the
// joining thread looks at it (the store's answers, the rendezvous, the
// store's waits inside Gloo's connection), and what the thread joined after
// all is destroyed on that thread, not handed back.
struct Join {
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    std::exception_ptr error;
    std::atomic<int> stage{0}; // 0: reaching the master, 1: waiting for the ranks, 2: connecting the backend
    std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
    Meeting meeting;           // the store, this meeting's keys, the peers (rendezvous.h)
    c10::intrusive_ptr<C10dBackend> backend;
};

// What a successful join yields.
struct Joined {
    Meeting meeting;
    c10::intrusive_ptr<C10dBackend> backend;
};

} // namespace

struct ProcessGroup::Impl {
    GroupOptions options;
    Meeting meeting; // its store outlives the backend, which holds it too
    c10::intrusive_ptr<C10dBackend> backend;
    std::string self_host;
    std::string failure; // set once a collective failed
    bool store_silent = false; // the store stopped answering: peers' failures are not looked for
    Kind failure_kind = Kind::Failed;
    int failure_peer = -1;

    int rank() const { return options.world.rank; }

    // The ranks on this machine whose processes are gone, at the first look
    // that finds any (none when no peer is on this machine). A peer that has
    // just dropped its connections may take a moment to become a zombie: look
    // for up to a second. With three ranks or more, a rank that saw the loss
    // first and has already ended is among them.
    std::vector<int> find_lost_peers() const {
        // Across machines alone there is nothing to look at: no wait.
        bool any_here = false;
        for (std::size_t r = 0; r < meeting.peers.size(); ++r)
            any_here = any_here || (static_cast<int>(r) != rank() && meeting.peers[r].host == self_host);
        if (!any_here) return {};
        const auto until = Clock::now() + std::chrono::seconds(1);
        for (;;) {
            std::vector<int> gone;
            const auto& peers = meeting.peers;
            for (std::size_t r = 0; r < peers.size(); ++r) {
                if (static_cast<int>(r) == rank() || peers[r].host != self_host) continue;
                if (!process_alive(peers[r].pid)) gone.push_back(static_cast<int>(r));
            }
            if (!gone.empty() || Clock::now() >= until) return gone;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }

    // A run across machines (its master not on loopback) names each rank's
    // host, by the address it met the others from; one on this machine does not.
    bool names_hosts() const { return !is_loopback_host(options.world.master_addr); }
    std::string address_of(int r) const {
        return r >= 0 && r < static_cast<int>(meeting.peers.size()) ? meeting.peers[r].address : std::string();
    }
    // "rank 1", "rank 1 (host 10.0.0.2)"; with its pid: "rank 1 (pid 4242)", "rank 1 (pid 4242, host 10.0.0.2)".
    std::string rank_text(int r, bool with_pid = false) const {
        std::vector<std::string> facts;
        if (with_pid && r >= 0 && r < static_cast<int>(meeting.peers.size()))
            facts.push_back("pid " + std::to_string(meeting.peers[r].pid));
        if (names_hosts() && !address_of(r).empty()) facts.push_back("host " + address_of(r));
        std::string t = "rank " + std::to_string(r);
        for (std::size_t i = 0; i < facts.size(); ++i) t += (i ? ", " : " (") + facts[i];
        return facts.empty() ? t : t + ")";
    }
    // The other ranks a failure may concern: those whose host's address the
    // error names ("[10.0.0.2]:port", Gloo's way), else the ranks on other hosts.
    std::vector<int> suspects(const std::string& detail) const {
        std::vector<int> named, elsewhere;
        const std::string own = address_of(rank());
        for (int r = 0; r < static_cast<int>(meeting.peers.size()); ++r) {
            const std::string& a = meeting.peers[r].address;
            if (r == rank() || a.empty()) continue;
            if (detail.find("[" + a + "]") != std::string::npos) named.push_back(r);
            if (a != own) elsewhere.push_back(r);
        }
        return named.empty() ? elsewhere : named;
    }
    std::string ranks_text(const std::vector<int>& ranks) const {
        std::string t;
        const std::size_t shown = std::min<std::size_t>(ranks.size(), 4);
        for (std::size_t i = 0; i < shown; ++i) t += (i ? ", " : "") + rank_text(ranks[i]);
        if (ranks.size() > shown) t += " and " + std::to_string(ranks.size() - shown) + " more";
        return t;
    }

    [[noreturn]] void fail(const std::string& what, const std::string& detail, Kind kind) {
        // A peer that failed for a reason of its own may have said which (it
        // is the cause; the lost connection only its consequence).
        // (A store that stopped answering is not asked again: the link to it is gone.)
        const auto said = (kind == Kind::PeerLost || kind == Kind::Timeout) && !store_silent
                              ? published_failure(meeting, rank(), options.world.world_size)
                              : std::nullopt;
        if (said) fail_for_peer(*said, what);
        const auto lost = (kind == Kind::PeerLost || kind == Kind::Timeout) ? find_lost_peers() : std::vector<int>{};
        // Across machines the lost peer's process cannot be looked at: its host is named instead.
        const auto others = names_hosts() && lost.empty() ? suspects(detail) : std::vector<int>{};
        std::string message = rank_text(rank()) + ": ";
        int peer = lost.empty() ? -1 : lost.front();
        if (!lost.empty()) {
            kind = Kind::PeerLost;
            for (std::size_t i = 0; i < lost.size(); ++i)
                message += std::string(i ? ", " : "") + rank_text(lost[i], true);
            message += std::string(lost.size() > 1 ? " were" : " was") + " lost during " + what;
        } else if (kind == Kind::PeerLost) {
            if (others.size() == 1) peer = others.front();
            message += others.empty() ? "a peer was lost during " + what
                                      : (others.size() == 1 ? "" : "one of ") + ranks_text(others) + " was lost during " + what;
        } else if (kind == Kind::Timeout) {
            message += what + " did not complete within " + seconds_text(options.timeout) + " (--dist-timeout)";
            if (!others.empty()) message += ", waiting for " + ranks_text(others);
        } else {
            message += what + " failed";
        }
        message += ": " + detail;
        failure = message;
        failure_kind = kind;
        failure_peer = peer;
        throw DistributedError(kind, rank(), failure_peer, message);
    }

    [[noreturn]] void fail_for_peer(const std::pair<int, std::string>& said, const std::string& what) {
        failure = rank_text(rank()) + ": " + rank_text(said.first) + " failed (" + what + " given up): " + said.second;
        failure_kind = Kind::PeerFailed;
        failure_peer = said.first;
        throw DistributedError(failure_kind, rank(), failure_peer, failure);
    }

    void check_usable() const {
        if (!failure.empty())
            throw DistributedError(failure_kind, rank(), failure_peer,
                                   failure + " (the process group cannot be used after a failure)");
    }

    template <class MakeWork>
    void run(const std::string& what, MakeWork&& make_work) {
        check_usable();
        std::string detail;
        Kind kind = Kind::Failed;
        // Before the work starts: a failure at least the timeout after it has waited the timeout out.
        const auto start = Clock::now();
        try {
            const c10::intrusive_ptr<c10d::Work> work = make_work();
            // Yield (kYieldingWait), then wait in slices of a millisecond (ended
            // early by Gloo's completion), looking between them whether the
            // caller gives up (options.abort).
            while (!work->isCompleted() && Clock::now() < start + kYieldingWait) ::sched_yield();
            // Gloo's work completes its future on Gloo's thread; NCCL's is waited for by slices alone.
            std::shared_ptr<Completion> completion;
            if (options.backend == Backend::Gloo && !work->isCompleted()) {
                completion = std::make_shared<Completion>();
                try {
                    work->getFuture()->addCallback([completion](c10::ivalue::Future&) { completion->set(); });
                } catch (const c10::Error&) {
                    completion.reset(); // a work without a future: slices of sleep, as before
                }
            }
            bool aborted = false;
            auto next_look = start + kFailureLook;
            while (options.abort && !aborted && !work->isCompleted() &&
                   Clock::now() < start + options.timeout + kWaitSlack) {
                aborted = options.abort();
                // A peer that failed (a write that failed, say) and said so before
                // leaving: stop now, naming it, not when its process has ended.
                if (!aborted && !store_silent && Clock::now() >= next_look) {
                    const auto asked = Clock::now();
                    if (const auto said = published_failure(meeting, rank(), options.world.world_size))
                        fail_for_peer(*said, what);
                    // A store that takes a second to answer (its process stopped)
                    // is asked no more: the wait must keep looking at `abort`.
                    store_silent = Clock::now() - asked > std::chrono::seconds(1);
                    next_look = Clock::now() + kFailureLook;
                }
                if (!aborted) {
                    if (completion) completion->wait_for(std::chrono::milliseconds(1));
                    else std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
            }
            if (!aborted) {
                work->wait(options.timeout + kWaitSlack);
                return;
            }
            detail = "this rank was asked to stop while its peers did not answer";
        } catch (const DistributedError&) {
            throw; // fail_for_peer: a peer's own failure, said as it is
        } catch (const std::exception& e) {
            detail = error_text(e);
            kind = classify_failure(e, Clock::now() - start >= options.timeout);
        }
        fail(what, detail, kind);
    }

    at::Device device() const {
        return options.backend == Backend::Nccl ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(options.cuda_device))
                                                : at::Device(at::kCPU);
    }
};

namespace {

c10d::ReduceOp to_c10d(ReduceOp op) {
    switch (op) {
    case ReduceOp::Sum: return c10d::ReduceOp::SUM;
    case ReduceOp::Max: return c10d::ReduceOp::MAX;
    case ReduceOp::Min: return c10d::ReduceOp::MIN;
    }
    return c10d::ReduceOp::SUM;
}

// Runs on its own thread: store, arrival of every rank, backend.
Joined join_group(const GroupOptions& o, Join& join) {
    const int rank = o.world.rank, world = o.world.world_size;
    // Holds only the flag, not the Join: the store's waits keep it for the group's life.
    std::function<bool()> cancelled = [flag = join.cancelled] { return flag->load(); };
    // The store (rank 0's own, or torchrun's agent's) and every rank of this
    // launch in it (rendezvous.h).
    Meeting meeting = meet(MeetingOptions{o.world, o.timeout}, join.stage, cancelled);
    join.stage = 2;

    c10::intrusive_ptr<C10dBackend> backend;
    if (o.backend == Backend::Gloo) {
#ifdef ACCUM_WITH_GLOO
        // Gloo waits in the store for its peers' addresses: the meeting's store
        // polls, and gives up when the join is cancelled. Its connection to each peer once
        // it has the address cannot be interrupted; Gloo bounds it by its
        // timeout (--dist-timeout), and a peer that has published its address
        // is already listening, so that takes moments unless it dies meanwhile.
        auto scoped = c10::make_intrusive<c10d::PrefixStore>(meeting.prefix + "/pg", meeting.store);
        auto go = c10d::ProcessGroupGloo::Options::create(o.timeout);
        // As torch.distributed picks Gloo's interface: loopback for a run on this
        // machine, GLOO_SOCKET_IFNAME when set, else the address of the host name.
        const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
        if (is_loopback_host(o.world.master_addr))
            go->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
        else if (ifname && *ifname)
            go->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(
                std::string(ifname).substr(0, std::string(ifname).find(','))));
        else
            go->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
        // Two worker threads, as torch.distributed gives Gloo: with one, two
        // ranks that share a core spend a whole time slice in each all-reduce of
        // the MLP's gradients, the device loop spinning in epoll_wait (measured
        // with LibTorch 1.13: bench/RESULTS.md § Figures quoted in the code,
        // "Gloo's worker threads").
        go->threads = 2;
        backend = c10::make_intrusive<c10d::ProcessGroupGloo>(scoped, rank, world, go);
#endif
    } else if (o.backend == Backend::Nccl) {
#ifdef ACCUM_WITH_NCCL
        // NCCL meets its peers through the store at the first collective, not here.
        auto scoped = c10::make_intrusive<c10d::PrefixStore>(meeting.prefix + "/pg", meeting.store);
        // Blocking wait: Work::wait() then waits for the GPU and honours the timeout
        // (1.x reads NCCL_BLOCKING_WAIT, 2.x TORCH_NCCL_BLOCKING_WAIT).
        ::setenv("NCCL_BLOCKING_WAIT", "1", 0);
        ::setenv("TORCH_NCCL_BLOCKING_WAIT", "1", 0);
        auto no = c10d::ProcessGroupNCCL::Options::create();
        no->timeout = o.timeout;
        backend = c10::make_intrusive<c10d::ProcessGroupNCCL>(scoped, rank, world, no);
#endif
    }
    if (!backend) throw ConfigError("backend " + to_string(o.backend) + " is not in this build");
    return Joined{std::move(meeting), std::move(backend)};
}

} // namespace

std::unique_ptr<ProcessGroup> ProcessGroup::connect(const GroupOptions& options) {
    const auto& w = options.world;
    if (w.world_size < 1 || w.rank < 0 || w.rank >= w.world_size)
        throw ConfigError("process group: rank " + std::to_string(w.rank) + " of world size " +
                          std::to_string(w.world_size));
    if (w.master_port < 1 || w.master_port > 65535)
        throw ConfigError("process group: master port " + std::to_string(w.master_port) + " is not in 1 … 65535");
    if (w.master_addr.empty()) throw ConfigError("process group: no master address");
    if (options.backend == Backend::Auto) throw ConfigError("process group: resolve_backend() first");
    if (!backend_built(options.backend))
        throw ConfigError("--backend " + to_string(options.backend) + ": not in this build");
    if (options.timeout.count() <= 0) throw ConfigError("--dist-timeout must be positive");

    // Gloo writes to its sockets with writev(): a peer that dies while this rank
    // sends would end it with SIGPIPE instead of an error naming the peer.
    // Python ignores SIGPIPE in every process; so does a rank here (unless the
    // program has chosen a handler of its own).
    struct sigaction old {};
    if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        sigemptyset(&ignore.sa_mask);
        ::sigaction(SIGPIPE, &ignore, nullptr);
    }

    const std::string master = w.master_addr + ":" + std::to_string(w.master_port);
    const auto begun = Clock::now();
    auto join = std::make_shared<Join>();
    // The thread's own copy of the options without the caller's callbacks,
    // which may refer to what the caller's frame holds: it never calls them,
    // and may outlive that frame by moments.
    GroupOptions own = options;
    own.abandon = nullptr;
    own.abort = nullptr;
    background().start([own = std::move(own), join] {
        std::exception_ptr error;
        std::optional<Joined> joined;
        try {
            joined = join_group(own, *join);
        } catch (...) {
            error = std::current_exception();
        }
        {
            std::lock_guard<std::mutex> lock(join->mutex);
            // A caller that has stopped waiting gets nothing: what was joined
            // after all is destroyed here, on this thread, when `joined` goes.
            if (!join->cancelled->load()) {
                join->error = error;
                if (joined) {
                    join->meeting = std::move(joined->meeting);
                    join->backend = std::move(joined->backend);
                }
            }
            join->done = true;
        }
        join->done_cv.notify_all();
    });

    const auto deadline = options.timeout + join_slack(options.timeout);
    std::unique_lock<std::mutex> lock(join->mutex);
    // Giving up: the joining thread is told, under the lock that it takes to hand
    // its result over, so that either the result is here or the thread ends
    // within moments, keeping nothing (Join).
    auto give_up = [&] { join->cancelled->store(true); };
    bool joined = false;
    if (options.abandon) {
        const auto until = Clock::now() + deadline;
        while (!(joined = join->done_cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return join->done; })) &&
               Clock::now() < until) {
            lock.unlock();
            const bool abandoned = options.abandon();
            lock.lock();
            if (abandoned && !join->done) {
                give_up();
                throw DistributedError(Kind::Failed, w.rank, -1,
                                       "rank " + std::to_string(w.rank) + ": stopped waiting for the other ranks at " +
                                           master);
            }
        }
    } else {
        joined = join->done_cv.wait_for(lock, deadline, [&] { return join->done; });
    }
    if (!joined) {
        // Every wait of the joining thread has a deadline of the timeout, but
        // one question to a store that stops answering can take its answer
        // timeout more, and Gloo's connection its own timeout: past the
        // deadline the thread is told to end, and does within moments (or, in
        // Gloo's connection to a peer, within Gloo's timeout), in a process
        // that may live on (the studio).
        give_up();
        const int stage = join->stage;
        const std::string rank_text = rank_with_host(w) + ": ";
        if (stage == 0)
            throw DistributedError(Kind::Unreachable, w.rank, 0,
                                   rank_text + "the master at " + master + " did not answer within " +
                                       seconds_text(deadline) + " (--dist-timeout)");
        if (stage == 1)
            throw DistributedError(Kind::Timeout, w.rank, -1,
                                   rank_text + "the ranks did not all arrive at " + master + " within " +
                                       seconds_text(deadline) +
                                       " (--dist-timeout), and the master stopped answering");
        throw DistributedError(Kind::Timeout, w.rank, -1,
                               rank_text + "connecting " + to_string(options.backend) + " to the other ranks took more than " +
                                   seconds_text(deadline) + " (--dist-timeout)");
    }
    if (join->error) {
        try {
            std::rethrow_exception(join->error);
        } catch (const DistributedError&) {
            throw;
        } catch (const ConfigError&) {
            throw;
        } catch (const std::exception& e) {
            // The store's failures (reaching the master, a port in use) are the
            // rendezvous' own DistributedError; what is left fails the meeting or the backend.
            const Kind kind = classify_failure(e, Clock::now() - begun >= options.timeout);
            const std::string what = join->stage < 2 ? "waiting for the ranks at " + master + " failed"
                                                     : "connecting " + to_string(options.backend) +
                                                           " to the other ranks failed";
            throw DistributedError(kind, w.rank, -1, rank_with_host(w) + ": " + what + ": " + error_text(e));
        }
    }

    auto impl = std::make_unique<Impl>();
    impl->options = options;
    impl->meeting = std::move(join->meeting);
    impl->backend = std::move(join->backend);
    impl->self_host = host_identity();
    return std::unique_ptr<ProcessGroup>(new ProcessGroup(std::move(impl)));
}

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ProcessGroup::~ProcessGroup() {
    if (!impl_) return;
    if (!impl_->failure.empty()) {
        // After a failure Gloo's threads may still wait on a peer for up to the
        // timeout, and destroying the backend joins them: it is destroyed on a
        // thread of its own, then the store (which the backend holds too), so
        // that the caller goes on at once and the process, which may live on
        // (the studio), gets its memory and threads back within the timeout.
        auto backend = std::move(impl_->backend);
        auto store = std::move(impl_->meeting.store);
        try {
            background().start([backend = std::move(backend), store = std::move(store)]() mutable {
                backend.reset();
                store.reset();
            });
        } catch (...) {
            // No thread to be had: destroyed here after all, as `start` lets the work go.
        }
    }
}

int ProcessGroup::rank() const { return impl_->options.world.rank; }
int ProcessGroup::world_size() const { return impl_->options.world.world_size; }
Backend ProcessGroup::backend() const { return impl_->options.backend; }
std::chrono::milliseconds ProcessGroup::timeout() const { return impl_->options.timeout; }
at::Device ProcessGroup::device() const { return impl_->device(); }
bool ProcessGroup::failed() const { return !impl_->failure.empty(); }

void ProcessGroup::announce_failure(const std::string& message) {
    publish_failure(impl_->meeting, rank(), world_size(), message);
}

void ProcessGroup::all_reduce(at::Tensor& tensor, ReduceOp op) {
    impl_->run("all-reduce", [&] {
        std::vector<at::Tensor> tensors{tensor};
        c10d::AllreduceOptions ao;
        ao.reduceOp = to_c10d(op);
        ao.timeout = impl_->options.timeout;
        return impl_->backend->allreduce(tensors, ao);
    });
}

void ProcessGroup::broadcast(at::Tensor& tensor, int root) {
    if (root < 0 || root >= world_size()) throw std::invalid_argument("broadcast: root rank out of range");
    impl_->run("broadcast", [&] {
        std::vector<at::Tensor> tensors{tensor};
        c10d::BroadcastOptions bo;
        bo.rootRank = root;
        bo.rootTensor = 0;
        bo.timeout = impl_->options.timeout;
        return impl_->backend->broadcast(tensors, bo);
    });
}

void ProcessGroup::barrier() {
    if (impl_->options.backend == Backend::Nccl) {
        // ProcessGroupNCCL's barrier guesses the device; an all-reduce on ours does not.
        auto t = at::zeros({1}, at::TensorOptions().dtype(at::kFloat).device(device()));
        all_reduce(t);
        return;
    }
    impl_->run("barrier", [&] {
        c10d::BarrierOptions bo;
        bo.timeout = impl_->options.timeout;
        return impl_->backend->barrier(bo);
    });
}

std::vector<double> ProcessGroup::all_reduce(std::vector<double> values, ReduceOp op) {
    if (values.empty()) return values;
    auto t = at::tensor(values, at::TensorOptions().dtype(at::kDouble)).to(device());
    all_reduce(t, op);
    const auto host = t.cpu().contiguous();
    const double* p = host.data_ptr<double>();
    return std::vector<double>(p, p + host.numel());
}

double ProcessGroup::all_reduce_mean(double value) {
    return all_reduce(std::vector<double>{value}, ReduceOp::Sum)[0] / world_size();
}

bool ProcessGroup::all_agree(std::uint64_t value) {
    // Two 32-bit halves are exact in float64; max(x) == -max(-x) == min(x) on every rank.
    const double hi = static_cast<double>(value >> 32), lo = static_cast<double>(value & 0xffffffffu);
    const auto m = all_reduce(std::vector<double>{hi, lo, -hi, -lo}, ReduceOp::Max);
    return m[0] == -m[2] && m[1] == -m[3];
}

} // namespace accum::dist
// SPDX-License-Identifier: GPL-3.0-or-later
