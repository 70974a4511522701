// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The plan of a launch on one or several machines, the variables it gives
// every worker (read back by world_from_environment, accum/data_parallel.h),
// and how the messages name ranks, hosts and durations. Torch-free.

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "accum/data_parallel.h"

namespace accum::dist {

using Clock = std::chrono::steady_clock;
// How often the layer's waits look again (the store, a worker's end).
inline constexpr auto kPoll = std::chrono::milliseconds(20);

// This machine's part of a launch. One machine only: master_addr empty means
// 127.0.0.1, master_port 0 a free port.
struct LaunchPlan {
    int nproc_per_node = 1;
    int nnodes = 1;
    int node_rank = 0;
    std::string master_addr;
    int master_port = 0;
};

// Throws ConfigError naming the option at fault.
void validate(const LaunchPlan& plan);

// The world of the worker with this local rank (its rank: node_rank ×
// nproc_per_node + local_rank, as torchrun numbers ranks); the plan must be
// valid and have its port (pick_free_port() for a one-machine launch).
WorldInfo worker_world(const LaunchPlan& plan, int local_rank);

// RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT.
std::vector<std::pair<std::string, std::string>> worker_environment(const WorldInfo& world);

// A TCP port on `host` that nothing listens on now (the kernel's choice for port 0).
// Another program may take it before rank 0 does; rank 0 then reports the port in use.
int pick_free_port(const std::string& host = "127.0.0.1");

// This machine's address toward `host` (an IPv4 address or a name), as a peer
// there sees it: its route's source address (a UDP connect() sends nothing).
// Empty when there is no route or `host` does not resolve.
std::string address_toward(const std::string& host);
// Whether `host` names this machine's loopback (a run on one machine).
bool is_loopback_host(const std::string& host);
// How the messages name a rank: "rank 1", "rank 1 (pid 4242)", "rank 1 (host
// 10.0.0.2)" or "rank 1 (pid 4242, host 10.0.0.2)"; no pid when pid <= 0.
std::string rank_name(int rank, int pid = -1, const std::string& host = {});
// How a rank names itself: with its host (this machine's address toward the
// master) in a run across machines.
std::string rank_with_host(const WorldInfo& world);
// "1.5 s": a duration as the messages say it.
std::string seconds_text(std::chrono::milliseconds t);

} // namespace accum::dist
