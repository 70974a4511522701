// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed/store_client.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "distributed/failures.h"
#include "torch_compat.h"

namespace accum::dist {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kPoll = std::chrono::milliseconds(20);
// How long a store may take to answer one question before it counts as gone.
constexpr auto kAnswer = std::chrono::seconds(3);

// The questions to one store, asked in turn on a thread of its own and each
// waited for at most `answer` (store_client.h). Shared with that thread,
// which holds it (and the store) until it ends: a question c10d never answers
// keeps the thread, and only it, until the connection fails.
struct Asker {
    c10::intrusive_ptr<c10d::Store> store;
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<std::function<void()>> questions;
    bool stop = false;

    void serve() {
        for (;;) {
            std::function<void()> question;
            {
                std::unique_lock<std::mutex> lock(mutex);
                cv.wait(lock, [&] { return stop || !questions.empty(); });
                if (questions.empty()) return;
                question = std::move(questions.front());
                questions.pop_front();
            }
            question();
        }
    }
};

// A store error, typed whatever the LibTorch: c10d's timeouts (a typed error in
// both lines) are timeouts, every other failure of a question a closed connection.
StoreError store_error(const std::exception& e) {
    const auto type = compat::c10d_error_type(e);
    const bool timeout = type == compat::C10dErrorType::Timeout || type == compat::C10dErrorType::Store;
    return StoreError(timeout ? StoreError::Kind::Timeout : StoreError::Kind::Closed,
                      "the store: " + error_text(e));
}

class BoundedStore final : public c10d::Store {
public:
    BoundedStore(c10::intrusive_ptr<c10d::Store> store, std::chrono::milliseconds answer,
                 std::function<bool()> cancelled)
        : c10d::Store(store->getTimeout()), asker_(std::make_shared<Asker>()), answer_(answer),
          cancelled_(std::move(cancelled)) {
        asker_->store = std::move(store);
        thread_ = std::thread([asker = asker_] { asker->serve(); });
    }
    ~BoundedStore() override {
        {
            std::lock_guard<std::mutex> lock(asker_->mutex);
            asker_->stop = true;
        }
        asker_->cv.notify_all();
        // A thread blocked in a question nobody answers ends on its own.
        if (gone_) thread_.detach();
        else thread_.join();
    }

    void set(const std::string& key, const std::vector<uint8_t>& value) override {
        ask([key, value](c10d::Store& s) { s.set(key, value); return 0; });
    }
    std::vector<uint8_t> get(const std::string& key) override {
        wait({key}, timeout_);
        return ask([key](c10d::Store& s) { return s.get(key); });
    }
    int64_t add(const std::string& key, int64_t value) override {
        return ask([key, value](c10d::Store& s) { return s.add(key, value); });
    }
    bool deleteKey(const std::string& key) override {
        return ask([key](c10d::Store& s) { return s.deleteKey(key); });
    }
    bool check(const std::vector<std::string>& keys) override {
        return ask([keys](c10d::Store& s) { return s.check(keys); });
    }
    int64_t getNumKeys() override {
        return ask([](c10d::Store& s) { return s.getNumKeys(); });
    }
    void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
    // check() every 1 … 10 ms: a wait that ends between two questions, when
    // its timeout passes or `cancelled` says so.
    void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
        const auto deadline = timeout == kNoTimeout ? Clock::time_point::max() : Clock::now() + timeout;
        for (auto pause = std::chrono::milliseconds(1);; pause = std::min(pause * 2, std::chrono::milliseconds(10))) {
            if (check(keys)) return;
            if (cancelled_ && cancelled_()) throw StoreError(StoreError::Kind::Closed, "stopped waiting for the store");
            if (Clock::now() >= deadline)
                throw StoreError(StoreError::Kind::Timeout,
                                 "the store: wait timed out after " + seconds_text(timeout) + " for " + keys.front() +
                                     (keys.size() > 1 ? " and " + std::to_string(keys.size() - 1) + " more" : ""));
            std::this_thread::sleep_for(pause);
        }
    }
#if ACCUM_C10D_STORE_CLONE
    c10::intrusive_ptr<c10d::Store> clone() override {
        return c10::make_intrusive<BoundedStore>(ask([](c10d::Store& s) { return s.clone(); }), answer_, cancelled_);
    }
#endif

private:
    // `question` on the store's thread; its answer, or StoreError.
    // `question` holds copies of its arguments: it may outlive this call.
    template <class Question>
    auto ask(Question question) -> decltype(question(std::declval<c10d::Store&>())) {
        using Answer = decltype(question(std::declval<c10d::Store&>()));
        if (gone_) throw StoreError(StoreError::Kind::Timeout, "the store did not answer an earlier question");
        struct Reply {
            std::optional<Answer> answer;
            std::exception_ptr error;
            bool done = false;
        };
        auto reply = std::make_shared<Reply>();
        auto asker = asker_;
        {
            std::lock_guard<std::mutex> lock(asker->mutex);
            asker->questions.push_back([reply, asker, question] {
                std::optional<Answer> answer;
                std::exception_ptr error;
                try {
                    answer.emplace(question(*asker->store));
                } catch (...) {
                    error = std::current_exception();
                }
                {
                    std::lock_guard<std::mutex> lock(asker->mutex);
                    reply->answer = std::move(answer);
                    reply->error = error;
                    reply->done = true;
                }
                asker->cv.notify_all();
            });
        }
        asker->cv.notify_all();
        const auto until = Clock::now() + answer_;
        std::unique_lock<std::mutex> lock(asker->mutex);
        while (!asker->cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return reply->done; })) {
            const bool given_up = cancelled_ && cancelled_();
            if (given_up || Clock::now() >= until) {
                gone_ = true;
                throw StoreError(given_up ? StoreError::Kind::Closed : StoreError::Kind::Timeout,
                                 given_up ? std::string("stopped waiting for the store")
                                          : "the store did not answer within " + seconds_text(answer_));
            }
        }
        if (reply->error) {
            try {
                std::rethrow_exception(reply->error);
            } catch (const std::exception& e) {
                throw store_error(e);
            }
        }
        return std::move(*reply->answer);
    }

    std::shared_ptr<Asker> asker_;
    std::thread thread_;
    std::chrono::milliseconds answer_;
    std::function<bool()> cancelled_;
    std::atomic<bool> gone_{false}; // a question went unanswered: the thread may be blocked for good
};

