// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The rendezvous' store as this engine uses it: c10d's own TCPStore, rank 0's
// (served here) or torchrun's agent's (joined with c10d's client), every
// question to it bounded.
//
// c10d's client waits without a bound for an answer that does not come: over
// a link that went down, from a program on the port that is not a store, from
// a store of another protocol (1.13's client and 2.x's server). So every
// question runs under the watchdog (watchdog.h): unanswered within the answer
// timeout (at most 3 s), or once the token is cancelled, its sockets are shut
// down, it ends with StoreError, and so does every later one at once (the
// store counts as gone). Waits poll check() instead of blocking in the store,
// so that they end when their timeout passes or the token is cancelled.

#include <chrono>
#include <stdexcept>
#include <string>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "distributed/watchdog.h"
#include "distributed/world.h"

namespace accum::dist {

// Why a store could not be reached or served, as meet() reports it.
class StoreFailure : public std::runtime_error {
public:
    enum class Kind {
        Refused,     // nothing answered at host:port by the deadline
        NotAStore,   // something accepted the connection but did not answer this build's client
        Closed,      // the store closed the connection (its process ended)
        AddressInUse, // rank 0 cannot listen: another socket holds the port
        Failed,      // the caller stopped waiting, or the server could not start
    };
    StoreFailure(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    Kind kind() const { return kind_; }

private:
    Kind kind_;
};

// A token no other process draws: a meeting's, a question's of its own.
std::string random_token();

// How long one question may wait for its answer: the timeout, within 0.2 … 3 s.
std::chrono::milliseconds answer_timeout(std::chrono::milliseconds timeout);

// A client of the store at the world's master, once it has answered two
// questions of its own; tried until `deadline` while nothing listens. Throws
// StoreFailure (Refused, NotAStore, Closed; Failed once `cancel` is).
c10::intrusive_ptr<c10d::Store> client_store(const WorldInfo& w, std::chrono::milliseconds timeout,
                                             std::chrono::steady_clock::time_point deadline,
                                             const std::stop_token& cancel = {});

// Rank 0's own store, listening on MASTER_PORT on every interface. Throws
// StoreFailure (AddressInUse when another socket holds the port, else Failed).
c10::intrusive_ptr<c10d::Store> served_store(const WorldInfo& w, std::chrono::milliseconds timeout,
                                             const std::stop_token& cancel = {});

} // namespace accum::dist
