#include "distributed/rendezvous.h"

#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include "accum/errors.h"
#include "distributed/failures.h"
#include "distributed/store_client.h"
#include "torch_compat.h"

namespace accum::dist {

namespace {

using Clock = std::chrono::steady_clock;
using Kind = DistributedError::Kind;
using Bytes = std::vector<uint8_t>;

constexpr auto kPoll = std::chrono::milliseconds(20);

const std::string kLeader = "accum/leader";

Bytes bytes_of(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string text_of(const Bytes& b) { return std::string(b.begin(), b.end()); }

// The value of `key`, or nullopt when it is not (yet) in the store.
std::optional<std::string> read_if_present(c10d::Store& store, const std::string& key) {
    if (!store.check({key})) return std::nullopt;
    return text_of(store.get(key));
}

// "accum/leader": rank 0's token and its TORCHELASTIC_RESTART_COUNT.
std::string leader_text(const std::string& token, int restart_count) {
    return token + " " + std::to_string(restart_count);
}
std::pair<std::string, int> parse_leader(const std::string& text) {
    std::istringstream in(text);
    std::string token;
    int attempt = -1;
    in >> token >> attempt;
    return {token, attempt};
}

struct Identity {
    Peer peer;
    std::string nonce;
};

std::string identity_text(const Identity& i) {
    return std::to_string(i.peer.pid) + " " + i.nonce + " " + (i.peer.address.empty() ? "-" : i.peer.address);
}

Identity parse_identity(const std::string& s) {
    Identity i;
    std::istringstream in(s);
    in >> i.peer.pid >> i.nonce >> i.peer.address;
    if (i.peer.address == "-") i.peer.address.clear();
    return i;
}

// The first failure published under `prefix` by a rank other than `self`.
std::optional<std::pair<int, std::string>> failure_under(c10d::Store& store, const std::string& prefix, int self,
                                                         int world) {
    if (!store.check({prefix + "/failures"})) return std::nullopt;
    for (int r = 0; r < world; ++r) {
        if (r == self) continue;
        if (auto message = read_if_present(store, prefix + "/failed/" + std::to_string(r))) {
            store.add(prefix + "/failed_seen", 1);
            return std::make_pair(r, std::move(*message));
        }
    }
    return std::nullopt;
}

// The ranks not registered under the meeting's prefix.
std::vector<int> missing_ranks(c10d::Store& store, const std::string& prefix, int world) {
    std::vector<int> missing;
    for (int r = 0; r < world; ++r)
        if (!store.check({prefix + "/rank/" + std::to_string(r)})) missing.push_back(r);
    return missing;
}

// The caller of meet() stopped waiting: the meeting ends here, and nobody reads why.
void end_if_cancelled(const std::stop_token& cancel, int rank) {
    if (cancel.stop_requested())
        throw DistributedError(Kind::Failed, rank, -1,
                               "rank " + std::to_string(rank) + ": stopped waiting for the other ranks");
}

[[noreturn]] void peer_failed(const WorldInfo& w, int peer, const std::string& message, const char* when) {
    throw DistributedError(Kind::PeerFailed, w.rank, peer,
                           rank_with_host(w) + ": rank " + std::to_string(peer) + " failed" + when + ": " + message);
}

// The meeting's deadline passed: DistributedError Timeout naming the ranks
// not registered under `prefix` (`otherwise` when all are).
[[noreturn]] void not_arrived(c10d::Store& store, const std::string& prefix, const MeetingOptions& o,
                              const std::string& otherwise) {
    const auto missing = missing_ranks(store, prefix, o.world.world_size);
    std::string who;
    for (const int r : missing) who += (who.empty() ? "" : ", ") + std::to_string(r);
    throw DistributedError(Kind::Timeout, o.world.rank, missing.empty() ? -1 : missing.front(),
                           rank_with_host(o.world) + ": " +
                               (missing.empty() ? otherwise
                                                : (missing.size() == 1 ? "rank " : "ranks ") + who + " did not arrive") +
                               " at " + o.world.master_addr + ":" + std::to_string(o.world.master_port) + " within " +
                               seconds_text(o.timeout) + " (--dist-timeout)");
}

// Rank 0 opens a meeting: its keys under a fresh token, which it leads.
void open_meeting(c10d::Store& store, Meeting& m, int restart_count) {
    const std::string token = random_token();
    m.prefix = "accum/" + token;
    store.set(kLeader, bytes_of(leader_text(token, restart_count)));
}

// Rank 0: opens the meeting and waits for every rank.
std::vector<Identity> gather(c10d::Store& store, Meeting& m, const MeetingOptions& o, const Identity& me,
                             Clock::time_point deadline, const std::stop_token& cancelled) {
    const int world = o.world.world_size;
    auto key = [&](int r) { return m.prefix + "/rank/" + std::to_string(r); };
    open_meeting(store, m, o.world.restart_count);
    store.set(key(0), bytes_of(identity_text(me)));
    std::vector<std::string> keys;
    for (int r = 0; r < world; ++r) keys.push_back(key(r));
    for (;;) {
        end_if_cancelled(cancelled, 0);
        if (auto failure = failure_under(store, m.prefix, 0, world))
            peer_failed(o.world, failure->first, failure->second, " before the rendezvous");
        if (store.check(keys)) break;
        if (Clock::now() >= deadline) not_arrived(store, m.prefix, o, "not every rank arrived");
        std::this_thread::sleep_for(kPoll);
    }
    std::vector<Identity> all;
    std::string roster;
    for (int r = 0; r < world; ++r) {
        const std::string text = text_of(store.get(key(r)));
        all.push_back(parse_identity(text));
        roster += text + "\n";
    }
    store.set(m.prefix + "/roster", bytes_of(roster));
    return all;
}

// Rank r > 0: registers under rank 0's current token until rank 0 lists it.
std::vector<Identity> join(c10d::Store& store, Meeting& m, const MeetingOptions& o, const Identity& me,
                           Clock::time_point deadline, const std::stop_token& cancelled) {
    const int rank = o.world.rank, world = o.world.world_size;
    const std::string master = o.world.master_addr + ":" + std::to_string(o.world.master_port);
    const std::string mine = identity_text(me);
    std::string token;
    bool same_attempt = false;
    for (;;) {
        end_if_cancelled(cancelled, rank);
        if (auto leader = read_if_present(store, kLeader)) {
            const auto [newest, attempt] = parse_leader(*leader);
            if (newest != token) {
                token = newest;
                same_attempt = attempt == o.world.restart_count;
                m.prefix = "accum/" + token;
                store.set(m.prefix + "/rank/" + std::to_string(rank), bytes_of(mine));
            }
        }
        if (!token.empty()) {
            // A failure left under an earlier attempt's token is that attempt's:
            // only the leader of this restart count is believed (the roster's
            // nonce tells the meeting itself apart whatever the counts).
            if (auto failure = same_attempt ? failure_under(store, m.prefix, rank, world) : std::nullopt)
                peer_failed(o.world, failure->first, failure->second, " before the rendezvous");
            if (auto roster = read_if_present(store, m.prefix + "/roster")) {
                std::vector<Identity> all;
                std::istringstream lines(*roster);
                for (std::string line; std::getline(lines, line);) all.push_back(parse_identity(line));
                // An earlier attempt's roster (torchrun's store keeps it) lacks this nonce.
                if (static_cast<int>(all.size()) == world && all[rank].nonce == me.nonce) return all;
            }
        }
        if (Clock::now() >= deadline) {
            if (token.empty())
                throw DistributedError(Kind::Timeout, rank, 0,
                                       rank_with_host(o.world) + ": rank 0 did not open the rendezvous at " +
                                           master + " within " + seconds_text(o.timeout) + " (--dist-timeout)");
            not_arrived(store, m.prefix, o, "rank 0 did not list this rank");
        }
        std::this_thread::sleep_for(kPoll);
    }
}

// The store's errors while reaching it, as the process group reports them.
[[noreturn]] void unreachable(const WorldInfo& w, std::chrono::milliseconds timeout, const StoreError& e) {
    using Store = StoreError::Kind;
    const std::string master = w.master_addr + ":" + std::to_string(w.master_port);
    const std::string who = rank_with_host(w) + ": ";
    const std::string server = w.agent_store ? "torchrun's agent store" : "rank 0's store";
    const int served_by = w.agent_store ? -1 : 0;
    if (w.agent_store && (e.kind() == Store::NotAStore || e.kind() == Store::Closed) && !compat::kStoreClientSpeaksTorch2)
        throw ConfigError(who + "torchrun's agent store at " + master + " does not answer this build's store client (" +
                          e.what() + "): accum-run is built with LibTorch " + compat::kTorchVersion +
                          ", whose store protocol the store of torch 2.x does not speak. Run it under torchrun with "
                          "the LibTorch 2.x build (scripts/build-libtorch2.sh), or start the processes with "
                          "accum-run --nproc-per-node");
    if (e.kind() == Store::Refused)
        throw DistributedError(Kind::Unreachable, w.rank, served_by,
                               who + "cannot reach " + server + " at " + master + " within " + seconds_text(timeout) +
                                   " (--dist-timeout): " + e.what());
    if (e.kind() == Store::NotAStore)
        throw DistributedError(Kind::Unreachable, w.rank, served_by,
                               who + "what listens at " + master + " is not " + server +
                                   (w.agent_store ? "" : " (another program holds the port; rank 0 cannot listen there)") +
                                   ": " + e.what());
    if (e.kind() == Store::Closed)
        throw DistributedError(Kind::PeerLost, w.rank, served_by,
                               who + server + " at " + master + " closed the connection: " + e.what());
    if (e.kind() == Store::AddressInUse)
        throw DistributedError(Kind::AddressInUse, w.rank, 0,
                               who + "cannot listen on port " + std::to_string(w.master_port) +
                                   " (MASTER_PORT / --master-port): the address is already in use: " + e.what());
    throw DistributedError(Kind::Failed, w.rank, -1, who + "cannot use " + server + " at " + master + ": " + e.what());
}

} // namespace

Meeting meet(const MeetingOptions& o, std::atomic<int>& stage, const std::stop_token& cancelled) {
    const auto& w = o.world;
    const auto deadline = Clock::now() + o.timeout;
    Meeting m;
    m.serves_store = w.rank == 0 && !w.agent_store;
    try {
        m.store = m.serves_store ? served_store(w, o.timeout, cancelled) : client_store(w, o.timeout, deadline, cancelled);
    } catch (const StoreError& e) {
        end_if_cancelled(cancelled, w.rank);
        unreachable(w, o.timeout, e);
    }
    stage = 1;
    const Identity me{{static_cast<int>(::getpid()),
                       is_loopback_host(w.master_addr) ? std::string("127.0.0.1") : address_toward(w.master_addr)},
                      random_token()};
    std::vector<Identity> all;
    try {
        all = w.rank == 0 ? gather(*m.store, m, o, me, deadline, cancelled)
                          : join(*m.store, m, o, me, deadline, cancelled);
    } catch (const DistributedError& e) {
        // Rank 0's failure to gather is every rank's: say so to those waiting for
        // the roster. Its store ends with this meeting: it waits (at most 3 s)
        // for them to have read it, unless its caller has stopped waiting, when
        // the ranks waiting see the store close instead.
        if (w.rank == 0 && !m.prefix.empty()) {
            int waiting = 0;
            try {
                waiting = w.world_size - static_cast<int>(missing_ranks(*m.store, m.prefix, w.world_size).size()) - 1;
            } catch (const std::exception&) {
            }
            const bool given_up = cancelled.stop_requested();
            if (waiting > 0)
                publish_failure(m, 0, w.world_size, error_text(e),
                                given_up ? std::chrono::milliseconds(0) : std::chrono::milliseconds(3000), waiting);
        }
        throw;
    } catch (const std::exception& e) {
        // A store of another protocol may pass the first questions by chance
        // and fail a later one: under torchrun 2.x a 1.x client says why.
        if (w.agent_store && !compat::kStoreClientSpeaksTorch2 && !cancelled.stop_requested())
            unreachable(w, o.timeout, StoreError(StoreError::Kind::Closed, error_text(e)));
        throw;
    }
    for (const auto& i : all) m.peers.push_back(i.peer);
    return m;
}

void publish_failure(const Meeting& m, int rank, int world_size, const std::string& message,
                     std::chrono::milliseconds linger, int readers) {
    if (!m.store || m.prefix.empty() || world_size < 2) return;
    // "failed_seen" counts the ranks that need the store no more: those that
    // read a failure, and those that left one (and end) while not serving the
    // store. The one that serves it waits for them: the store ends with it.
    try {
        m.store->set(m.prefix + "/failed/" + std::to_string(rank), bytes_of(message));
        m.store->add(m.prefix + "/failures", 1);
        if (!m.serves_store) {
            m.store->add(m.prefix + "/failed_seen", 1);
            return;
        }
        const int wanted = readers < 0 ? world_size - 1 : readers;
        const auto until = Clock::now() + linger;
        while (Clock::now() < until && m.store->add(m.prefix + "/failed_seen", 0) < wanted) std::this_thread::sleep_for(kPoll);
    } catch (const std::exception&) {
        // The store is gone (its process ended): nobody is left to tell.
    }
}

std::optional<std::pair<int, std::string>> published_failure(const Meeting& m, int self, int world_size) {
    if (!m.store || m.prefix.empty()) return std::nullopt;
    try {
        return failure_under(*m.store, m.prefix, self, world_size);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::vector<int> absent_ranks(const Meeting& m, int self, int world_size, std::chrono::milliseconds wait) {
    const std::string key = m.prefix + "/present/";
    m.store->set(key + std::to_string(self), bytes_of("1"));
    std::optional<std::vector<int>> absent;
    for (const auto until = Clock::now() + wait;; std::this_thread::sleep_for(kPoll)) {
        std::vector<int> now;
        try {
            for (int r = 0; r < world_size; ++r)
                if (r != self && !m.store->check({key + std::to_string(r)})) now.push_back(r);
        } catch (const std::exception&) {
            if (!absent) throw;
            return *absent; // the store's process (a survivor) has ended meanwhile
        }
        absent = now;
        if (now.empty() || Clock::now() >= until) return now;
    }
}

void announce_failure_before_joining(const WorldInfo& w, std::chrono::milliseconds timeout,
                                     const std::string& message) {
    if (w.world_size < 2 || w.master_port < 1) return;
    // torchrun 2.x's store does not answer a 1.x client: nobody to tell there.
    if (w.agent_store && !compat::kStoreClientSpeaksTorch2) return;
    const auto limit = std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(3));
    const auto deadline = Clock::now() + limit;
    try {
        Meeting m;
        m.serves_store = w.rank == 0 && !w.agent_store;
        m.store = m.serves_store ? served_store(w, timeout)
                                 : client_store(w, limit, deadline);
        if (w.rank == 0) {
            open_meeting(*m.store, m, w.restart_count);
        } else {
            // Rank 0 opens the meeting: under its token of this restart count (an
            // agent's store may still hold an earlier attempt's).
            while (Clock::now() < deadline) {
                if (auto leader = read_if_present(*m.store, kLeader)) {
                    const auto [token, attempt] = parse_leader(*leader);
                    if (attempt == w.restart_count) m.prefix = "accum/" + token;
                }
                if (!m.prefix.empty()) break;
                std::this_thread::sleep_for(kPoll);
            }
        }
        publish_failure(m, w.rank, w.world_size, message, limit);
    } catch (const std::exception&) {
        // Best effort: the port taken, no store, a store that does not answer.
    }
}

} // namespace accum::dist
// SPDX-License-Identifier: GPL-3.0-or-later
