// RunControl across threads: a stop, a resume or a single step
// requested from another thread always reaches a run waiting in proceed(). No
// torch here, and every wait is bounded: a request that is lost fails the test
// with the trial's number instead of hanging it. The bounds are generous (a
// lost request never arrives); how fast one arrives is not checked here.
#include <QtTest/QtTest>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "training/control.h"
#include "wait_until.h"

using namespace accum;

namespace {

using namespace std::chrono_literals;

// One trial: a fresh RunControl and a thread that pauses it and then waits in
// proceed(). The thread only records; the test thread checks. The state is
// shared, so that a thread still stuck after a failed trial can be left behind
// (detached) without outliving what it uses.
struct Trial {
    RunControl control;
    std::atomic<bool> about_to_proceed{false};
    std::promise<bool> proceeded; // what proceed() returned
    std::future<bool> result;     // the test thread's end of it
    std::thread waiter;
};

std::shared_ptr<Trial> start_paused_waiter() {
    auto trial = std::make_shared<Trial>();
    trial->result = trial->proceeded.get_future();
    trial->waiter = std::thread([t = trial] {
        t->control.pause();
        t->about_to_proceed.store(true);
        t->proceeded.set_value(t->control.proceed());
    });
    return trial;
}

// Waits until the waiter is about to call proceed(); false after `limit`.
bool wait_until_about_to_proceed(const Trial& trial, std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!trial.about_to_proceed.load()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::yield();
    }
    return true;
}

// Ends the waiter on every path: a trial that failed is released with a resume
// and a stop (both notify under the lock); a thread that still does not end is
// detached rather than destroyed joinable, which would end the test program.
void finish(Trial& trial) {
    if (trial.result.wait_for(0s) != std::future_status::ready) {
        trial.control.resume();
        trial.control.request_stop();
    }
    if (trial.result.wait_for(5s) == std::future_status::ready)
        trial.waiter.join();
    else
        trial.waiter.detach();
}

// Spins for `n` short steps: moves the request across the moment the waiter
// checks its predicate and goes to sleep.
void spin(int n) {
    std::atomic<int> steps{0};
    while (steps.fetch_add(1, std::memory_order_relaxed) < n) {
    }
}

} // namespace

class TestControl : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // A paused proceed() returns false after a request_stop() from another
    // thread, 1,000 times in a row. The stop is sent
    // right as the waiter enters proceed(), a little later each trial, to land
    // between its check of the predicate and its sleep, where a notify made
    // without the mutex was lost.
    void stopReachesAPausedRun() {
        constexpr int trials = 1000;
        for (int i = 0; i < trials; ++i) {
            auto trial = start_paused_waiter();
            const bool started = wait_until_about_to_proceed(*trial, 10000ms);
            if (started) {
                spin(i % 200);
                trial->control.request_stop();
            }
            const bool in_time = started && trial->result.wait_for(10s) == std::future_status::ready;
            finish(*trial);
            const auto where = "trial " + std::to_string(i + 1) + " of " + std::to_string(trials);
            QVERIFY2(started, (where + ": the waiting thread did not start within 10 s").c_str());
            QVERIFY2(in_time, (where + ": the paused proceed() did not return within 10 s of request_stop()").c_str());
            QVERIFY2(!trial->result.get(), (where + ": proceed() returned true after a stop").c_str());
        }
    }

    // resume() and step_once() from another thread also release a paused
    // proceed() (true: the run goes on); a stop before proceed() ends it at once.
    void resumeAndStepReachAPausedRun() {
        for (const bool by_step : {false, true}) {
            const std::string what = by_step ? "step_once()" : "resume()";
            auto trial = start_paused_waiter();
            const bool started = wait_until_about_to_proceed(*trial, 10000ms);
            if (started) {
                if (by_step)
                    trial->control.step_once();
                else
                    trial->control.resume();
            }
            const bool in_time = started && trial->result.wait_for(10s) == std::future_status::ready;
            finish(*trial);
            QVERIFY2(started, "the waiting thread did not start within 10 s");
            QVERIFY2(in_time, ("the paused proceed() did not return within 10 s of " + what).c_str());
            QVERIFY2(trial->result.get(), ("proceed() returned false after " + what).c_str());
            // The step was used: none is left to take.
            QVERIFY(!trial->control.take_step());
        }
        RunControl stopped;
        stopped.pause();
        stopped.request_stop();
        QVERIFY(!stopped.proceed());
        QVERIFY(stopped.stop_requested());
        stopped.reset();
        QVERIFY(!stopped.stop_requested());
        QCOMPARE(stopped.stop_requested_for(), std::chrono::steady_clock::duration::zero());
    }

    // times_held() grows once each time proceed() starts to wait, and only
    // then: not for a proceed() that goes on at once (not paused, or a step
    // granted before it), and once for each agreement noted (note_held()).
    void heldCountsEachWait() {
        RunControl c;
        QVERIFY(c.proceed()); // not paused
        QCOMPARE(c.times_held(), std::int64_t(0));
        c.pause();
        c.step_once();
        QVERIFY(c.proceed()); // the step granted before: no wait
        QCOMPARE(c.times_held(), std::int64_t(0));
        c.note_held();
        QCOMPARE(c.times_held(), std::int64_t(1));

        auto trial = start_paused_waiter();
        const bool held = testing::wait_until([&] { return trial->control.times_held() == 1; }, 10000ms);
        if (held) trial->control.step_once();
        const bool went_on = held && trial->result.wait_for(10s) == std::future_status::ready;
        finish(*trial);
        QVERIFY2(held, "the paused proceed() was not counted as held");
        QVERIFY2(went_on, "the held proceed() did not go on after step_once()");
        QVERIFY(trial->result.get());
        QCOMPARE(trial->control.times_held(), std::int64_t(1));
    }
};

QTEST_GUILESS_MAIN(TestControl)
#include "test_control.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
