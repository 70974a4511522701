// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How the ranks of a run meet before their backend connects, in the store
// (store_client.h: rank 0's, or torchrun's agent's, which outlives its
// workers and keeps an earlier attempt's keys). So every meeting has keys of
// its own: rank 0 opens it under a fresh token ("accum/leader"), each rank
// registers under it with a nonce of its own, and rank 0 lists them ("roster")
// once all are there; a roster without this rank's nonce is an earlier
// attempt's. A rank that fails, before the meeting or during the run, leaves
// its message there ("failed/<rank>"): the others stop within a second or
// two, naming it. More: docs/ARCHITECTURE.md §4.5.

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "distributed/watchdog.h"
#include "distributed/world.h"

namespace accum::dist {

// A rank's process, as the messages name it.
struct Peer {
    int pid = -1;
    std::string address; // its address toward the master (address_toward), as the messages name its host; may be empty
    std::string nonce;   // its own for this meeting: a roster without it is an earlier attempt's
};

struct Meeting {
    WorldInfo world;                       // this rank's place in it
    std::chrono::milliseconds timeout{};   // --dist-timeout
    c10::intrusive_ptr<c10d::Store> store{};
    std::string prefix{};                  // "accum/<token>": this meeting's keys
    std::vector<Peer> peers{};             // by rank
    bool serves_store = false; // this process serves the store (rank 0 without an agent)
};

// Meets the other ranks: reaches the store (`stage` 0), waits until every rank
// has registered under rank 0's token (`stage` 1). Throws DistributedError:
// AddressInUse (rank 0 cannot listen), Unreachable, Timeout (naming the ranks
// that did not arrive), PeerFailed (a rank left its failure: quoted).
// `cancel`, once cancelled, ends the meeting within moments (DistributedError
// Failed), for a caller that has stopped waiting; the store made here keeps
// looking at it (its waits for the backend's keys too: store_client.h), so it
// must stay uncancelled once joined. Every question to the store is bounded.
Meeting meet(const WorldInfo& world, std::chrono::milliseconds timeout, std::atomic<int>& stage,
             const std::stop_token& cancel = {});

// During the run: this rank's failure for the others to read (and, from the
// process that serves the store, a wait of at most `linger` until `readers` of
// them have; -1: all the others). Never throws.
void publish_failure(const Meeting& meeting, const std::string& message,
                     std::chrono::milliseconds linger = std::chrono::seconds(3), int readers = -1);
// A failure another rank published: its rank and its message. Marks it read.
// Bounded by the store's answer (a store that is gone: nullopt).
std::optional<std::pair<int, std::string>> published_failure(const Meeting& meeting);

// After a lost connection: the ranks that do not answer a roll call in the
// store within `wait` (every rank that lost a peer answers it at once, so one
// absent has ended, or stalled). Throws StoreError when the store is gone.
std::vector<int> absent_ranks(const Meeting& meeting, std::chrono::milliseconds wait);

} // namespace accum::dist
