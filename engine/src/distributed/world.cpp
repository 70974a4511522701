// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed/world.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <system_error>

#include "accum/errors.h"
#include "accum/run_config.h"

namespace accum::dist {

EnvLookup process_environment() {
    return [](const std::string& name) -> std::optional<std::string> {
        const char* value = std::getenv(name.c_str());
        return value ? std::optional<std::string>(value) : std::nullopt;
    };
}

std::optional<WorldInfo> world_from_environment(const EnvLookup& env) {
    const auto rank_text = env("RANK");
    const auto world_text = env("WORLD_SIZE");
    if (!rank_text && !world_text) return std::nullopt;
    const std::string needed = " (a process started by a launcher needs RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT)";
    if (!world_text) throw ConfigError("environment variable RANK is set but WORLD_SIZE is not" + needed);
    if (!rank_text) throw ConfigError("environment variable WORLD_SIZE is set but RANK is not" + needed);
    // The variable as a whole decimal integer in [lo, hi] (anything else is an
    // error naming it), or `unset` when it is not set.
    auto number = [&env](const std::string& name, int lo, int hi, int unset) {
        const auto text = env(name);
        if (!text) return unset;
        int value = 0;
        const char* end = text->data() + text->size();
        const auto [ptr, ec] = std::from_chars(text->data(), end, value);
        const std::string what = "environment variable " + name;
        if (text->empty() || ec != std::errc() || ptr != end)
            throw ConfigError(what + "='" + *text + "' is not an integer");
        if (value < lo || value > hi)
            throw ConfigError(what + "=" + *text + " is out of range (" + std::to_string(lo) + " … " +
                              std::to_string(hi) + ")");
        return value;
    };

    WorldInfo w;
    constexpr int kMaxRanks = 1 << 20;
    w.world_size = number("WORLD_SIZE", 1, kMaxRanks, 1);
    w.rank = number("RANK", 0, kMaxRanks, 0);
    if (w.rank >= w.world_size)
        throw ConfigError("environment variable RANK=" + *rank_text + " must be below WORLD_SIZE=" + *world_text);
    // Without LOCAL_WORLD_SIZE, one machine: the local rank is the rank.
    w.local_world_size = number("LOCAL_WORLD_SIZE", 1, w.world_size, w.world_size);
    w.local_rank = number("LOCAL_RANK", 0, kMaxRanks, w.rank % w.local_world_size);
    if (w.local_rank >= w.local_world_size)
        throw ConfigError("environment variable LOCAL_RANK=" + std::to_string(w.local_rank) +
                          " must be below LOCAL_WORLD_SIZE=" + std::to_string(w.local_world_size));
    w.node_rank = number("GROUP_RANK", 0, kMaxRanks, 0);

    const auto addr = env("MASTER_ADDR");
    if (w.world_size > 1) {
        if (!addr || addr->empty())
            throw ConfigError("environment variable MASTER_ADDR is not set (WORLD_SIZE=" + *world_text +
                              "): it names the machine where rank 0 listens");
        if (!env("MASTER_PORT"))
            throw ConfigError("environment variable MASTER_PORT is not set (WORLD_SIZE=" + *world_text + ")");
    }
    if (addr && !addr->empty()) w.master_addr = *addr;
    w.master_port = number("MASTER_PORT", 1, 65535, 0);
    // torchrun (torch/distributed/elastic/agent/server/local_elastic_agent.py)
    // writes Python's str(bool); torch.distributed's _torchelastic_use_agent_store()
    // reads == "True", and so does this.
    w.agent_store = env("TORCHELASTIC_USE_AGENT_STORE").value_or("") == "True";
    w.restart_count = number("TORCHELASTIC_RESTART_COUNT", 0, kMaxRanks, 0);
    return w;
}

void validate(const LaunchPlan& plan) {
    if (plan.nproc_per_node < 1)
        throw ConfigError("--nproc-per-node must be at least 1 (got " + std::to_string(plan.nproc_per_node) + ")");
    if (plan.nnodes < 1) throw ConfigError("--nnodes must be at least 1 (got " + std::to_string(plan.nnodes) + ")");
    if (plan.node_rank < 0 || plan.node_rank >= plan.nnodes)
        throw ConfigError("--node-rank must be in 0 … " + std::to_string(plan.nnodes - 1) + " for --nnodes " +
                          std::to_string(plan.nnodes) + " (got " + std::to_string(plan.node_rank) + ")");
    if (plan.master_port < 0 || plan.master_port > 65535)
        throw ConfigError("--master-port must be in 1 … 65535 (got " + std::to_string(plan.master_port) + ")");
    if (plan.nnodes > 1 && plan.master_addr.empty())
        throw ConfigError("--master-addr is needed with --nnodes " + std::to_string(plan.nnodes) +
                          ": the address of the machine with --node-rank 0, the same on every machine");
    if (plan.nnodes > 1 && plan.master_port == 0)
        throw ConfigError("--master-port is needed with --nnodes " + std::to_string(plan.nnodes) +
                          ": every machine must name the same port");
    if (static_cast<long long>(plan.nproc_per_node) * plan.nnodes > (1 << 20))
        throw ConfigError("--nproc-per-node × --nnodes is too large");
}

RunConfig config_for_world(const RunConfig& config, const WorldInfo& w) {
    const bool given = config.nproc_per_node != 1 || config.nnodes != 1;
    if (given && config.world_size() != w.world_size)
        throw ConfigError("--nproc-per-node " + std::to_string(config.nproc_per_node) + " × --nnodes " +
                          std::to_string(config.nnodes) + " makes " + std::to_string(config.world_size()) +
                          " processes, but the launcher started this one with WORLD_SIZE=" +
                          std::to_string(w.world_size) + "; give the same numbers (or leave the options out)");
    RunConfig c = config;
    const bool even = w.world_size % w.local_world_size == 0;
    c.nproc_per_node = even ? w.local_world_size : w.world_size;
    c.nnodes = even ? w.world_size / w.local_world_size : 1;
    c.node_rank = w.node_rank < c.nnodes ? w.node_rank : 0;
    c.master_addr = w.master_addr;
    c.master_port = w.master_port;
    return c;
}

WorldInfo worker_world(const LaunchPlan& plan, int local_rank) {
    WorldInfo w;
    w.rank = plan.node_rank * plan.nproc_per_node + local_rank;
    w.local_rank = local_rank;
    w.world_size = plan.nproc_per_node * plan.nnodes;
    w.local_world_size = plan.nproc_per_node;
    w.node_rank = plan.node_rank;
    w.master_addr = plan.master_addr.empty() ? "127.0.0.1" : plan.master_addr;
    w.master_port = plan.master_port;
    return w;
}

std::vector<std::pair<std::string, std::string>> worker_environment(const WorldInfo& w) {
    return {
        {"RANK", std::to_string(w.rank)},
        {"LOCAL_RANK", std::to_string(w.local_rank)},
        {"WORLD_SIZE", std::to_string(w.world_size)},
        {"LOCAL_WORLD_SIZE", std::to_string(w.local_world_size)},
        {"GROUP_RANK", std::to_string(w.node_rank)},
        {"MASTER_ADDR", w.master_addr},
        {"MASTER_PORT", std::to_string(w.master_port)},
    };
}

int pick_free_port(const std::string& host) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET; // port 0: the kernel's choice
    if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
        throw ConfigError("cannot pick a port on '" + host + "': not an IPv4 address");
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
    socklen_t len = sizeof addr;
    const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                       ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
    const int err = errno;
    ::close(fd);
    if (!bound) throw std::system_error(err, std::generic_category(), "cannot pick a free port on " + host);
    return ntohs(addr.sin_port);
}

