// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed/process_group.h"

#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <future>
#include <optional>
#include <thread>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#ifdef ACCUM_WITH_GLOO
#include <gloo/common/error.h>
#endif
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
#include "distributed/store_client.h"
#include "distributed/watchdog.h"
#include "torch_compat.h"

namespace accum::dist {

namespace {

// The backends' base class (torch_compat.h).
#if ACCUM_C10D_BACKEND_CLASS
using C10dBackend = c10d::Backend;
#else
using C10dBackend = c10d::ProcessGroup;
#endif

using Kind = DistributedError::Kind;

// Joining (the store's wait, then the backend's connection) is given half the
// timeout more (1 … 5 s) before it is declared stuck.
std::chrono::milliseconds join_slack(std::chrono::milliseconds timeout) {
    return std::clamp<std::chrono::milliseconds>(timeout / 2, std::chrono::seconds(1), std::chrono::seconds(5));
}
// A collective's own deadline inside Gloo is the timeout; the caller waits this
// much longer so that Gloo's message, which says more, comes first.
constexpr auto kWaitSlack = std::chrono::seconds(2);
// A collective is waited for in slices, between which `abort` and the store are
// looked at; Gloo's work ends a slice when its future completes (NCCL's is
// looked at every millisecond: its future completes when the work is queued).
constexpr auto kSlice = std::chrono::milliseconds(10);
// Before that, Gloo's collective is waited for by yielding the CPU: a rank that
// sleeps waits for its idle vCPU to be woken when a peer's data arrive, which
// made 2 ranks slower than 1 here (bench/DIST_WAIT.md).
constexpr auto kYieldingWait = std::chrono::milliseconds(50);
// While a collective waits longer, the store is asked this often whether a
// peer has left its failure there.
constexpr auto kFailureLook = std::chrono::milliseconds(200);
// How long a rank that lost a connection waits for the others to answer the
// roll call that tells which peer ended (rendezvous.h absent_ranks).
constexpr auto kRollCall = std::chrono::seconds(1);

} // namespace

struct ProcessGroup::Impl {
    GroupOptions options;
    Meeting meeting; // its store outlives the backend, which holds it too
    c10::intrusive_ptr<C10dBackend> backend;
    std::optional<DistributedError> failure; // once a collective failed
    bool store_silent = false; // the store stopped answering: peers' failures are not looked for

    int rank() const { return options.world.rank; }

    // The peers whose end a lost connection was: with one peer, that one; else
    // those absent from a roll call in the store; a store whose connection
    // closed names rank 0, whose process served it (ARCHITECTURE.md §4.5).
    std::vector<int> lost_peers() {
        const int world = options.world.world_size;
        if (world == 2) return {1 - rank()};
        if (store_silent) return {};
        try {
            return absent_ranks(meeting, kRollCall);
        } catch (const std::exception&) {
            return meeting.serves_store || options.world.agent_store ? std::vector<int>{} : std::vector<int>{0};
        }
    }

    bool names_hosts() const { return !is_loopback_host(options.world.master_addr); }
    // "rank 1", "rank 1 (host 10.0.0.2)"; with its pid: "rank 1 (pid 4242, host 10.0.0.2)".
    // Every rank a message names is one of the meeting's peers.
    std::string rank_text(int r, bool with_pid = false) const {
        const Peer& p = meeting.peers.at(r);
        return rank_name(r, with_pid ? p.pid : -1, names_hosts() ? p.address : "");
    }
    // The other ranks a failure may concern: those whose host's address the
    // error names ("[10.0.0.2]:port", Gloo's way), else the ranks on other hosts.
    std::vector<int> suspects(const std::string& detail) const {
        std::vector<int> named, elsewhere;
        for (int r = 0; r < static_cast<int>(meeting.peers.size()); ++r) {
            const std::string& a = meeting.peers[r].address;
            if (r == rank() || a.empty()) continue;
            if (detail.find("[" + a + "]") != std::string::npos) named.push_back(r);
            if (a != meeting.peers[rank()].address) elsewhere.push_back(r);
        }
        return named.empty() ? elsewhere : named;
    }
    // "rank 1, rank 2", at most four named, with their pids when asked.
    std::string ranks_text(const std::vector<int>& ranks, bool with_pid = false) const {
        std::string t;
        const std::size_t shown = std::min<std::size_t>(ranks.size(), 4);
        for (std::size_t i = 0; i < shown; ++i) t += (i ? ", " : "") + rank_text(ranks[i], with_pid);
        if (ranks.size() > shown) t += " and " + std::to_string(ranks.size() - shown) + " more";
        return t;
    }

    // Keeps the failure for every later call, and throws it.
    [[noreturn]] void fail_with(Kind kind, int peer, const std::string& message) {
        failure.emplace(kind, rank(), peer, message);
        throw *failure;
    }

