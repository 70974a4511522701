// SPDX-License-Identifier: GPL-3.0-or-later
// Which backend a run gets (Gloo, NCCL: what this build has and where the model
// is), and the --dist-timeout it waits with.
#include "distributed/process_group.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "accum/errors.h"
#include "distributed/rendezvous.h"

namespace accum::dist {

bool backend_built(Backend backend) {
#ifdef ACCUM_WITH_GLOO
    if (backend == Backend::Gloo) return true;
#endif
#ifdef ACCUM_WITH_NCCL
    if (backend == Backend::Nccl) return true;
#endif
    return backend == Backend::Auto;
}

Backend resolve_backend(Backend requested, bool on_cuda) {
    if (requested == Backend::Auto) {
        if (on_cuda && backend_built(Backend::Nccl)) return Backend::Nccl;
        if (backend_built(Backend::Gloo)) return Backend::Gloo;
        throw ConfigError("--backend auto: this build has neither Gloo (its headers were not found when it was "
                          "built) nor NCCL for a model on CUDA");
    }
    if (requested == Backend::Nccl) {
        if (!backend_built(Backend::Nccl))
            throw ConfigError("--backend nccl: this build has no NCCL (the LibTorch it was built with has no CUDA "
                              "or no NCCL); use --backend gloo");
        if (!on_cuda) throw ConfigError("--backend nccl needs the model on CUDA (--device cuda); use --backend gloo");
    }
    if (requested == Backend::Gloo && !backend_built(Backend::Gloo))
        throw ConfigError("--backend gloo: this build has no Gloo (its headers were not found when it was built)");
    return requested;
}

std::chrono::milliseconds parse_dist_timeout(double seconds) {
    if (!std::isfinite(seconds) || seconds <= 0 || seconds > 1e6)
        throw ConfigError("--dist-timeout must be a positive number of seconds (got " + std::to_string(seconds) + ")");
    return std::chrono::milliseconds(std::max<long long>(1, std::llround(seconds * 1000.0)));
}

void announce_failure(const WorldInfo& world, double dist_timeout_s, const std::string& message) {
    std::chrono::milliseconds timeout(std::chrono::seconds(60));
    try {
        timeout = parse_dist_timeout(dist_timeout_s);
    } catch (const ConfigError&) {
        // an invalid --dist-timeout is the failure itself: the default
    }
    announce_failure_before_joining(world, timeout, message);
}
} // namespace accum::dist
