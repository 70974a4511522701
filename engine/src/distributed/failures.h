// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What a failure of c10d, Gloo or the store is, told by the exception's type
// (and, for Gloo, by whether the operation had waited out its timeout), never
// by its wording: the rendezvous and the process group both report through it.

#include <chrono>
#include <exception>
#include <stdexcept>
#include <string>

#include "accum/errors.h"

namespace accum::dist {

// "peer-lost", "timeout", "address-in-use", "unreachable", "failed".
const char* failure_kind_name(DistributedError::Kind kind);

// "1.5 s": a duration as the messages say it.
std::string seconds_text(std::chrono::milliseconds t);

// The store failed, as this engine's store client (store_client.h) reports it
// whatever the LibTorch; meet() names the kind in its message.
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

// The kind of a failure caught from c10d, Gloo or the store. By type:
// StoreError by its kind; c10d's TimeoutError and (2.x) DistStoreError a
// timeout, DistNetworkError a lost peer; Gloo's I/O error a timeout when the
// operation had waited its whole timeout (`waited_out`), else a lost peer
// (its connection failed before); anything else Failed.
DistributedError::Kind classify_failure(const std::exception& e, bool waited_out = false);

} // namespace accum::dist