std::string address_toward(const std::string& host) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* found = nullptr;
    if (host.empty() || ::getaddrinfo(host.c_str(), "9", &hints, &found) != 0 || !found) return {};
    const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, ::freeaddrinfo);
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return {};
    sockaddr_in local{};
    socklen_t len = sizeof local;
    char text[INET_ADDRSTRLEN] = {};
    const bool routed = ::connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
                        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
                        ::inet_ntop(AF_INET, &local.sin_addr, text, sizeof text);
    ::close(fd);
    return routed ? text : "";
}

bool is_loopback_host(const std::string& host) {
    return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

std::string rank_name(int rank, int pid, const std::string& host) {
    std::string facts = pid > 0 ? "pid " + std::to_string(pid) : "";
    if (!host.empty()) facts += (facts.empty() ? "host " : ", host ") + host;
    return "rank " + std::to_string(rank) + (facts.empty() ? "" : " (" + facts + ")");
}

std::string rank_with_host(const WorldInfo& w) {
    return rank_name(w.rank, -1, is_loopback_host(w.master_addr) ? std::string() : address_toward(w.master_addr));
}

std::string seconds_text(std::chrono::milliseconds t) {
    std::ostringstream s;
    s << static_cast<double>(t.count()) / 1000.0 << " s";
    return s.str();
}

} // namespace accum::dist
