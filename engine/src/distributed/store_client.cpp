// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed/store_client.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "accum/errors.h"
#include "distributed/watchdog.h"
#include "torch_compat.h"

namespace accum::dist {

namespace {

// How long one question may wait for its answer before the store counts as
// gone: the timeout, within 0.2 … 3 s.
std::chrono::milliseconds answer_timeout(std::chrono::milliseconds timeout) {
    return std::clamp<std::chrono::milliseconds>(timeout, std::chrono::milliseconds(200), std::chrono::seconds(3));
}

// This process's sockets, by inode (a descriptor number reused is another
// socket), with their descriptors; with `port`, only those whose peer is at
// it. The one place the engine touches c10d's sockets: a store's are found
// among those opened with it, and shut down when its answer is late.
std::map<ino_t, int> sockets(int port = -1) {
    rlimit limit{};
    int highest = 1024;
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        highest = static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 65536));
    std::map<ino_t, int> found;
    for (int fd = 0; fd < highest; ++fd) {
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
        sockaddr_storage peer{};
        socklen_t size = sizeof peer;
        int peer_port = -1;
        if (port >= 0 && ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &size) == 0) {
            if (peer.ss_family == AF_INET) peer_port = ntohs(reinterpret_cast<sockaddr_in*>(&peer)->sin_port);
            if (peer.ss_family == AF_INET6) peer_port = ntohs(reinterpret_cast<sockaddr_in6*>(&peer)->sin6_port);
        }
        if (port < 0 || peer_port == port) found.emplace(st.st_ino, fd);
    }
    return found;
}

using MakeStore = std::function<c10::intrusive_ptr<c10d::Store>()>;
c10::intrusive_ptr<c10d::Store> bounded_store(int port, std::chrono::milliseconds answer, const std::stop_token& cancel,
                                              const MakeStore& make);

// c10d's store with every question asked on the caller's thread under a
// watch: unanswered past `answer` (or once `cancel` is), its own sockets are
// cut, the question ends with StoreError, and so does every later one at once.
class BoundedStore final : public c10d::Store {
public:
    BoundedStore(c10::intrusive_ptr<c10d::Store> store, int port, std::set<ino_t> sockets,
                 std::chrono::milliseconds answer, std::stop_token cancel)
        : c10d::Store(store->getTimeout()), store_(std::move(store)), port_(port), sockets_(std::move(sockets)),
          answer_(answer), cancel_(std::move(cancel)) {}

    void set(const std::string& key, const std::vector<uint8_t>& value) override {
        ask([&](c10d::Store& s) { s.set(key, value); return 0; });
    }
    std::vector<uint8_t> get(const std::string& key) override {
        wait({key}, timeout_);
        return ask([&](c10d::Store& s) { return s.get(key); });
    }
    int64_t add(const std::string& key, int64_t value) override {
        return ask([&](c10d::Store& s) { return s.add(key, value); });
    }
    bool deleteKey(const std::string& key) override {
        return ask([&](c10d::Store& s) { return s.deleteKey(key); });
    }
    bool check(const std::vector<std::string>& keys) override {
        return ask([&](c10d::Store& s) { return s.check(keys); });
    }
    int64_t getNumKeys() override {
        return ask([](c10d::Store& s) { return s.getNumKeys(); });
    }
    void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
    // check() every 1 … 10 ms: a wait that ends between two questions, when
    // its timeout passes or `cancel` says so.
    void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
        const auto deadline = timeout == kNoTimeout ? Clock::time_point::max() : Clock::now() + timeout;
        for (auto pause = std::chrono::milliseconds(1);; pause = std::min(pause * 2, std::chrono::milliseconds(10))) {
            if (check(keys)) return;
            if (cancel_.stop_requested()) throw StoreError(StoreError::Kind::Closed, "stopped waiting for the store");
            if (Clock::now() >= deadline)
                throw StoreError(StoreError::Kind::Timeout,
                                 "the store: wait timed out after " + seconds_text(timeout) + " for " + keys.front() +
                                     (keys.size() > 1 ? " and " + std::to_string(keys.size() - 1) + " more" : ""));
            std::this_thread::sleep_for(pause);
        }
    }