    [[noreturn]] void fail(const std::string& what, const std::string& detail, Kind kind) {
        // A peer that failed for a reason of its own may have said which (it is
        // the cause; the lost connection only its consequence). A store that
        // stopped answering is not asked again: the link to it is gone.
        const auto said = (kind == Kind::PeerLost || kind == Kind::Timeout) && !store_silent
                              ? published_failure(meeting)
                              : std::nullopt;
        if (said) fail_for_peer(*said, what);
        const auto lost = kind == Kind::PeerLost ? lost_peers() : std::vector<int>{};
        // Across machines, a peer the roll call could not tell: the hosts the error names.
        const auto others = names_hosts() && lost.empty() ? suspects(detail) : std::vector<int>{};
        std::string message = rank_text(rank()) + ": ";
        int peer = lost.empty() ? -1 : lost.front();
        if (!lost.empty()) {
            message += ranks_text(lost, true) + (lost.size() > 1 ? " were" : " was") + " lost during " + what;
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
        fail_with(kind, peer, message + ": " + detail);
    }

    [[noreturn]] void fail_for_peer(const std::pair<int, std::string>& said, const std::string& what) {
        fail_with(Kind::PeerFailed, said.first,
                  rank_text(rank()) + ": " + rank_text(said.first) + " failed (" + what + " given up): " + said.second);
    }

    void check_usable() const {
        if (failure)
            throw DistributedError(failure->kind(), rank(), failure->peer(),
                                   error_text(*failure) + " (the process group cannot be used after a failure)");
    }

    // Waits for `work` in slices (ended early by its completion), looking
    // between them whether the caller gives up (false) and, now and then,
    // whether a peer said in the store that it failed: then it stops at once,
    // naming it, not when that peer's process has ended.
    bool await(c10d::Work& work, const std::string& what, Clock::time_point start) {
        const bool gloo = options.backend == Backend::Gloo; // NCCL's completion is a CUDA event
        while (gloo && !work.isCompleted() && Clock::now() < start + kYieldingWait) ::sched_yield();
        std::future<void> completion; // Gloo's all-reduce and broadcast have a future (it runs the callback once done)
        if (gloo && !work.isCompleted()) {
            auto done = std::make_shared<std::promise<void>>();
            completion = done->get_future();
            work.getFuture()->addCallback([done](c10::ivalue::Future&) { done->set_value(); });
        }
        for (auto next_look = start + kFailureLook;
             !work.isCompleted() && Clock::now() < start + options.timeout + kWaitSlack;) {
            if (options.abort && options.abort()) return false;
            if (!store_silent && Clock::now() >= next_look) {
                const auto asked = Clock::now();
                if (const auto said = published_failure(meeting))
                    fail_for_peer(*said, what);
                // A store that takes a second to answer (its process stopped)
                // is asked no more: the wait must keep looking at `abort`.
                store_silent = Clock::now() - asked > std::chrono::seconds(1);
                next_look = Clock::now() + kFailureLook;
            }
            if (completion.valid()) completion.wait_for(kSlice);
            else std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return true;
    }

    template <class MakeWork>
    void run(const std::string& what, MakeWork&& make_work) {
        check_usable();
        std::string detail = "this rank was asked to stop while its peers did not answer";
        Kind kind = Kind::Failed;
        // Before the work starts: a failure at least the timeout after it has waited the timeout out.
        const auto start = Clock::now();
        try {
            const c10::intrusive_ptr<c10d::Work> work = make_work();
            if (await(*work, what, start)) {
                work->wait(options.timeout + kWaitSlack);
                return;
            }
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

// The backend, once the ranks have met (its keys under the meeting's prefix),
// Gloo connected to its peers within `budget`, what is left of the join's.
c10::intrusive_ptr<C10dBackend> make_backend(const GroupOptions& o, const Meeting& meeting,
                                             std::chrono::milliseconds budget) {
    const int rank = o.world.rank, world = o.world.world_size;
    c10::intrusive_ptr<C10dBackend> backend;
    if (o.backend == Backend::Gloo) {
#ifdef ACCUM_WITH_GLOO
        // Gloo waits in the store for its peers' addresses (the meeting's store
        // polls, and gives up when the join is cancelled); its connection to a
        // peer cannot be interrupted: it is bounded by the options' timeout,
        // which is the budget here (every collective names its own timeout).
        auto scoped = c10::make_intrusive<c10d::PrefixStore>(meeting.prefix + "/pg", meeting.store);
        auto go = c10d::ProcessGroupGloo::Options::create(std::max(budget, std::chrono::milliseconds(100)));
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
    return backend; // connect() has checked that the build has it
}

} // namespace

const char* failure_kind_name(Kind kind) {
    switch (kind) {
    case Kind::PeerLost: return "peer-lost";
    case Kind::Timeout: return "timeout";
    case Kind::AddressInUse: return "address-in-use";
    case Kind::Unreachable: return "unreachable";
    case Kind::PeerFailed: return "peer-failed";
    case Kind::Failed: return "failed";
    }
    return "failed";
}

Kind classify_failure(const std::exception& e, bool waited_out) {
    // A question's failure; meet() turns a store not reached or served into its own error.
    if (const auto* store = dynamic_cast<const StoreError*>(&e))
        return store->kind() == StoreError::Kind::Timeout ? Kind::Timeout : Kind::PeerLost;
    switch (compat::c10d_error_type(e)) {
    case compat::C10dErrorType::Timeout:
    case compat::C10dErrorType::Store: return Kind::Timeout;
    case compat::C10dErrorType::Network: return Kind::PeerLost;
    // NCCL's collective failed: past its timeout it is one, else the peer's end.
    case compat::C10dErrorType::Backend: return waited_out ? Kind::Timeout : Kind::PeerLost;
    case compat::C10dErrorType::Unknown: break;
    }
#ifdef ACCUM_WITH_GLOO
    if (dynamic_cast<const gloo::IoException*>(&e)) return waited_out ? Kind::Timeout : Kind::PeerLost;
#endif
    return Kind::Failed;
}

// Which backend a run gets (what this build has, where the model is), and the
// --dist-timeout it waits with.
bool backend_built(Backend backend) {
#ifdef ACCUM_WITH_GLOO
    if (backend == Backend::Gloo) return true;
#endif
#ifdef ACCUM_WITH_NCCL
    if (backend == Backend::Nccl) return true;
#endif
    return backend == Backend::Auto;
}

Backend resolve_backend(Backend requested, bool on_cuda) {
    if (requested == Backend::Auto) {
        if (on_cuda && backend_built(Backend::Nccl)) return Backend::Nccl;
        if (backend_built(Backend::Gloo)) return Backend::Gloo;
        throw ConfigError("--backend auto: this build has neither Gloo (its headers were not found when it was "
                          "built) nor NCCL for a model on CUDA");
    }
    if (requested == Backend::Nccl) {
        if (!backend_built(Backend::Nccl))
            throw ConfigError("--backend nccl: this build has no NCCL (the LibTorch it was built with has no CUDA "
                              "or no NCCL); use --backend gloo");
        if (!on_cuda) throw ConfigError("--backend nccl needs the model on CUDA (--device cuda); use --backend gloo");
    }
    if (requested == Backend::Gloo && !backend_built(Backend::Gloo))
        throw ConfigError("--backend gloo: this build has no Gloo (its headers were not found when it was built)");
    return requested;
}

std::chrono::milliseconds parse_dist_timeout(double seconds) {
    if (!std::isfinite(seconds) || seconds <= 0 || seconds > 1e6)
        throw ConfigError("--dist-timeout must be a positive number of seconds (got " + std::to_string(seconds) + ")");
    return std::chrono::milliseconds(std::max<long long>(1, std::llround(seconds * 1000.0)));
}

std::unique_ptr<ProcessGroup> ProcessGroup::connect(const GroupOptions& options) {
    const auto& w = options.world;
    const std::string master = w.master_addr + ":" + std::to_string(w.master_port);
    // What world_from_environment, resolve_backend and parse_dist_timeout make sure of.
    if (w.world_size < 1 || w.rank < 0 || w.rank >= w.world_size || w.master_port < 1 || w.master_port > 65535 ||
        w.master_addr.empty() || options.backend == Backend::Auto || options.timeout.count() <= 0)
        throw ConfigError("process group: rank " + std::to_string(w.rank) + " of " + std::to_string(w.world_size) +
                          " at " + master + ", backend " + to_string(options.backend) + ", timeout " +
                          seconds_text(options.timeout) + ": not a group that can be joined");
    if (!backend_built(options.backend))
        throw ConfigError("--backend " + to_string(options.backend) + ": not in this build");
    // Gloo writes to its sockets with writev(): a peer that dies while this rank
    // sends would end it with SIGPIPE instead of an error naming the peer.
    // Python ignores SIGPIPE in every process; so does a rank here (unless the
    // program has chosen a handler of its own).
    struct sigaction old {};
    if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);

    const auto begun = Clock::now();
    const auto deadline = options.timeout + join_slack(options.timeout);
    // The join runs here, every wait of it looking at `cancel`, which the
    // watchdog cancels once the caller gives up (`abandon`) or the deadline
    // passes: each wait then ends within moments, and what was joined is let go.
    std::stop_source cancel;
    std::atomic<int> stage{0}; // 0: reaching the master, 1: waiting for the ranks, 2: connecting the backend
    auto given_up = [&] {
        const std::string who = rank_with_host(w) + ": ", within = seconds_text(deadline) + " (--dist-timeout)";
        if (Clock::now() < begun + deadline)
            throw DistributedError(Kind::Failed, w.rank, -1, who + "stopped waiting for the other ranks at " + master);
        if (stage == 0)
            throw DistributedError(Kind::Unreachable, w.rank, 0,
                                   who + "the master at " + master + " did not answer within " + within);
        throw DistributedError(Kind::Timeout, w.rank, -1,
                               who + (stage == 1 ? "the ranks did not all arrive at " + master + " within " + within +
                                                       ", and the master stopped answering"
                                                 : "connecting " + to_string(options.backend) +
                                                       " to the other ranks took more than " + within));
    };
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    try {
        const auto watch = watchdog().watch(
            begun + deadline, [&options] { return options.abandon && options.abandon(); }, [cancel]() mutable { cancel.request_stop(); });
        // The store (rank 0's own, or torchrun's agent's) and every rank of
        // this launch in it (rendezvous.h), then the backend.
        impl->meeting = meet(w, options.timeout, stage, cancel.get_token());
        stage = 2;
        impl->backend = make_backend(options, impl->meeting,
                                     std::chrono::duration_cast<std::chrono::milliseconds>(begun + deadline - Clock::now()));
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
    if (!impl_ || !impl_->failure) return;
    // After a failure Gloo's threads may still wait on a peer for up to the
    // timeout, and destroying the backend joins them: the watchdog releases it
    // (then the store, which it holds too) off the caller's thread, which goes
    // on at once; a process that lives on (the studio) gets all back in time.
    watchdog().dispose([backend = std::move(impl_->backend), store = std::move(impl_->meeting.store)]() mutable {
        backend.reset();
        store.reset();
    });
}

int ProcessGroup::rank() const { return impl_->options.world.rank; }
int ProcessGroup::world_size() const { return impl_->options.world.world_size; }
at::Device ProcessGroup::device() const { return impl_->device(); }
bool ProcessGroup::failed() const { return impl_->failure.has_value(); }

void ProcessGroup::announce_failure(const std::string& message) {
    publish_failure(impl_->meeting, message);
}

void ProcessGroup::all_reduce(at::Tensor& tensor, ReduceOp op) { all_reduce_as("all-reduce", tensor, op); }

void ProcessGroup::all_reduce_as(const std::string& what, at::Tensor& tensor, ReduceOp op) {
    impl_->run(what, [&] {
        std::vector<at::Tensor> tensors{tensor};
        c10d::AllreduceOptions ao;
        ao.reduceOp = op == ReduceOp::Max ? c10d::ReduceOp::MAX : c10d::ReduceOp::SUM;
        ao.timeout = impl_->options.timeout;
        return impl_->backend->allreduce(tensors, ao);
    });
}

void ProcessGroup::broadcast(at::Tensor& tensor) {
    impl_->run("broadcast", [&] {
        std::vector<at::Tensor> tensors{tensor};
        c10d::BroadcastOptions bo; // from rank 0
        bo.timeout = impl_->options.timeout;
        return impl_->backend->broadcast(tensors, bo);
    });
}

// An all-reduce of one value on the group's device, for either backend
// (ProcessGroupNCCL's own barrier guesses the device).
void ProcessGroup::barrier() {
    auto t = at::zeros({1}, at::TensorOptions().dtype(at::kFloat).device(device()));
    all_reduce_as("barrier", t, ReduceOp::Sum);
}

std::vector<double> ProcessGroup::all_reduce(std::vector<double> values, ReduceOp op) {
    if (values.empty()) return values;
    auto t = at::tensor(values, at::TensorOptions().dtype(at::kDouble)).to(device());
    all_reduce(t, op);
    const auto host = t.cpu().contiguous();
    const double* p = host.data_ptr<double>();
    return std::vector<double>(p, p + host.numel());
}

std::vector<bool> ProcessGroup::agree(const std::vector<std::uint64_t>& values) {
    // Two 32-bit halves are exact in float64; max(x) == -max(-x) == min(x) on every rank.
    std::vector<double> halves;
    for (const auto v : values) {
        const double hi = static_cast<double>(v >> 32), lo = static_cast<double>(v & 0xffffffffu);
        halves.insert(halves.end(), {hi, lo, -hi, -lo});
    }
    const auto m = all_reduce(halves, ReduceOp::Max);
    std::vector<bool> same;
    for (std::size_t i = 0; i < m.size(); i += 4) same.push_back(m[i] == -m[i + 2] && m[i + 1] == -m[i + 3]);
    return same;
}

} // namespace accum::dist
