#include "distributed/store_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include <torch/version.h>

namespace accum::dist {

namespace {

using Clock = StoreConnection::Clock;
using Kind = StoreError::Kind;

// The queries this client sends, in the order of LibTorch 2.x's
// c10d::detail::QueryType (TCPStoreBackend.hpp). LibTorch 1.x numbers the same
// queries from SET = 0 and has neither VALIDATE nor PING.
enum Query { kValidate, kSet, kCompareSet, kGet, kAdd, kCheck, kWait, kGetNumKeys, kDeleteKey, kPing = 13 };
// What a 2.x server expects first from every client (c10d::detail::validationMagicNumber).
constexpr std::uint32_t kValidationMagic = 0x3C85F7CE;
constexpr std::uint8_t kCheckReady = 0; // CheckResponseType::READY, in both

// c10d's TCPStore clients put "/" before every key (TCPStore::keyPrefix_).
std::string wire_key(const std::string& key) { return "/" + key; }

template <class T>
void append_value(std::string& out, T value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof value);
}
void append_bytes(std::string& out, const void* data, std::size_t size) {
    append_value<std::uint64_t>(out, size);
    out.append(static_cast<const char*>(data), size);
}
void append_string(std::string& out, const std::string& s) { append_bytes(out, s.data(), s.size()); }

int remaining_ms(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

// How often a wait looks whether its caller has given up (`abandon`).
constexpr int kAbandonLookMs = 50;

[[noreturn]] void stopped_waiting(const std::string& store_name) {
    throw StoreError(Kind::Failed, "stopped waiting for " + store_name);
}

// A connected socket to one of host:port's addresses, or -1 with `refused`
// true when nothing listens (yet) and `error` set otherwise.
int connect_once(const std::string& host, int port, Clock::time_point deadline, bool& refused, std::string& error,
                 const std::function<bool()>& abandon) {
    refused = false;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
        error = std::string("cannot resolve ") + host + ": " + ::gai_strerror(rc);
        return -1;
    }
    int fd = -1;
    bool any_refused = false;
    for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
        const int s = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (s < 0) continue;
        int rc = ::connect(s, a->ai_addr, a->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS) {
            // At most a second (a host that drops the SYN), looking at `abandon` meanwhile.
            pollfd p{s, POLLOUT, 0};
            const auto until = std::min(deadline, Clock::now() + std::chrono::seconds(1));
            int ready = 0;
            while ((ready = ::poll(&p, 1, std::min(remaining_ms(until), kAbandonLookMs))) == 0 && Clock::now() < until &&
                   !(abandon && abandon())) {
            }
            int so_error = 0;
            socklen_t len = sizeof so_error;
            if (ready == 1 && ::getsockopt(s, SOL_SOCKET, SO_ERROR, &so_error, &len) == 0 && so_error == 0) rc = 0;
            else errno = ready == 1 ? so_error : ETIMEDOUT;
        }
        if (rc == 0) {
            const int flags = ::fcntl(s, F_GETFL);
            ::fcntl(s, F_SETFL, flags & ~O_NONBLOCK);
            const int one = 1;
            ::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            fd = s;
            break;
        }
        if (errno == ECONNREFUSED || errno == ETIMEDOUT || errno == EHOSTUNREACH || errno == ENETUNREACH)
            any_refused = true;
        else
            error = std::string("cannot connect to ") + host + ":" + service + ": " + std::strerror(errno);
        ::close(s);
    }
    ::freeaddrinfo(found);
    if (fd < 0 && any_refused) refused = true;
    return fd;
}

} // namespace

const char* store_protocol_name(StoreProtocol protocol) {
    return protocol == StoreProtocol::Torch1 ? "LibTorch 1.x" : "LibTorch 2.x";
}

StoreConnection::StoreConnection(int fd, std::string endpoint, StoreProtocol protocol,
                                 std::chrono::milliseconds answer_timeout, std::function<bool()> abandon)
    : fd_(fd), endpoint_(std::move(endpoint)), protocol_(protocol), answer_timeout_(answer_timeout),
      abandon_(std::move(abandon)) {}

StoreConnection::~StoreConnection() {
    if (fd_ >= 0) ::close(fd_);
}

