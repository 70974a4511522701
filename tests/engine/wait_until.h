// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The engine tests' one bounded wait on a condition, for threads without an
// event loop (QTRY_* and QTest::qWaitFor serve the test thread's). The caller
// fails when it returns false: a deadline passed is a failure, never a way to
// let time go by.

#include <chrono>
#include <thread>

namespace accum::testing {

// Polls `done` until it holds (true) or `timeout` has passed (false, after a
// last look).
template <class Done>
bool wait_until(Done&& done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        if (done()) return true;
        if (std::chrono::steady_clock::now() >= deadline) return done();
        std::this_thread::sleep_for(std::chrono::milliseconds(5)); // not-a-wait: the poll's period
    }
}

} // namespace accum::testing