// c10d's client greets the store when it is made (2.x: a validation and a
// ping) and waits for the answer without a bound: against a program that
// accepts and never answers, or a store of another protocol, the greeting is
// ended by shutting the client's socket down, the one place the engine
// touches c10d's sockets. They are found by their peer's port among the
// sockets opened since a snapshot, each told by its inode (a descriptor
// number reused is not another socket).
std::map<int, ino_t> open_sockets() {
    rlimit limit{};
    int highest = 1024;
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        highest = static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 65536));
    std::map<int, ino_t> sockets;
    for (int fd = 0; fd < highest; ++fd) {
        struct stat st {};
        if (::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) sockets.emplace(fd, st.st_ino);
    }
    return sockets;
}

std::set<ino_t> socket_ids() {
    std::set<ino_t> ids;
    for (const auto& [fd, id] : open_sockets()) ids.insert(id);
    return ids;
}

std::vector<int> sockets_to_port(const std::set<ino_t>& before, int port) {
    std::vector<int> found;
    for (const auto& [fd, id] : open_sockets()) {
        if (before.count(id)) continue;
        sockaddr_storage peer{};
        socklen_t size = sizeof peer;
        if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &size) != 0) continue;
        int peer_port = -1;
        if (peer.ss_family == AF_INET) peer_port = ntohs(reinterpret_cast<sockaddr_in*>(&peer)->sin_port);
        if (peer.ss_family == AF_INET6) peer_port = ntohs(reinterpret_cast<sockaddr_in6*>(&peer)->sin6_port);
        if (peer_port == port) found.push_back(fd);
    }
    return found;
}

// Runs `question` (which opens its sockets to `port`); past `limit` without an
// answer, or once `cancelled` says so, the sockets it has connected are shut
// down, so that it throws instead of waiting on; `cut` says whether it had to.
void bounded_question(const std::set<ino_t>& before, int port, std::chrono::milliseconds limit,
                      const std::function<bool()>& cancelled, const std::function<void()>& question, bool& cut) {
    std::mutex mutex;
    std::condition_variable answered_cv;
    bool answered = false;
    cut = false;
    std::thread watchdog([&] {
        std::unique_lock<std::mutex> lock(mutex);
        const auto until = Clock::now() + limit;
        while (!answered) {
            // Past the limit (or cancelled) a question still unanswered is cut,
            // and so is every socket c10d connects again while it retries,
            // until the question returns (its own connect timeout ends it).
            if (Clock::now() >= until || (cancelled && cancelled()))
                for (const int fd : sockets_to_port(before, port)) cut = ::shutdown(fd, SHUT_RDWR) == 0 || cut;
            answered_cv.wait_for(lock, std::chrono::milliseconds(50));
        }
    });
    auto finish = [&] {
        {
            std::lock_guard<std::mutex> lock(mutex);
            answered = true;
        }
        answered_cv.notify_all();
        watchdog.join();
    };
    try {
        question();
    } catch (...) {
        finish();
        throw;
    }
    finish();
}

