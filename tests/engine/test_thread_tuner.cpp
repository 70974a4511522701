// The default thread count's adaptation (training/thread_tuner.h) on made-up
// timings: a machine whose steps take the time a table gives for each thread
// count and each load of other programs. No clock, no torch, no speed asserted.
#include <QtTest/QtTest>

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "other_load.h"
#include "training/thread_tuner.h"

using namespace accum;

namespace {

constexpr std::int64_t kSamples = 256; // one optimizer step: 64 × 4

// The machine: samples/s at each thread count, for the other programs' load now.
struct Machine {
    std::map<int, double> quiet;
    std::map<int, double> busy; // one core taken
    double load = 0.0;          // cores the other programs use now
    double rate(int threads) const { return (load >= 0.5 ? busy : quiet).at(threads); }
};

// The 2-core machine's MLP: two threads are faster when it is quiet, one is
// when another program spins on a core (the figures of the busy-machine benchmark).
Machine two_cores() { return {{{1, 35'000.0}, {2, 44'000.0}}, {{1, 33'000.0}, {2, 9'600.0}}}; }

struct Run {
    ThreadTuner tuner;
    Machine machine;
    std::vector<ThreadDecision> decisions;
    std::vector<int> threads; // at each step
    // `load_of_step` overrides what the meter reports for a step (its noise).
    void steps(int n, const std::function<double(int)>& load_of_step = {}) {
        for (int i = 0; i < n; ++i) {
            const int t = tuner.threads();
            threads.push_back(t);
            const double seconds = static_cast<double>(kSamples) / machine.rate(t);
            const double reported = load_of_step ? load_of_step(i) : machine.load;
            if (auto d = tuner.observe(seconds, kSamples, reported)) decisions.push_back(*d);
        }
    }
    int steps_at(int count, std::size_t from = 0) const {
        int n = 0;
        for (std::size_t i = from; i < threads.size(); ++i) n += threads[i] == count;
        return n;
    }
};

Run make_run(std::vector<int> candidates, Machine m) { return Run{ThreadTuner(std::move(candidates)), m, {}, {}}; }

} // namespace