#if ACCUM_C10D_STORE_CLONE
    // The copy's own connection is bounded as the first one's was.
    c10::intrusive_ptr<c10d::Store> clone() override {
        return bounded_store(port_, answer_, cancel_, [this] { return store_->clone(); });
    }
#endif

private:
    template <class Question>
    auto ask(Question question) -> decltype(question(std::declval<c10d::Store&>())) {
        if (gone_) throw StoreError(StoreError::Kind::Timeout, "the store did not answer an earlier question");
        const auto watch = watchdog().watch(Clock::now() + answer_, cancel_, [this] {
            gone_ = true;
            for (const auto& [id, fd] : sockets(port_))
                if (sockets_.count(id)) ::shutdown(fd, SHUT_RDWR);
        });
        try {
            return question(*store_);
        } catch (const std::exception& e) {
            // c10d's timeouts (a typed error in both lines) are timeouts, every
            // other failure of a question a closed connection.
            const auto type = compat::c10d_error_type(e);
            const bool timeout = type == compat::C10dErrorType::Timeout || type == compat::C10dErrorType::Store;
            if (!watch->fired)
                throw StoreError(timeout ? StoreError::Kind::Timeout : StoreError::Kind::Closed,
                                 "the store: " + error_text(e));
            if (cancel_.stop_requested()) throw StoreError(StoreError::Kind::Closed, "stopped waiting for the store");
            throw StoreError(StoreError::Kind::Timeout, "the store did not answer within " + seconds_text(answer_));
        }
    }

    c10::intrusive_ptr<c10d::Store> store_;
    int port_;
    std::set<ino_t> sockets_; // c10d's client's own (by inode)
    std::chrono::milliseconds answer_;
    std::stop_token cancel_;
    std::atomic<bool> gone_{false}; // its sockets were cut: no question gets an answer
};

// Makes a store with `make` (c10d's TCPStore with its greeting and a probe, or
// a clone) under a watch: past `answer`, or once `cancel` is, the sockets it
// has opened to `port` are shut down (again while c10d retries), so that it
// throws instead of waiting on: StoreError Timeout once it had to. Bounded.
c10::intrusive_ptr<c10d::Store> bounded_store(int port, std::chrono::milliseconds answer, const std::stop_token& cancel,
                                              const MakeStore& make) {
    const auto before = sockets();
    bool shut = false;
    c10::intrusive_ptr<c10d::Store> store;
    std::exception_ptr error;
    std::string reason; // c10d's, when `make` failed
    {
        const auto watch = watchdog().watch(Clock::now() + answer, cancel, [&] {
            for (const auto& [id, fd] : sockets(port))
                if (!before.count(id)) shut = ::shutdown(fd, SHUT_RDWR) == 0 || shut;
        });
        try {
            store = make();
        } catch (const std::exception& e) {
            error = std::current_exception();
            reason = ": " + error_text(e);
        }
    }
    // Cut, even as the answer came (only the watch's action sets `shut`).
    if (shut) throw StoreError(StoreError::Kind::Timeout, "no answer within " + seconds_text(answer) + reason);
    if (error) std::rethrow_exception(error);
    std::set<ino_t> opened;
    for (const auto& [id, fd] : sockets(port))
        if (!before.count(id)) opened.insert(id);
    return c10::make_intrusive<BoundedStore>(store, port, std::move(opened), answer, cancel);
}

// Whether something accepts a TCP connection at host:port now (within a second);
// `why` says what stopped it otherwise. Nothing is sent.
bool accepts_connections(const std::string& host, int port, std::string& why) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
        why = host + ": " + ::gai_strerror(rc);
        return false;
    }
    const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, ::freeaddrinfo);
    why = "nothing listens there";
    const timeval second{1, 0}; // SO_SNDTIMEO bounds connect() too (Linux)
    for (const addrinfo* a = found; a; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &second, sizeof second);
        const bool accepted = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0;
        if (!accepted) why = errno == EINPROGRESS ? "the connection was not accepted in time" : std::strerror(errno);
        ::close(fd);
        if (accepted) return true;
    }
    return false;
}

