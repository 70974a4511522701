#pragma once
// Where a process stands in a data-parallel run, read from the variables
// torchrun sets (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
// MASTER_ADDR, MASTER_PORT), and the plan of a launch on one or several
// machines (--nproc-per-node, --nnodes, --node-rank, --master-addr,
// --master-port) that gives every worker those variables. Torch-free.

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace accum::dist {

struct WorldInfo {
    int rank = 0;             // RANK: 0 … world_size - 1
    int local_rank = 0;       // LOCAL_RANK: the rank among this machine's workers
    int world_size = 1;       // WORLD_SIZE
    int local_world_size = 1; // LOCAL_WORLD_SIZE: workers on this machine
    int node_rank = 0;        // GROUP_RANK: which machine (torchrun's name for --node-rank)
    std::string master_addr = "127.0.0.1"; // MASTER_ADDR: where rank 0's store listens
    int master_port = 0;      // MASTER_PORT
};

// Reads one environment variable; nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_environment();

// The process's place in the run when a launcher started it: nullopt when neither
// RANK nor WORLD_SIZE is set (a plain one-process run). Otherwise RANK and
// WORLD_SIZE are required, and MASTER_ADDR and MASTER_PORT too when WORLD_SIZE > 1;
// LOCAL_RANK / LOCAL_WORLD_SIZE default to RANK / WORLD_SIZE (one machine) and
// GROUP_RANK to 0. Throws ConfigError naming the variable and its value.
std::optional<WorldInfo> world_from_environment(const EnvLookup& env = process_environment());

// A launch of nproc_per_node workers on this machine, which is node node_rank of
// nnodes. master_addr empty: 127.0.0.1 (one machine only); master_port 0: a free
// port is picked (one machine only).
struct LaunchPlan {
    int nproc_per_node = 1;
    int nnodes = 1;
    int node_rank = 0;
    std::string master_addr;
    int master_port = 0;
};

// Throws ConfigError naming the option (--nproc-per-node, --nnodes, --node-rank,
// --master-addr, --master-port).
void validate(const LaunchPlan& plan);

int world_size(const LaunchPlan& plan);
// node_rank × nproc_per_node + local_rank, as torchrun numbers ranks.
int global_rank(const LaunchPlan& plan, int local_rank);
// The world of the worker with this local rank; the plan must be valid and have
// its port (pick_free_port() for a one-machine launch).
WorldInfo worker_world(const LaunchPlan& plan, int local_rank);

// The variables a worker gets: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
// GROUP_RANK, MASTER_ADDR, MASTER_PORT (what world_from_environment reads back).
std::vector<std::pair<std::string, std::string>> worker_environment(const WorldInfo& world);

// A TCP port on `host` that nothing listens on now (the kernel's choice for port 0).
// Another program may take it before rank 0 does; rank 0 then reports the port in use.
int pick_free_port(const std::string& host = "127.0.0.1");

} // namespace accum::dist
