#include "distributed/process_group.h"

#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <future>
#include <optional>
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
#include "distributed/rendezvous.h"
#include "distributed/watchdog.h"
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
// A collective is waited for in slices, between which `abort` and the store are
// looked at; Gloo's work completes its future on Gloo's thread (its callback),
// so the wait ends then, not at the end of a slice. NCCL's future completes
// when the work is queued on the GPU: its work is looked at every millisecond.
constexpr auto kSlice = std::chrono::milliseconds(10);
// Before that, a collective is waited for by yielding the CPU: a rank that
// sleeps waits for its idle vCPU to be woken when a peer's data arrive, which
// made 2 ranks slower than 1 here (bench/DIST_WAIT.md). sched_yield() lets any
// ready thread (Gloo's, another program's) run first; a later peer is slept for.
constexpr auto kYieldingWait = std::chrono::milliseconds(50);

// While a collective waits longer, the store is asked every this often whether
// a peer has left its failure there (one round trip).
constexpr auto kFailureLook = std::chrono::milliseconds(200);
// How long a rank that lost a connection waits for the others to answer the
// roll call that tells which peer ended (rendezvous.h absent_ranks).
constexpr auto kRollCall = std::chrono::seconds(1);

} // namespace

struct ProcessGroup::Impl {
    GroupOptions options;
    Meeting meeting; // its store outlives the backend, which holds it too
    c10::intrusive_ptr<C10dBackend> backend;
    std::string failure; // set once a collective failed
    bool store_silent = false; // the store stopped answering: peers' failures are not looked for
    Kind failure_kind = Kind::Failed;
    int failure_peer = -1;

    int rank() const { return options.world.rank; }

    // The peers whose end a lost connection was, as c10d tells it: with one
    // peer, that one; else those absent from a roll call in the store (a
    // survivor answers it at once); a store whose connection closed names the
    // rank whose process served it. No process is looked at: a peer may be on
    // another host, or in another network namespace (tests/netns).
    std::vector<int> lost_peers() {
        const int world = options.world.world_size;
        if (world == 2) return {1 - rank()};
        if (store_silent) return {};
        try {
            return absent_ranks(meeting, rank(), world, kRollCall);
        } catch (const std::exception&) {
            return meeting.serves_store || options.world.agent_store ? std::vector<int>{} : std::vector<int>{0};
        }
    }

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
        const auto lost = kind == Kind::PeerLost ? lost_peers() : std::vector<int>{};
        // Across machines, a peer the roll call could not tell: the hosts the error names.
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
            // Waited for in slices (ended early by the work's completion),
            // looking between them whether the caller gives up (options.abort).
            if (options.backend == Backend::Gloo) // measured for Gloo; NCCL's completion is a CUDA event
                while (!work->isCompleted() && Clock::now() < start + kYieldingWait) ::sched_yield();
            std::future<void> completion;
            if (options.backend == Backend::Gloo && !work->isCompleted()) {
                auto done = std::make_shared<std::promise<void>>();
                try {
                    work->getFuture()->addCallback([done](c10::ivalue::Future&) { done->set_value(); });
                    completion = done->get_future();
                } catch (const c10::Error&) {
                    // a work without a future: slices of a millisecond too
                }
            }
            bool aborted = false;
            auto next_look = start + kFailureLook;
            while (!aborted && !work->isCompleted() && Clock::now() < start + options.timeout + kWaitSlack) {
                aborted = options.abort && options.abort();
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
                if (aborted) break;
                if (completion.valid()) completion.wait_for(kSlice);
                else std::this_thread::sleep_for(std::chrono::milliseconds(1));
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

// The backend, once the ranks have met (its keys under the meeting's prefix).
c10::intrusive_ptr<C10dBackend> make_backend(const GroupOptions& o, const Meeting& meeting) {
    const int rank = o.world.rank, world = o.world.world_size;
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
    return backend;
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
    const auto deadline = options.timeout + join_slack(options.timeout);
    // The join runs here, every wait of it looking at `cancel`, which the
    // watchdog cancels once the caller gives up (`abandon`) or the deadline
    // passes: each wait then ends within moments (Gloo's connection to a peer
    // whose address it has within Gloo's timeout), and what was joined is let go.
    std::stop_source cancel;
    std::atomic<int> stage{0}; // 0: reaching the master, 1: waiting for the ranks, 2: connecting the backend
    auto given_up = [&] {
        const std::string rank_text = rank_with_host(w) + ": ";
        if (Clock::now() < begun + deadline)
            throw DistributedError(Kind::Failed, w.rank, -1, rank_text + "stopped waiting for the other ranks at " + master);
        if (stage == 0)
            throw DistributedError(Kind::Unreachable, w.rank, 0,
                                   rank_text + "the master at " + master + " did not answer within " +
                                       seconds_text(deadline) + " (--dist-timeout)");
        if (stage == 1)
            throw DistributedError(Kind::Timeout, w.rank, -1,
                                   rank_text + "the ranks did not all arrive at " + master + " within " +
                                       seconds_text(deadline) + " (--dist-timeout), and the master stopped answering");
        throw DistributedError(Kind::Timeout, w.rank, -1,
                               rank_text + "connecting " + to_string(options.backend) + " to the other ranks took more than " +
                                   seconds_text(deadline) + " (--dist-timeout)");
    };
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    try {
        const auto watch = watchdog().watch(
            begun + deadline, [&options] { return options.abandon && options.abandon(); }, [cancel]() mutable { cancel.request_stop(); });
        // The store (rank 0's own, or torchrun's agent's) and every rank of
        // this launch in it (rendezvous.h), then the backend.
        impl->meeting = meet(MeetingOptions{w, options.timeout}, stage, cancel.get_token());
        stage = 2;
        impl->backend = make_backend(options, impl->meeting);
    } catch (const ConfigError&) {
        throw;
    } catch (const std::exception& e) {
        if (cancel.stop_requested()) given_up();
        if (dynamic_cast<const DistributedError*>(&e)) throw;
        // The store's failures (reaching the master, a port in use) are the
        // rendezvous' own DistributedError; what is left fails the meeting or the backend.
        const Kind kind = classify_failure(e, Clock::now() - begun >= options.timeout);
        const std::string what = stage < 2 ? "waiting for the ranks at " + master + " failed"
                                           : "connecting " + to_string(options.backend) + " to the other ranks failed";
        throw DistributedError(kind, w.rank, -1, rank_with_host(w) + ": " + what + ": " + error_text(e));
    }
    if (cancel.stop_requested()) given_up(); // joined as the caller gave up: its store is cut off
    return std::unique_ptr<ProcessGroup>(new ProcessGroup(std::move(impl)));
}

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ProcessGroup::~ProcessGroup() {
    if (!impl_ || impl_->failure.empty()) return;
    // After a failure Gloo's threads may still wait on a peer for up to the
    // timeout, and destroying the backend joins them: the watchdog releases it,
    // then the store (which the backend holds too), off the caller's thread, so
    // that the caller goes on at once and the process, which may live on (the
    // studio), gets its memory and threads back within the timeout.
    watchdog().dispose([backend = std::move(impl_->backend), store = std::move(impl_->meeting.store)]() mutable {
        backend.reset();
        store.reset();
    });
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
