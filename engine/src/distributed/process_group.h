// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The ranks of a data-parallel run joined by c10d: they meet in a TCPStore
// (rendezvous.h), then the collectives run on ProcessGroupGloo (CPU tensors),
// or ProcessGroupNCCL (CUDA tensors) where the build has it.
//
// Every wait is bounded by the timeout (--dist-timeout): joining fails within
// 1.5 × timeout (at most timeout + 5 s), a collective within timeout + 2 s, and
// a peer that dies mid-collective is seen at once. Every failure surfaces as
// accum::DistributedError naming this rank and, when it can be told, the rank
// at fault; after one, every call throws the same error. Not thread-safe: one
// thread makes every call, in the same order on every rank. The design:
// docs/ARCHITECTURE.md §4.5.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "accum/errors.h"
#include "accum/run_config.h"
#include "distributed/world.h"

namespace accum::dist {

using Backend = accum::Backend; // the run's --backend, parsed by run_config's option table

// Whether this build can use the backend (Auto: always).
bool backend_built(Backend backend);
// The backend a run uses. Auto: NCCL when the model is on CUDA and the build has
// NCCL, else Gloo. Throws ConfigError (naming --backend) when the requested one is
// not in this build, or NCCL is asked for a model on the CPU.
Backend resolve_backend(Backend requested, bool on_cuda);

// --dist-timeout in seconds (> 0 and finite) as a duration; ConfigError otherwise.
std::chrono::milliseconds parse_dist_timeout(double seconds);

enum class ReduceOp { Sum, Max };

// The kind as messages and records name it: "peer-lost", "peer-failed", "timeout", …
const char* failure_kind_name(DistributedError::Kind kind);

// The kind of a failure caught from c10d, Gloo or the store, told by its type,
// never by its wording: StoreError by its kind; c10d's TimeoutError and (2.x)
// DistStoreError a timeout, DistNetworkError a lost peer; Gloo's I/O error
// (its one type for both) a timeout when the operation had waited its whole
// timeout (`waited_out`), else a lost peer; anything else Failed.
DistributedError::Kind classify_failure(const std::exception& e, bool waited_out = false);

struct GroupOptions {
    WorldInfo world;                  // rank, world_size, master_addr, master_port
    Backend backend = Backend::Gloo;  // resolved (not Auto)
    std::chrono::milliseconds timeout{std::chrono::seconds(60)};
    int cuda_device = 0;              // NCCL: the CUDA device of this rank's tensors
    // Polled while joining (every 10 ms, on the watchdog's thread: thread-safe):
    // true gives up within moments (DistributedError Failed), e.g. when a
    // program that started the other ranks sees one end, or the person asked to
    // stop. Never called after connect() returns.
    std::function<bool()> abandon;
    // Polled while a collective waits (every 10 ms): true gives it up, and the
    // group fails (DistributedError). A program stopping while a peer stalls
    // need not wait out the timeout.
    std::function<bool()> abort;
};

class ProcessGroup {
public:
    // Joins the others: rank 0 listens on MASTER_PORT (on every interface), all
    // connect to MASTER_ADDR, wait until every rank has arrived, then connect the
    // backend. Throws DistributedError (AddressInUse, Unreachable, Timeout, …)
    // and ConfigError for options that cannot work.
    static std::unique_ptr<ProcessGroup> connect(const GroupOptions& options);
    ~ProcessGroup();
    ProcessGroup(const ProcessGroup&) = delete;
    ProcessGroup& operator=(const ProcessGroup&) = delete;

    int rank() const;
    int world_size() const;
    // The tensors' device for collectives: CPU (Gloo) or this rank's CUDA device (NCCL).
    at::Device device() const;

    // In place, across all ranks: one collective call each. The tensor must be
    // contiguous and dense, on device().
    void all_reduce(at::Tensor& tensor, ReduceOp op = ReduceOp::Sum);
    void broadcast(at::Tensor& tensor); // rank 0's into every rank's
    void barrier();

    // Values that do not depend on a tensor's device or an RNG: element-wise
    // across the ranks, in float64 (a window's loss, sample or token counts, a
    // flag), one call for the whole vector.
    std::vector<double> all_reduce(std::vector<double> values, ReduceOp op = ReduceOp::Sum);
    // For each value, whether every rank passed the same (e.g. a hash of the config).
    std::vector<bool> agree(const std::vector<std::uint64_t>& values);
    bool all_agree(std::uint64_t value) { return agree({value}).front(); }

    bool failed() const;

    // This rank failed for a reason of its own (a write that failed, out of
    // memory): `message` goes where the others look while they wait in a
    // collective, so that they stop within a second or so naming it. From the
    // process that serves the store (rank 0 without torchrun's agent), waits at
    // most 3 s for them to have read it. Never throws.
    void announce_failure(const std::string& message);

private:
    void all_reduce_as(const std::string& what, at::Tensor& tensor, ReduceOp op);
    struct Impl;
    explicit ProcessGroup(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

} // namespace accum::dist
