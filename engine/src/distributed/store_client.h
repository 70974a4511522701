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
#include <string>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "distributed/watchdog.h"
#include "distributed/world.h"

namespace accum::dist {

// A token no other process draws: a meeting's, a question's of its own.
std::string random_token();

// How long one question may wait for its answer: the timeout, within 0.2 … 3 s.
std::chrono::milliseconds answer_timeout(std::chrono::milliseconds timeout);

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