std::uint8_t StoreConnection::code(int query) const {
    if (protocol_ == StoreProtocol::Torch2) return static_cast<std::uint8_t>(query);
    // LibTorch 1.x: SET 0, COMPARE_SET 1, GET 2, ADD 3, CHECK 4, WAIT 5, GETNUMKEYS 6, WATCH_KEY 7, DELETE_KEY 8.
    return static_cast<std::uint8_t>(query == kDeleteKey ? 8 : query - 1);
}

void StoreConnection::send_all(const std::string& bytes) {
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::send(fd_, p, left, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw StoreError(Kind::Closed, "the store at " + endpoint_ + " closed the connection (" +
                                               std::strerror(n < 0 ? errno : EPIPE) + ")");
        p += n;
        left -= static_cast<std::size_t>(n);
    }
}

std::string StoreConnection::receive(std::size_t size) {
    std::string out(size, '\0');
    std::size_t got = 0;
    const auto deadline = Clock::now() + answer_timeout_;
    while (got < size) {
        pollfd p{fd_, POLLIN, 0};
        const int ready = ::poll(&p, 1, abandon_ ? std::min(remaining_ms(deadline), kAbandonLookMs) : remaining_ms(deadline));
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0 && abandoned()) stopped_waiting("the store at " + endpoint_);
        if (ready == 0 && Clock::now() < deadline) continue;
        if (ready == 0)
            throw StoreError(Kind::Timeout, "the store at " + endpoint_ + " did not answer within " +
                                                std::to_string(answer_timeout_.count()) + " ms (timed out)");
        const ssize_t n = ::recv(fd_, out.data() + got, size - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw StoreError(Kind::Closed, "the store at " + endpoint_ + " closed the connection (" +
                                               (n < 0 ? std::strerror(errno) : "end of file") + ")");
        got += static_cast<std::size_t>(n);
    }
    return out;
}

std::unique_ptr<StoreConnection> StoreConnection::open(const std::string& host, int port, Clock::time_point deadline,
                                                       StoreProtocol first, std::chrono::milliseconds answer_timeout,
                                                       std::function<bool()> abandon) {
    const std::string endpoint = host + ":" + std::to_string(port);
    const StoreProtocol order[2] = {first, first == StoreProtocol::Torch1 ? StoreProtocol::Torch2 : StoreProtocol::Torch1};
    std::string first_answer; // what the first protocol's attempt met
    for (int attempt = 0; attempt < 2; ++attempt) {
        const StoreProtocol protocol = order[attempt];
        int fd = -1;
        for (;;) { // until something listens
            bool refused = false;
            std::string error;
            fd = connect_once(host, port, deadline, refused, error, abandon);
            if (fd >= 0) break;
            if (abandon && abandon()) stopped_waiting("the store at " + endpoint);
            if (!refused) throw StoreError(Kind::Failed, error);
            if (Clock::now() >= deadline)
                throw StoreError(Kind::Refused, "nothing listened at " + endpoint + " (connection refused)");
            std::this_thread::sleep_for(std::chrono::milliseconds(kAbandonLookMs));
        }
        auto connection =
            std::unique_ptr<StoreConnection>(new StoreConnection(fd, endpoint, protocol, answer_timeout, abandon));
        try {
            std::string hello;
            if (protocol == StoreProtocol::Torch2) {
                // c10d's 2.x client: VALIDATE with the magic number, then PING with a
                // nonce the server sends back.
                const auto nonce = static_cast<std::uint32_t>(::getpid());
                append_value<std::uint8_t>(hello, kValidate);
                append_value<std::uint32_t>(hello, kValidationMagic);
                append_value<std::uint8_t>(hello, kPing);
                append_value<std::uint32_t>(hello, nonce);
                connection->send_all(hello);
                std::uint32_t back = 0;
                const auto reply = connection->receive(sizeof back);
                std::memcpy(&back, reply.data(), sizeof back);
                if (back != nonce)
                    throw StoreError(Kind::NotAStore, "the program at " + endpoint + " answered a store's PING wrongly");
            } else {
                // A question with an answer and no effect: how many keys.
                connection->num_keys();
            }
            return connection;
        } catch (const StoreError& e) {
            if (connection->abandoned()) throw; // the caller gave up: no second try
            // A 1.x server closes a connection whose first query it cannot read,
            // a 2.x one (libuv's) leaves a query before VALIDATE unanswered: try
            // the other protocol once. Silence to both is no store of either kind.
            const bool other_may_answer = e.kind() == Kind::Closed || e.kind() == Kind::Timeout;
            if (!other_may_answer || attempt == 1) {
                const std::string also = first_answer.empty() ? "" : " (" + first_answer + ")";
                throw StoreError(other_may_answer ? Kind::NotAStore : e.kind(),
                                 "the program at " + endpoint + " accepted the connection but does not answer as a "
                                 "c10d store: " + e.what() + also);
            }
            first_answer = std::string(store_protocol_name(protocol)) + "'s query: " + e.what();
        }
    }
    throw StoreError(Kind::NotAStore, "no store at " + endpoint); // not reached
}

