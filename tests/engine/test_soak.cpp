// Soak: 200 back-to-back runs in one process — completed, stopped at a random
// point, out of memory — with no growth in memory beyond noise and no thread
// left behind.
#include <QtTest/QtTest>

#include <dirent.h>
#include <fstream>
#include <random>
#include <thread>

#include "accum/session.h"

using namespace accum;

namespace {

std::int64_t rss_bytes() {
    std::ifstream statm("/proc/self/statm");
    std::int64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * 4096;
}

int thread_count() {
    int n = 0;
    if (DIR* d = opendir("/proc/self/task")) {
        while (const dirent* e = readdir(d))
            if (e->d_name[0] != '.') ++n;
        closedir(d);
    }
    return n;
}

struct Quiet : Sink {
    SummaryRecord summary;
    void on_summary(const SummaryRecord& s) override { summary = s; }
};

} // namespace

class TestSoak : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void twoHundredRuns() {
        std::mt19937 rng(12345);
        int completed = 0, stopped = 0, oom = 0;
        std::int64_t rss_after_warmup = 0;
        int threads_after_warmup = 0;
        const Mode modes[] = {Mode::Pytorch, Mode::Accelerator, Mode::Trainer};
#ifdef __SANITIZE_ADDRESS__
        constexpr int runs = 60; // each run is several times slower under AddressSanitizer
#else
        constexpr int runs = 200;
#endif
        for (int i = 0; i < runs; ++i) {
            RunConfig c;
            c.mode = modes[i % 3];
            c.dataset = DatasetKind::SyntheticPairs;
            c.model = i % 7 == 0 ? ModelKind::Transformer : ModelKind::Mlp;
            c.batch_size = 32;
            c.accumulation_steps = 2;
            c.epochs = 0;
            c.max_steps = 4;
            c.eval_strategy = Strategy::No;
            c.seed = static_cast<std::uint64_t>(i);
            const int kind = i % 4; // 0, 1 complete; 2 stop at a random point; 3 out of memory
            if (kind == 3) c.memory_budget = "64KiB";
            if (kind == 2) c.max_steps = 100000;
            Session session;
            Quiet sink;
            std::stop_source stop; // this run's: a stop that lands before run() has started still counts
            // A std::jthread, declared after what it uses: joined before those
            // go, also when run() throws (a joinable std::thread destroyed would
            // end the program). It only asks for the stop; the checks are here.
            std::jthread stopper;
            if (kind == 2) {
                const int delay = std::uniform_int_distribution<int>(0, 40)(rng);
                stopper = std::jthread([&stop, delay] {
                    // not-a-wait: the stop lands at a random point of the run
                    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
                    stop.request_stop();
                });
            }
            const auto s = session.run(c, sink, stop.get_token());
            if (stopper.joinable()) stopper.join();
            switch (kind) {
            case 2:
                QVERIFY2(s.status == RunStatus::Stopped, s.message.c_str());
                ++stopped;
                break;
            case 3:
                QVERIFY2(s.status == RunStatus::OutOfMemory, s.message.c_str());
                ++oom;
                break;
            default:
                QVERIFY2(s.status == RunStatus::Completed, s.message.c_str());
                ++completed;
            }
            if (i == 19) {
                rss_after_warmup = rss_bytes();
                threads_after_warmup = thread_count();
            }
        }
        const auto rss_end = rss_bytes();
        qInfo("runs: %d completed, %d stopped, %d out of memory; RSS after 20 runs %.1f MiB, after %d %.1f MiB; "
              "threads %d -> %d",
              completed, stopped, oom, rss_after_warmup / 1048576.0, runs, rss_end / 1048576.0, threads_after_warmup,
              thread_count());
        QCOMPARE(completed + stopped + oom, runs);
        // "Noise": allocator caches and fragmentation; a leak of one data set per run
        // (about 1.5 MiB) would add 270 MiB over the 180 runs.
#ifdef __SANITIZE_ADDRESS__
        // AddressSanitizer keeps freed memory in quarantine, so the resident set grows
        // by design there; the Release build of this test checks it.
        qInfo("AddressSanitizer build: the resident-memory check is left to the Release build");
#else
        QVERIFY2(rss_end - rss_after_warmup < 40 * 1048576, "resident memory grew");
#endif
        QCOMPARE(thread_count(), threads_after_warmup); // no thread left behind
    }
};

QTEST_GUILESS_MAIN(TestSoak)
#include "test_soak.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
