#pragma once
// Exceptions the engine throws for failures that are the input's fault.

#include <stdexcept>
#include <string>

namespace accum {

// Data missing, unreadable or corrupt. The message names the file (and the line for CSV).
class DataError : public std::runtime_error {
public:
    explicit DataError(const std::string& message) : std::runtime_error(message) {}
};

// A configuration that cannot run (the message names the option).
class ConfigError : public std::runtime_error {
public:
    explicit ConfigError(const std::string& message) : std::runtime_error(message) {}
};

// A window's loss or gradient became non-finite (the run stops as diverged).
class DivergedError : public std::runtime_error {
public:
    explicit DivergedError(const std::string& message) : std::runtime_error(message) {}
};

// A failure of the data-parallel process group (accum-run exits with 6): a peer
// lost, a rendezvous or a collective past its timeout, the master's port taken,
// a master that cannot be reached. `rank()` is the rank that saw the failure;
// `peer()` the rank at fault when it is known, -1 when not.
class DistributedError : public std::runtime_error {
public:
    enum class Kind {
        PeerLost,     // a peer's connection closed: it died or left
        Timeout,      // a rendezvous or a collective did not complete in time
        AddressInUse, // the master could not listen on its port
        Unreachable,  // the master did not accept or did not answer
        Failed,       // any other error of the backend, or an earlier failure
    };
    DistributedError(Kind kind, int rank, int peer, const std::string& message)
        : std::runtime_error(message), kind_(kind), rank_(rank), peer_(peer) {}
    Kind kind() const { return kind_; }
    int rank() const { return rank_; }
    int peer() const { return peer_; }

private:
    Kind kind_;
    int rank_;
    int peer_;
};

} // namespace accum