void StoreConnection::set(const std::string& key, const std::vector<std::uint8_t>& value) {
    std::string q;
    append_value<std::uint8_t>(q, code(kSet));
    append_string(q, wire_key(key));
    append_bytes(q, value.data(), value.size());
    send_all(q);
}

bool StoreConnection::check(const std::vector<std::string>& keys) {
    std::string q;
    append_value<std::uint8_t>(q, code(kCheck));
    append_value<std::uint64_t>(q, keys.size());
    for (const auto& k : keys) append_string(q, wire_key(k));
    send_all(q);
    return static_cast<std::uint8_t>(receive(1)[0]) == kCheckReady;
}

std::optional<std::vector<std::uint8_t>> StoreConnection::get_if_present(const std::string& key) {
    if (!check({key})) return std::nullopt;
    std::string q;
    append_value<std::uint8_t>(q, code(kGet));
    append_string(q, wire_key(key));
    send_all(q);
    std::uint64_t size = 0;
    const auto head = receive(sizeof size);
    std::memcpy(&size, head.data(), sizeof size);
    if (size > (std::uint64_t(1) << 30))
        throw StoreError(Kind::Failed, "the store at " + endpoint_ + " sent a value of " + std::to_string(size) + " bytes");
    const auto body = receive(static_cast<std::size_t>(size));
    return std::vector<std::uint8_t>(body.begin(), body.end());
}

std::int64_t StoreConnection::add(const std::string& key, std::int64_t delta) {
    std::string q;
    append_value<std::uint8_t>(q, code(kAdd));
    append_string(q, wire_key(key));
    append_value<std::int64_t>(q, delta);
    send_all(q);
    std::int64_t value = 0;
    const auto reply = receive(sizeof value);
    std::memcpy(&value, reply.data(), sizeof value);
    return value;
}

std::int64_t StoreConnection::num_keys() {
    std::string q;
    append_value<std::uint8_t>(q, code(kGetNumKeys));
    send_all(q);
    std::int64_t value = 0;
    const auto reply = receive(sizeof value);
    std::memcpy(&value, reply.data(), sizeof value);
    return value;
}

bool StoreConnection::delete_key(const std::string& key) {
    std::string q;
    append_value<std::uint8_t>(q, code(kDeleteKey));
    append_string(q, wire_key(key));
    send_all(q);
    std::int64_t deleted = 0;
    const auto reply = receive(sizeof deleted);
    std::memcpy(&deleted, reply.data(), sizeof deleted);
    return deleted > 0;
}

namespace {

// Waits for `keys` by asking check() every 1 … 10 ms: a wait that can end
// between two questions, when the timeout passes ("timed out") or `abandon`
// says so.
void poll_until_present(c10d::Store& store, const std::vector<std::string>& keys, std::chrono::milliseconds timeout,
                        const std::string& store_name, const std::function<bool()>& abandon) {
    const auto deadline = timeout == c10d::Store::kNoTimeout ? Clock::time_point::max() : Clock::now() + timeout;
    for (auto pause = std::chrono::milliseconds(1);; pause = std::min(pause * 2, std::chrono::milliseconds(10))) {
        if (store.check(keys)) return;
        if (abandon && abandon()) stopped_waiting(store_name);
        if (Clock::now() >= deadline)
            throw std::runtime_error(store_name + ": wait timed out after " + std::to_string(timeout.count()) +
                                     " ms for " + keys.front() +
                                     (keys.size() > 1 ? " and " + std::to_string(keys.size() - 1) + " more" : ""));
        std::this_thread::sleep_for(pause);
    }
}

class ClientStore final : public c10d::Store {
public:
    ClientStore(std::unique_ptr<StoreConnection> connection, std::chrono::milliseconds timeout, std::string host,
                int port)
        : c10d::Store(timeout), connection_(std::move(connection)), host_(std::move(host)), port_(port) {}