// Whether something accepts a TCP connection at host:port now (within a second);
// `why` says what stopped it otherwise. Nothing is sent.
bool accepts_connections(const std::string& host, int port, std::string& why) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
        why = host + ": " + ::gai_strerror(rc);
        return false;
    }
    bool accepted = false;
    why = "nothing listens there";
    for (const addrinfo* a = found; a && !accepted; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            accepted = true;
        } else if (errno == EINPROGRESS) {
            pollfd p{fd, POLLOUT, 0};
            if (::poll(&p, 1, 1000) == 1) {
                int error = 0;
                socklen_t size = sizeof error;
                ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
                accepted = error == 0;
                if (error != 0) why = std::strerror(error);
            } else {
                why = "the connection was not accepted in time";
            }
        } else {
            why = std::strerror(errno);
        }
        ::close(fd);
    }
    ::freeaddrinfo(found);
    return accepted;
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

std::chrono::milliseconds answer_timeout(std::chrono::milliseconds timeout) {
    return std::clamp<std::chrono::milliseconds>(timeout, std::chrono::milliseconds(200), kAnswer);
}

std::string random_token() {
    std::random_device device;
    std::ostringstream s;
    s << std::hex << device() << device() << "-" << ::getpid();
    return s.str();
}

// A client of the store at the world's master (c10d's own TCPStore client),
// once it has answered one question; until `deadline` while nothing listens.
c10::intrusive_ptr<c10d::Store> client_store(const WorldInfo& w, std::chrono::milliseconds timeout,
                                             Clock::time_point deadline, const std::function<bool()>& cancelled) {
    const auto answer = answer_timeout(timeout);
    std::string last_reason = "nothing listens there";
    for (;;) {
        if (cancelled && cancelled()) throw StoreFailure(StoreFailure::Kind::Failed, "stopped waiting for the store");
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) throw StoreFailure(StoreFailure::Kind::Refused, last_reason);
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
        const auto before = socket_ids();
        c10::intrusive_ptr<c10d::TCPStore> store;
        bool connected = false, cut = false;
        try {
            bounded_question(
                before, w.master_port, answer, cancelled,
                [&] {
                    store = c10::make_intrusive<c10d::TCPStore>(w.master_addr, so);
                    connected = true;
                    // A counter of its own, asked twice: a store of another
                    // protocol may answer one question by chance, not these.
                    const std::string probe = "accum/probe/" + random_token();
                    if (store->add(probe, 7) != 7 || store->add(probe, 0) != 7)
                        throw std::runtime_error("its answers do not follow this build's store protocol");
                },
                cut);
            // Answered just as the limit passed: the watch cut the sockets after all.
            if (cut) throw std::runtime_error("the answer came as the answer timeout passed");
            store->setTimeout(timeout);
            return c10::make_intrusive<BoundedStore>(store, answer, cancelled);
        } catch (const std::exception& e) {
            if (cancelled && cancelled())
                throw StoreFailure(StoreFailure::Kind::Failed, "stopped waiting for the store");
            const std::string reason = error_text(e);
            if (cut)
                throw StoreFailure(StoreFailure::Kind::NotAStore,
                                   "no answer within " + seconds_text(answer) + " to " +
                                       (connected ? "its first question" : "the connection's greeting"));
            if (connected)
                throw StoreFailure(compat::c10d_error_type(e) == compat::C10dErrorType::Timeout
                                       ? StoreFailure::Kind::NotAStore
                                       : StoreFailure::Kind::Closed,
                                   reason);
            last_reason = reason; // nothing listens (yet): try again
        }
    }
}

c10::intrusive_ptr<c10d::Store> served_store(const WorldInfo& w, std::chrono::milliseconds timeout,
                                             const std::function<bool()>& cancelled) {
    c10d::TCPStoreOptions so;
    so.port = static_cast<std::uint16_t>(w.master_port);
    so.isServer = true;
    so.numWorkers = static_cast<std::size_t>(w.world_size);
    so.waitWorkers = false; // arrivals are awaited in meet(), with a deadline and the missing ranks named
    so.timeout = timeout;
    c10::intrusive_ptr<c10d::Store> store;
    try {
        store = c10::make_intrusive<c10d::TCPStore>(w.master_addr, so);
    } catch (const std::exception& e) {
        throw StoreFailure(port_taken(w.master_port) ? StoreFailure::Kind::AddressInUse : StoreFailure::Kind::Failed,
                           error_text(e));
    }
    return c10::make_intrusive<BoundedStore>(store, answer_timeout(timeout), cancelled);
}

} // namespace accum::dist
