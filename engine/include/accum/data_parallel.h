#pragma once
// Data parallelism as the engine's users see it (accum-run, the studio):
// where this process stands in a run of several processes, read from the
// variables torchrun sets, and the launch of this machine's ranks as torchrun
// does it. Torch-free; the training side is engine/src/distributed/.

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace accum {
struct RunConfig; // accum/run_config.h
}

namespace accum::dist {

struct WorldInfo {
    int rank = 0;             // RANK: 0 … world_size - 1
    int local_rank = 0;       // LOCAL_RANK: the rank among this machine's workers
    int world_size = 1;       // WORLD_SIZE
    int local_world_size = 1; // LOCAL_WORLD_SIZE: workers on this machine
    int node_rank = 0;        // GROUP_RANK: which machine (torchrun's name for --node-rank)
    std::string master_addr = "127.0.0.1"; // MASTER_ADDR: where the store listens (rank 0's, or torchrun's agent's)
    int master_port = 0;      // MASTER_PORT
    // torchrun: TORCHELASTIC_USE_AGENT_STORE=True — its agent serves the store at
    // MASTER_ADDR:MASTER_PORT and every rank, rank 0 too, joins it as a client.
    bool agent_store = false;
    // TORCHELASTIC_RESTART_COUNT: how often torchrun has restarted the worker
    // group; above 0, the run resumes from its output directory's latest
    // complete checkpoint.
    int restart_count = 0;
};

// Reads one environment variable; nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_environment();

// The process's place in the run when a launcher started it: nullopt when neither
// RANK nor WORLD_SIZE is set (a plain one-process run). Otherwise RANK and
// WORLD_SIZE are required, and MASTER_ADDR and MASTER_PORT too when WORLD_SIZE > 1;
// LOCAL_RANK / LOCAL_WORLD_SIZE default to RANK / WORLD_SIZE (one machine) and
// GROUP_RANK to 0; TORCHELASTIC_USE_AGENT_STORE (True/False) and
// TORCHELASTIC_RESTART_COUNT are read as torchrun sets them. Throws ConfigError
// naming the variable and its value.
std::optional<WorldInfo> world_from_environment(const EnvLookup& env = process_environment());

// The configuration a rank started by a launcher trains with: `config` with
// --nproc-per-node and --nnodes taken from the environment's world (an external
// launcher need not repeat them). Throws ConfigError when the options given
// contradict the environment (e.g. --nproc-per-node 4 under WORLD_SIZE=2).
RunConfig config_for_world(const RunConfig& config, const WorldInfo& world);

// A process started by a launcher that cannot train (a bad option, an unusable
// --output-dir) tells the other ranks before it exits — rank 0 opens the
// rendezvous only to leave its message there — so that they stop within
// seconds, naming its failure, instead of waiting out --dist-timeout. At most a
// few seconds; never throws.
void announce_failure(const WorldInfo& world, double dist_timeout_s, const std::string& message);

// accum-run --nproc-per-node N [--nnodes M --node-rank R --master-addr H
// --master-port P]: starts this machine's N ranks as copies of `program` with
// `arguments` and the rank variables in their environment, and waits for them
// (one failing stops the others; SIGINT/SIGTERM are passed on). A one-machine
// run gets a free port on 127.0.0.1 unless --master-port was given.
struct LaunchOutcome {
    int exit_code = 0;       // 0; the failed rank's code; 6 when a signal ended it; 130 interrupted
    std::string message;     // which rank failed and how ("" on success)
};
LaunchOutcome launch_ranks(const RunConfig& config, const std::string& program,
                           const std::vector<std::string>& arguments);

} // namespace accum::dist
// SPDX-License-Identifier: GPL-3.0-or-later
