// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The rendezvous' store: c10d's own TCPStore, rank 0's (served here) or
// torchrun's agent's (joined with c10d's client), every question bounded:
// c10d's client waits without a bound for an answer that does not come, so a
// question runs under a watch (watchdog.h) that shuts its sockets down when
// the answer is late (at most 3 s) or the token is cancelled; it ends with
// StoreError, and so does every later one (the store counts as gone). Waits
// poll check(). Why and how: docs/ARCHITECTURE.md §4.5.

#include <chrono>
#include <stdexcept>
#include <string>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "distributed/watchdog.h"
#include "distributed/world.h"

namespace accum::dist {

// The store failed, as this client reports it whatever the LibTorch; meet()
// names the kind in its message.
class StoreError : public std::runtime_error {
public:
    enum class Kind {
        Timeout,      // a question unanswered in time
        Closed,       // the connection failed (the store's process ended)
        Refused,      // nothing answered at host:port by the deadline
        NotAStore,    // something accepted the connection but did not answer this build's client
        AddressInUse, // rank 0 cannot listen: another socket holds the port
        Failed,       // the caller stopped waiting, or the server could not start
    };
    StoreError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    Kind kind() const { return kind_; }

private:
    Kind kind_;
};

// A token no other process draws: a meeting's, a question's of its own.
std::string random_token();

// A client of the store at the world's master, once it has answered two
// questions of its own; tried until `deadline` while nothing listens. Throws
// StoreError (Refused, NotAStore, Closed; Failed once `cancel` is).
c10::intrusive_ptr<c10d::Store> client_store(const WorldInfo& w, std::chrono::milliseconds timeout,
                                             std::chrono::steady_clock::time_point deadline,
                                             const std::stop_token& cancel = {});

// Rank 0's own store, listening on MASTER_PORT on every interface. Throws
// StoreError (AddressInUse when another socket holds the port, else Failed).
c10::intrusive_ptr<c10d::Store> served_store(const WorldInfo& w, std::chrono::milliseconds timeout,
                                             const std::stop_token& cancel = {});

} // namespace accum::dist
