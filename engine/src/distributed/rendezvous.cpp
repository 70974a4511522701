// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed/rendezvous.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <thread>

#include "accum/errors.h"
#include "distributed/store_client.h"
#include "torch_compat.h"

namespace accum::dist {

namespace {

using Kind = DistributedError::Kind;
using Bytes = std::vector<uint8_t>;

const std::string kLeader = "accum/leader";

Bytes bytes_of(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string text_of(const Bytes& b) { return std::string(b.begin(), b.end()); }

// The value of `key`, or nullopt when it is not (yet) in the store.
std::optional<std::string> read_if_present(c10d::Store& store, const std::string& key) {
    if (!store.check({key})) return std::nullopt;
    return text_of(store.get(key));
}

// "accum/leader": rank 0's token and its TORCHELASTIC_RESTART_COUNT, once it
// has opened a meeting ("token count"); the attempt -1 before.
std::pair<std::string, int> leader(c10d::Store& store) {
    std::istringstream in(read_if_present(store, kLeader).value_or(""));
    std::string token;
    int attempt = -1;
    in >> token >> attempt;
    return {token, attempt};
}

std::string identity_text(const Peer& p) {
    return std::to_string(p.pid) + " " + p.nonce + " " + (p.address.empty() ? "-" : p.address);
}

Peer parse_identity(const std::string& s) {
    Peer p;
    std::istringstream in(s);
    in >> p.pid >> p.nonce >> p.address;
    if (p.address == "-") p.address.clear();
    return p;
}

// The first failure published in the meeting by another rank.
std::optional<std::pair<int, std::string>> failure_under(const Meeting& m) {
    if (!m.store->check({m.prefix + "/failures"})) return std::nullopt;
    for (int r = 0; r < m.world.world_size; ++r) {
        if (r == m.world.rank) continue;
        if (auto message = read_if_present(*m.store, m.prefix + "/failed/" + std::to_string(r))) {
            m.store->add(m.prefix + "/failed_seen", 1);
            return std::make_pair(r, std::move(*message));
        }
    }
    return std::nullopt;
}

// The ranks (but `self`) without a key "<prefix>/<what>/<rank>": those not
// registered ("rank"), or absent from the roll call ("present").
std::vector<int> ranks_without(const Meeting& m, const std::string& what, int self = -1) {
    std::vector<int> without;
    for (int r = 0; r < m.world.world_size; ++r)
        if (r != self && !m.store->check({m.prefix + "/" + what + "/" + std::to_string(r)})) without.push_back(r);
    return without;
}

// The caller of meet() stopped waiting: the meeting ends here, and nobody reads why.
void end_if_cancelled(const std::stop_token& cancel, int rank) {
    if (cancel.stop_requested())
        throw DistributedError(Kind::Failed, rank, -1,
                               "rank " + std::to_string(rank) + ": stopped waiting for the other ranks");
}

[[noreturn]] void failed_before(const WorldInfo& w, const std::pair<int, std::string>& failure) {
    throw DistributedError(Kind::PeerFailed, w.rank, failure.first,
                           rank_with_host(w) + ": rank " + std::to_string(failure.first) +
                               " failed before the rendezvous: " + failure.second);
}

// The meeting's deadline passed: DistributedError Timeout naming the ranks
// not registered (`otherwise` when all are).
[[noreturn]] void not_arrived(const Meeting& m, const std::string& otherwise) {
    const auto missing = ranks_without(m, "rank");
    std::string who;
    for (const int r : missing) who += (who.empty() ? "" : ", ") + std::to_string(r);
    throw DistributedError(Kind::Timeout, m.world.rank, missing.empty() ? -1 : missing.front(),
                           rank_with_host(m.world) + ": " +
                               (missing.empty() ? otherwise
                                                : (missing.size() == 1 ? "rank " : "ranks ") + who + " did not arrive") +
                               " at " + m.world.master_addr + ":" + std::to_string(m.world.master_port) + " within " +
                               seconds_text(m.timeout) + " (--dist-timeout)");
}

// Rank 0 opens a meeting: its keys under a fresh token, which it leads.
void open_meeting(Meeting& m) {
    const std::string token = random_token();
    m.prefix = "accum/" + token;
    m.store->set(kLeader, bytes_of(token + " " + std::to_string(m.world.restart_count)));
}

// Rank 0: opens the meeting and waits for every rank.
std::vector<Peer> gather(Meeting& m, const Peer& me, Clock::time_point deadline, const std::stop_token& cancelled) {
    c10d::Store& store = *m.store;
    auto key = [&](int r) { return m.prefix + "/rank/" + std::to_string(r); };
    open_meeting(m);
    store.set(key(0), bytes_of(identity_text(me)));
    std::vector<std::string> keys;
    for (int r = 0; r < m.world.world_size; ++r) keys.push_back(key(r));
    for (;;) {
        end_if_cancelled(cancelled, 0);
        if (auto failure = failure_under(m)) failed_before(m.world, *failure);
        if (store.check(keys)) break;
        if (Clock::now() >= deadline) not_arrived(m, "not every rank arrived");
        std::this_thread::sleep_for(kPoll);
    }
    std::vector<Peer> all;
    std::string roster;
    for (int r = 0; r < m.world.world_size; ++r) {
        const std::string text = text_of(store.get(key(r)));
        all.push_back(parse_identity(text));
        roster += text + "\n";
    }
    store.set(m.prefix + "/roster", bytes_of(roster));
    return all;
}

// Rank r > 0: registers under rank 0's current token until rank 0 lists it.
std::vector<Peer> join(Meeting& m, const Peer& me, Clock::time_point deadline, const std::stop_token& cancelled) {
    c10d::Store& store = *m.store;
    const int rank = m.world.rank;
    const std::string master = m.world.master_addr + ":" + std::to_string(m.world.master_port);
    const std::string mine = identity_text(me);
    std::string token;
    bool same_attempt = false;
    for (;;) {
        end_if_cancelled(cancelled, rank);
        if (const auto [newest, attempt] = leader(store); newest != token) {
            token = newest;
            same_attempt = attempt == m.world.restart_count;
            m.prefix = "accum/" + token;
            store.set(m.prefix + "/rank/" + std::to_string(rank), bytes_of(mine));
        }
        if (!token.empty()) {
            // A failure left under an earlier attempt's token is that attempt's:
            // only the leader of this restart count is believed (the roster's
            // nonce tells the meeting itself apart whatever the counts).
            if (auto failure = same_attempt ? failure_under(m) : std::nullopt) failed_before(m.world, *failure);
            if (auto roster = read_if_present(store, m.prefix + "/roster")) {
                std::vector<Peer> all;
                std::istringstream lines(*roster);
                for (std::string line; std::getline(lines, line);) all.push_back(parse_identity(line));
                // An earlier attempt's roster (torchrun's store keeps it) lacks this nonce.
                if (static_cast<int>(all.size()) == m.world.world_size && all[rank].nonce == me.nonce) return all;
            }
        }
        if (Clock::now() >= deadline) {
            if (token.empty())
                throw DistributedError(Kind::Timeout, rank, 0,
                                       rank_with_host(m.world) + ": rank 0 did not open the rendezvous at " +
                                           master + " within " + seconds_text(m.timeout) + " (--dist-timeout)");
            not_arrived(m, "rank 0 did not list this rank");
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

Meeting meet(const WorldInfo& w, std::chrono::milliseconds timeout, std::atomic<int>& stage,
             const std::stop_token& cancelled) {
    const auto deadline = Clock::now() + timeout;
    Meeting m{.world = w, .timeout = timeout, .serves_store = w.rank == 0 && !w.agent_store};
    try {
        m.store = m.serves_store ? served_store(w, timeout, cancelled) : client_store(w, timeout, deadline, cancelled);
    } catch (const StoreError& e) {
        end_if_cancelled(cancelled, w.rank);
        unreachable(w, timeout, e);
    }
    stage = 1;
    const Peer me{static_cast<int>(::getpid()),
                  is_loopback_host(w.master_addr) ? std::string("127.0.0.1") : address_toward(w.master_addr),
                  random_token()};
    try {
        m.peers = w.rank == 0 ? gather(m, me, deadline, cancelled) : join(m, me, deadline, cancelled);
    } catch (const DistributedError& e) {
        // Rank 0's failure to gather is every rank's: say so to those waiting for
        // the roster. Its store ends with this meeting: it waits (at most 3 s)
        // for them to have read it, unless its caller has stopped waiting, when
        // the ranks waiting see the store close instead.
        if (w.rank == 0 && !m.prefix.empty()) {
            int waiting = 0;
            try {
                waiting = w.world_size - static_cast<int>(ranks_without(m, "rank").size()) - 1;
            } catch (const std::exception&) {
            }
            const auto linger = cancelled.stop_requested() ? std::chrono::milliseconds(0) : std::chrono::seconds(3);
            if (waiting > 0) publish_failure(m, error_text(e), linger, waiting);
        }
        throw;
    } catch (const std::exception& e) {
        // A store of another protocol may pass the first questions by chance
        // and fail a later one: under torchrun 2.x a 1.x client says why.
        if (w.agent_store && !compat::kStoreClientSpeaksTorch2 && !cancelled.stop_requested())
            unreachable(w, timeout, StoreError(StoreError::Kind::Closed, error_text(e)));
        throw;
    }
    return m;
}

void publish_failure(const Meeting& m, const std::string& message, std::chrono::milliseconds linger, int readers) {
    if (!m.store || m.prefix.empty() || m.world.world_size < 2) return;
    // "failed_seen" counts the ranks that need the store no more: those that
    // read a failure, and those that left one (and end) while not serving the
    // store. The one that serves it waits for them: the store ends with it.
    try {
        m.store->set(m.prefix + "/failed/" + std::to_string(m.world.rank), bytes_of(message));
        m.store->add(m.prefix + "/failures", 1);
        if (!m.serves_store) {
            m.store->add(m.prefix + "/failed_seen", 1);
            return;
        }
        const int wanted = readers < 0 ? m.world.world_size - 1 : readers;
        const auto until = Clock::now() + linger;
        while (Clock::now() < until && m.store->add(m.prefix + "/failed_seen", 0) < wanted) std::this_thread::sleep_for(kPoll);
    } catch (const std::exception&) {
        // The store is gone (its process ended): nobody is left to tell.
    }
}

std::optional<std::pair<int, std::string>> published_failure(const Meeting& m) {
    if (!m.store || m.prefix.empty()) return std::nullopt;
    try {
        return failure_under(m);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::vector<int> absent_ranks(const Meeting& m, std::chrono::milliseconds wait) {
    m.store->set(m.prefix + "/present/" + std::to_string(m.world.rank), bytes_of("1"));
    std::optional<std::vector<int>> absent;
    for (const auto until = Clock::now() + wait;; std::this_thread::sleep_for(kPoll)) {
        std::vector<int> now;
        try {
            now = ranks_without(m, "present", m.world.rank);
        } catch (const std::exception&) {
            if (!absent) throw;
            return *absent; // the store's process (a survivor) has ended meanwhile
        }
        absent = now;
        if (now.empty() || Clock::now() >= until) return now;
    }
}

void announce_failure(const WorldInfo& w, double dist_timeout_s, const std::string& message) {
    if (w.world_size < 2 || w.master_port < 1) return;
    // torchrun 2.x's store does not answer a 1.x client: nobody to tell there.
    if (w.agent_store && !compat::kStoreClientSpeaksTorch2) return;
    // --dist-timeout, at most 3 s (3 s when it is itself the failure).
    const bool valid = std::isfinite(dist_timeout_s) && dist_timeout_s > 0;
    const std::chrono::milliseconds limit(valid ? std::llround(std::clamp(dist_timeout_s, 0.001, 3.0) * 1000) : 3000);
    const auto deadline = Clock::now() + limit;
    try {
        Meeting m{.world = w, .timeout = limit, .serves_store = w.rank == 0 && !w.agent_store};
        m.store = m.serves_store ? served_store(w, limit) : client_store(w, limit, deadline);
        if (w.rank == 0) open_meeting(m);
        // Rank 0 opens the meeting: under its token of this restart count (an
        // agent's store may still hold an earlier attempt's).
        while (m.prefix.empty() && Clock::now() < deadline) {
            if (const auto [token, attempt] = leader(*m.store); attempt == w.restart_count) m.prefix = "accum/" + token;
            else std::this_thread::sleep_for(kPoll);
        }
        publish_failure(m, message, limit);
    } catch (const std::exception&) {
        // Best effort: the port taken, no store, a store that does not answer.
    }
}

} // namespace accum::dist