// Whether another socket holds `port` (a bind of its own fails with
// EADDRINUSE): the cause of a store server that cannot start, told by errno.
bool port_taken(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    const bool taken = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno == EADDRINUSE;
    ::close(fd);
    return taken;
}

} // namespace

std::string random_token() {
    std::random_device device;
    return std::to_string(device()) + "-" + std::to_string(device()) + "-" + std::to_string(::getpid());
}

c10::intrusive_ptr<c10d::Store> client_store(const WorldInfo& w, std::chrono::milliseconds timeout,
                                             Clock::time_point deadline, const std::stop_token& cancel) {
    const auto answer = answer_timeout(timeout);
    std::string last_reason = "nothing listens there";
    for (;;) {
        if (cancel.stop_requested()) throw StoreError(StoreError::Kind::Failed, "stopped waiting for the store");
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) throw StoreError(StoreError::Kind::Refused, last_reason);
        // c10d retries a refused connection itself, sleeping between tries
        // longer than a caller who stops waiting should wait: it is asked only
        // once something accepts connections there.
        if (std::string why; !accepts_connections(w.master_addr, w.master_port, why)) {
            last_reason = why;
            std::this_thread::sleep_for(kPoll);
            continue;
        }
        c10d::TCPStoreOptions so;
        so.port = static_cast<std::uint16_t>(w.master_port);
        so.isServer = false;
        so.waitWorkers = false;
        // c10d's own bound on connecting and greeting (it retries a greeting
        // that failed, as one the watch below cut does, until then): a second,
        // so that a join given up ends within about one.
        so.timeout = std::chrono::seconds(1);
        bool connected = false;
        try {
            return bounded_store(w.master_port, answer, cancel, [&] {
                auto store = c10::make_intrusive<c10d::TCPStore>(w.master_addr, so);
                connected = true;
                // A counter of its own, asked twice: a store of another
                // protocol may answer one question by chance, not these.
                const std::string probe = "accum/probe/" + random_token();
                if (store->add(probe, 7) != 7 || store->add(probe, 0) != 7)
                    throw std::runtime_error("its answers do not follow this build's store protocol");
                store->setTimeout(timeout);
                return store;
            });
        } catch (const std::exception& e) {
            if (cancel.stop_requested())
                throw StoreError(StoreError::Kind::Failed, "stopped waiting for the store");
            if (dynamic_cast<const StoreError*>(&e)) // cut by bounded_store
                throw StoreError(StoreError::Kind::NotAStore, "no answer within " + seconds_text(answer) + " to " +
                                     (connected ? "its first question" : "the connection's greeting"));
            if (connected)
                throw StoreError(compat::c10d_error_type(e) == compat::C10dErrorType::Timeout
                                     ? StoreError::Kind::NotAStore
                                     : StoreError::Kind::Closed,
                                 error_text(e));
            last_reason = error_text(e); // nothing listens (yet): try again
        }
    }
}

c10::intrusive_ptr<c10d::Store> served_store(const WorldInfo& w, std::chrono::milliseconds timeout,
                                             const std::stop_token& cancel) {
    c10d::TCPStoreOptions so;
    so.port = static_cast<std::uint16_t>(w.master_port);
    so.isServer = true;
    so.numWorkers = static_cast<std::size_t>(w.world_size);
    so.waitWorkers = false; // arrivals are awaited in meet(), with a deadline and the missing ranks named
    so.timeout = timeout;
    try {
        return bounded_store(w.master_port, answer_timeout(timeout), cancel,
                             [&] { return c10::make_intrusive<c10d::TCPStore>(w.master_addr, so); });
    } catch (const std::exception& e) {
        throw StoreError(port_taken(w.master_port) ? StoreError::Kind::AddressInUse : StoreError::Kind::Failed,
                         error_text(e));
    }
}

} // namespace accum::dist