    void set(const std::string& key, const std::vector<uint8_t>& value) override {
        std::lock_guard<std::mutex> lock(mutex_);
        connection_->set(key, value);
    }
    std::vector<uint8_t> get(const std::string& key) override {
        wait({key}, timeout_);
        std::lock_guard<std::mutex> lock(mutex_);
        auto value = connection_->get_if_present(key);
        if (!value) throw std::runtime_error("store at " + connection_->endpoint() + ": key " + key + " vanished");
        return std::move(*value);
    }
    int64_t add(const std::string& key, int64_t value) override {
        std::lock_guard<std::mutex> lock(mutex_);
        return connection_->add(key, value);
    }
    bool deleteKey(const std::string& key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        return connection_->delete_key(key);
    }
    bool check(const std::vector<std::string>& keys) override {
        std::lock_guard<std::mutex> lock(mutex_);
        return connection_->check(keys);
    }
    int64_t getNumKeys() override {
        std::lock_guard<std::mutex> lock(mutex_);
        return connection_->num_keys();
    }
    void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
    void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
        // Polled: both protocols have CHECK; a 2.x WAIT past its deadline would
        // need CANCEL_WAIT, and a 1.x one leaves the connection unusable.
        poll_until_present(*this, keys, timeout, "the store at " + connection_->endpoint(), connection_->abandon());
    }
#if TORCH_VERSION_MAJOR >= 2
    c10::intrusive_ptr<c10d::Store> clone() override {
        auto connection = StoreConnection::open(host_, port_, Clock::now() + timeout_, connection_->protocol(),
                                                std::chrono::seconds(5), connection_->abandon());
        return c10::make_intrusive<ClientStore>(std::move(connection), timeout_, host_, port_);
    }
#endif

private:
    std::mutex mutex_;
    std::unique_ptr<StoreConnection> connection_;
    std::string host_;
    int port_;
};

// Gloo's waits for its peers' addresses, made to give up when the join does.
class AbandonableStore final : public c10d::Store {
public:
    AbandonableStore(c10::intrusive_ptr<c10d::Store> store, std::function<bool()> abandon)
        : c10d::Store(store->getTimeout()), store_(std::move(store)), abandon_(std::move(abandon)) {}

    void set(const std::string& key, const std::vector<uint8_t>& value) override { store_->set(key, value); }
    std::vector<uint8_t> get(const std::string& key) override {
        wait({key}, timeout_);
        return store_->get(key);
    }
    int64_t add(const std::string& key, int64_t value) override { return store_->add(key, value); }
    bool deleteKey(const std::string& key) override { return store_->deleteKey(key); }
    bool check(const std::vector<std::string>& keys) override { return store_->check(keys); }
    int64_t getNumKeys() override { return store_->getNumKeys(); }
    void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
    void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
        poll_until_present(*store_, keys, timeout, "the store", abandon_);
    }
#if TORCH_VERSION_MAJOR >= 2
    c10::intrusive_ptr<c10d::Store> clone() override {
        return c10::make_intrusive<AbandonableStore>(store_->clone(), abandon_);
    }
#endif

private:
    c10::intrusive_ptr<c10d::Store> store_;
    std::function<bool()> abandon_;
};

} // namespace

c10::intrusive_ptr<c10d::Store> make_abandonable_store(c10::intrusive_ptr<c10d::Store> store,
                                                       std::function<bool()> abandon) {
    return c10::make_intrusive<AbandonableStore>(std::move(store), std::move(abandon));
}

c10::intrusive_ptr<c10d::Store> make_client_store(std::unique_ptr<StoreConnection> connection,
                                                  std::chrono::milliseconds timeout) {
    const std::string endpoint = connection->endpoint();
    const auto colon = endpoint.rfind(':');
    return c10::make_intrusive<ClientStore>(std::move(connection), timeout, endpoint.substr(0, colon),
                                            std::stoi(endpoint.substr(colon + 1)));
}

} // namespace accum::dist
