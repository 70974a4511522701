#pragma once
// A client of c10d's TCPStore that speaks the store's wire protocol itself:
// LibTorch 1.x's or 2.x's, whichever the server speaks. A rank joins a store
// served by a program built with another torch than this one — torchrun's agent
// store (Python's torch 2.x) from a build on LibTorch 1.13, where c10d's own
// client would hang (2.x servers take a VALIDATE first and number the queries
// from 1) — and every wait is bounded: a silent server, a closed connection or
// a program on the port that is not a store is an error within seconds.
//
// Keys are sent as c10d's TCPStore clients send them ("/" + key), so a rank
// using this client and one using c10d::TCPStore (rank 0 serving its own store)
// see the same keys.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

namespace accum::dist {

// The query numbering of LibTorch ≤ 1.13 (SET = 0 …) or ≥ 2 (VALIDATE = 0, SET = 1 …, PING).
enum class StoreProtocol { Torch1, Torch2 };
const char* store_protocol_name(StoreProtocol protocol); // "LibTorch 1.x", "LibTorch 2.x"

class StoreError : public std::runtime_error {
public:
    enum class Kind {
        Refused,   // nothing listens at host:port (yet)
        NotAStore, // something listens but does not answer as a store
        Timeout,   // the store did not answer in time
        Closed,    // the store closed the connection (its process ended)
        Failed,    // anything else (a name that does not resolve, …)
    };
    StoreError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    Kind kind() const { return kind_; }

private:
    Kind kind_;
};

// One connection to a store. Not thread-safe (ClientStore serialises its calls).
class StoreConnection {
public:
    using Clock = std::chrono::steady_clock;

    // Connects to host:port (a name or an address), retrying while nothing
    // listens there, until `deadline`; then learns the server's protocol,
    // `first` tried first (a 1.x server closes a 2.x VALIDATE at once; a 2.x
    // server answers its PING). A program that accepts the connection but gives
    // no answer within `answer_timeout` is not a store (NotAStore). `abandon`
    // (may be empty) stays with the connection: polled every 50 ms while it
    // connects and while any call waits for an answer, true gives up at once
    // (StoreError Failed), so that a thread that joins for a caller who has
    // stopped waiting ends within moments; the connection is then unusable.
    static std::unique_ptr<StoreConnection> open(const std::string& host, int port, Clock::time_point deadline,
                                                 StoreProtocol first, std::chrono::milliseconds answer_timeout,
                                                 std::function<bool()> abandon = {});
    ~StoreConnection();
    StoreConnection(const StoreConnection&) = delete;
    StoreConnection& operator=(const StoreConnection&) = delete;

    StoreProtocol protocol() const { return protocol_; }
    const std::string& endpoint() const { return endpoint_; } // "host:port"
    // Each call waits at most this long for the store's answer (StoreError Timeout).
    void set_answer_timeout(std::chrono::milliseconds timeout) { answer_timeout_ = timeout; }
    // What open() was given: the caller gave up.
    bool abandoned() const { return abandon_ && abandon_(); }
    const std::function<bool()>& abandon() const { return abandon_; }

    void set(const std::string& key, const std::vector<std::uint8_t>& value);
    // The value, or nullopt when the key is not there (a check first: a 1.x
    // server closes the connection of a GET for a missing key).
    std::optional<std::vector<std::uint8_t>> get_if_present(const std::string& key);
    std::int64_t add(const std::string& key, std::int64_t delta);
    bool check(const std::vector<std::string>& keys);
    std::int64_t num_keys();
    bool delete_key(const std::string& key);

private:
    StoreConnection(int fd, std::string endpoint, StoreProtocol protocol, std::chrono::milliseconds answer_timeout,
                    std::function<bool()> abandon);
    void send_all(const std::string& bytes);
    std::string receive(std::size_t size);
    std::uint8_t code(int query) const;

    int fd_;
    std::string endpoint_;
    StoreProtocol protocol_;
    std::chrono::milliseconds answer_timeout_;
    std::function<bool()> abandon_;
};

// A c10d::Store over a StoreConnection, for c10d and Gloo (the backend meets
// its peers through it): get() and wait() poll the store until the key is
// there or the timeout passes, then throw ("timed out"), or until the
// connection's `abandon` says so. Thread-safe. clone() (LibTorch 2.x) opens
// another connection, with the same `abandon`.
c10::intrusive_ptr<c10d::Store> make_client_store(std::unique_ptr<StoreConnection> connection,
                                                  std::chrono::milliseconds timeout);

// Another store (c10d's TCPStore, or the one above) whose get() and wait()
// poll it (check(), every 1 … 10 ms) and give up as soon as `abandon` says
// so, instead of blocking in the store for up to the timeout: for Gloo's
// connection, which waits there for its peers' addresses. Every other call
// goes straight through.
c10::intrusive_ptr<c10d::Store> make_abandonable_store(c10::intrusive_ptr<c10d::Store> store,
                                                       std::function<bool()> abandon);

} // namespace accum::dist