class TestThreadTuner : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void quietKeepsTheDefaultAndTriesNothing() {
        auto run = make_run({2, 1}, two_cores());
        run.steps(2000);
        QVERIFY(run.decisions.empty());
        QCOMPARE(run.steps_at(1), 0);
        QCOMPARE(run.tuner.threads(), 2);
    }

    void aBusyCoreMovesToOneThreadAndItsEndMovesBack() {
        auto run = make_run({2, 1}, two_cores());
        run.steps(500);
        run.machine.load = 1.0;
        run.steps(2000);
        QCOMPARE(run.decisions.size(), std::size_t(1));
        const auto& busy = run.decisions.front();
        QCOMPARE(busy.previous, 2);
        QCOMPARE(busy.threads, 1);
        QVERIFY(std::abs(busy.other_cores - 1.0) < 1e-9);
        QCOMPARE(busy.rates.size(), std::size_t(2)); // 1 thread, then 2 again under the same load
        QCOMPARE(busy.rates[0].first, 1);
        QCOMPARE(busy.rates[1].first, 2);
        QVERIFY2(busy.reason().find("now 1 (was 2)") != std::string::npos, busy.reason().c_str());
        QVERIFY2(busy.reason().find("1.0 cores") != std::string::npos, busy.reason().c_str());
        QCOMPARE(run.tuner.threads(), 1);
        // Settled: no more trials while the load stays.
        const auto before = run.threads.size();
        run.steps(2000);
        QCOMPARE(run.decisions.size(), std::size_t(1));
        QCOMPARE(run.steps_at(2, before), 0);

        run.machine.load = 0.0; // the other program ends: one thread's pace hardly changes, the load does
        run.steps(2000);
        QCOMPARE(run.decisions.size(), std::size_t(2));
        QCOMPARE(run.decisions.back().previous, 1);
        QCOMPARE(run.decisions.back().threads, 2);
        QCOMPARE(run.tuner.threads(), 2);
    }

    void aLoadFromTheStartIsTriedAtOnce() {
        auto run = make_run({2, 1}, two_cores());
        run.machine.load = 1.0;
        run.steps(300);
        QCOMPARE(run.decisions.size(), std::size_t(1));
        QCOMPARE(run.tuner.threads(), 1);
    }

    void fewerThreadsMustBeClearlyFaster() {
        // On a 4-core machine a busy core leaves 4 threads ahead: kept. And a
        // count within the margin (here 2 % faster) does not replace the current.
        Machine m{{{1, 30'000.0}, {2, 50'000.0}, {3, 60'000.0}, {4, 65'000.0}},
                  {{1, 29'000.0}, {2, 45'000.0}, {3, 49'000.0}, {4, 48'000.0}}};
        auto run = make_run({4, 3, 2, 1}, m);
        run.steps(300);
        run.machine.load = 1.0;
        run.steps(3000);
        QCOMPARE(run.decisions.size(), std::size_t(1));
        QCOMPARE(run.decisions.front().threads, 4);
        QCOMPARE(run.decisions.front().rates.size(), std::size_t(4));
        QCOMPARE(run.tuner.threads(), 4);

        run.machine.busy[3] = 60'000.0; // now 3 is clearly faster: a load change tries again
        run.machine.load = 2.0;
        run.steps(5000);
        QCOMPARE(run.decisions.size(), std::size_t(2));
        QCOMPARE(run.decisions.back().threads, 3);
        QVERIFY(run.decisions.back().reason().find("now 3 (was 4)") != std::string::npos);
    }

    void aSuddenSlowdownWithoutLoadFiguresStartsATrial() {
        auto run = make_run({2, 1}, two_cores());
        const auto unknown = [](int) { return std::nan(""); };
        run.steps(500, unknown);
        run.machine.load = 1.0; // not reported: only the steps' pace shows it
        run.steps(2000, unknown);
        QCOMPARE(run.decisions.size(), std::size_t(1));
        QCOMPARE(run.decisions.front().threads, 1);
        QVERIFY(run.decisions.front().other_cores < 0);
        QVERIFY(run.decisions.front().reason().find("other programs") == std::string::npos);
    }

    void aLoadReadEveryFewStepsIsEnough() {
        // The run reads the load at most every 20 ms: at the MLP's 64 × 4 step
        // (about 6 ms at 44,000 samples/s) one step in four reports it.
        auto run = make_run({2, 1}, two_cores());
        const auto every_fourth = [&run](int i) { return i % 4 == 0 ? run.machine.load : std::nan(""); };
        run.steps(500, every_fourth);
        QVERIFY(run.decisions.empty());
        run.machine.load = 1.0;
        run.steps(2000, every_fourth);
        QCOMPARE(run.decisions.size(), std::size_t(1));
        QCOMPARE(run.decisions.front().threads, 1);
        QVERIFY(std::abs(run.decisions.front().other_cores - 1.0) < 1e-9);
    }

    void theMeterReadsAtMostAsOftenAsAsked() {
        OtherLoadMeter meter; // reads /proc/stat once, at its making
        QVERIFY(std::isnan(meter.take(3600.0))); // its reading is younger than an hour: not read
        QVERIFY(std::isfinite(meter.take()));    // asked without a bound: read
    }

    void aLoadThatComesAndGoesCostsFewerAndFewerTrials() {
        // Another program that spins for half a second now and then: the first
        // trials find two threads as good, and each such trial doubles the wait.
        Machine m = two_cores();
        m.busy = m.quiet; // its load does not slow these steps
        auto run = make_run({2, 1}, m);
        for (int round = 0; round < 40; ++round) {
            run.machine.load = round % 2 ? 1.0 : 0.0;
            run.steps(100); // about 0.6 s
        }
        QVERIFY(!run.decisions.empty());
        for (const auto& d : run.decisions) QCOMPARE(d.threads, 2);
        QVERIFY2(run.decisions.size() <= 6, std::to_string(run.decisions.size()).c_str());
    }

    void aNoisyLoadFigureAveragesOut() {
        // The meter counts in ticks: one step may read 1.6 cores, the next -1.6.
        auto run = make_run({2, 1}, two_cores());
        run.steps(3000, [](int i) { return i % 2 ? 1.6 : -1.6; });
        QVERIFY(run.decisions.empty());
        QCOMPARE(run.tuner.threads(), 2);
    }

    void theStepsAfterASwitchAreLeftOut() {
        // The first step at a new count is slow (its pool wakes up): not timed.
        ThreadTunerOptions options;
        options.settle_steps = 1;
        ThreadTuner tuner({2, 1}, options);
        std::optional<ThreadDecision> decision;
        int last = tuner.threads();
        bool first_after_switch = true; // the run's first step too
        for (int i = 0; i < 3000 && !decision; ++i) {
            const int t = tuner.threads();
            if (t != last) first_after_switch = true;
            last = t;
            double rate = t == 1 ? 33'000.0 : 9'600.0;
            if (first_after_switch) rate /= 100; // a step that would spoil any window it fell into
            first_after_switch = false;
            decision = tuner.observe(kSamples / rate, kSamples, 1.0);
        }
        QVERIFY(decision);
        QCOMPARE(decision->threads, 1);
        for (const auto& [count, rate] : decision->rates)
            QVERIFY2(rate > (count == 1 ? 30'000.0 : 9'000.0), std::to_string(rate).c_str());
    }

    void aCountFarBehindIsTimedOneStep() {
        // Busy, two threads run 3.4 × slower than one: once one thread is timed,
        // two are timed again for a single step after the settle step.
        auto run = make_run({2, 1}, two_cores());
        run.machine.load = 1.0;
        run.steps(300);
        QCOMPARE(run.decisions.size(), std::size_t(1));
        QCOMPARE(run.decisions.front().threads, 1);
        std::size_t first_at_one = 0;
        while (run.threads[first_at_one] != 1) ++first_at_one;
        std::size_t back_at_two = first_at_one;
        while (run.threads[back_at_two] != 2) ++back_at_two;
        std::size_t after = back_at_two;
        while (run.threads[after] == 2) ++after;
        QCOMPARE(int(after - back_at_two), 2); // the settle step and one timed step
    }

    void oneCandidateNeverChanges() {
        ThreadTuner tuner({1, 1});
        for (int i = 0; i < 1000; ++i) QVERIFY(!tuner.observe(0.01, kSamples, i < 500 ? 0.0 : 1.0));
        QCOMPARE(tuner.threads(), 1);
    }
};

QTEST_GUILESS_MAIN(TestThreadTuner)
#include "test_thread_tuner.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
