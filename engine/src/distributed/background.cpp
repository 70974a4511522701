// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed/background.h"

#include <chrono>

namespace accum::dist {

namespace {

constexpr auto kExitWait = std::chrono::seconds(2);

} // namespace

// Never destroyed: a thread left busy at the end of the process still counts
// itself out through it. The first use registers the wait at exit, after
// LibTorch's own statics, so that it runs before they are destroyed.
Background& background() {
    static Background* threads = new Background;
    struct WaitAtExit {
        ~WaitAtExit() { (void)threads->wait_idle(kExitWait); }
    };
    static WaitAtExit wait_at_exit;
    return *threads;
}

} // namespace accum::dist
