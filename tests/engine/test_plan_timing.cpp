// Speed claims a teacher can repeat: the planner's "× faster" comes
// from timing with the warm-up left out, in alternating rounds, and is stated
// with its spread; five plannings of the same configuration agree within it.
#include <QtTest/QtTest>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "accum/engine_messages.h"
#include "accum/memory_planner.h"

#include "capture.h"

using namespace accum;

namespace {

// The lesson's first step and the case: the CNN at one batch of 256 under
// a 40 MiB budget (README, In front of a class), which fits as 128 × 2 or as
// 256 × 1 with gradient checkpointing: both levers are verified and timed.
RunConfig lesson_problem() {
    RunConfig c;
    c.model = ModelKind::Cnn;
    c.dataset = DatasetKind::FashionMnist;
    c.batch_size = 256;
    c.accumulation_steps = 1;
    c.epochs = 0;
    c.max_steps = 2;
    c.threads = 1;
    c.eval_strategy = Strategy::No;
    c.save_strategy = Strategy::No;
    return c;
}

// A ratio stated the same way in every repeat: without checkpointing over with it.
struct Stated {
    double ratio, low, high;
};

} // namespace

class TestPlanTiming : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // The rounding: the last digit is the one the spread's half-width reaches.
    void ratioTextFollowsTheSpread() {
        QCOMPARE(ratio_text(3.52, 3.3, 3.8), std::string("3.5"));  // half-width 0.25: one decimal
        QCOMPARE(ratio_text(1.071, 1.06, 1.08), std::string("1.07")); // 0.01: two
        QCOMPARE(ratio_text(3.6, 2.2, 4.9), std::string("4"));     // 1.35: none
        QCOMPARE(ratio_text(1.2345, 1.2345, 1.2345), std::string("1.23")); // no spread: two decimals at most
    }

    void fiveRepeatsAgreeWithinTheirSpread() {
        if (!testing::have_fashion_mnist()) QSKIP("dataset-fashion-mnist is not installed");
        const std::int64_t budget = 40 * 1024 * 1024;
        std::vector<Stated> stated;
        for (int repeat = 0; repeat < 5; ++repeat) {
            const auto started = std::chrono::steady_clock::now();
            const auto plan = plan_memory(lesson_problem(), 256, budget);
            const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            QVERIFY2(plan.feasible && plan.verified, plan.message.c_str());
            QCOMPARE(plan.why.code, std::string(message_code::plan_faster)); // both levers fit: 128 × 2 and 256 × 1
            // The pick is the faster by the levers' medians; the rounds' range holds the ratio.
            QVERIFY2(plan.ratio >= 1, plan.message.c_str());
            QVERIFY2(plan.ratio_low <= plan.ratio && plan.ratio <= plan.ratio_high, plan.message.c_str());
            // The message gives the ratio rounded to what its spread allows, and the spread.
            const auto& a = plan.why.args;
            QCOMPARE(a.at("ratio"), ratio_text(plan.ratio, plan.ratio_low, plan.ratio_high));
            QVERIFY2(!a.at("spread").empty(), plan.message.c_str());
            QVERIFY2(english_text(plan.why).find(a.at("ratio") + " × (" + a.at("spread") + ") faster") != std::string::npos,
                     english_text(plan.why).c_str());
            // The verification run and at least one timing round, each past its warm-up,
            // timed at least 3 updates.
            for (const auto& c : plan.candidates)
                QVERIFY2(c.timed_steps >= 3 * 2, qPrintable(QString::number(c.timed_steps)));
            const bool inverted = plan.gradient_checkpointing; // the pick is the checkpointed one
            stated.push_back(inverted ? Stated{1 / plan.ratio, 1 / plan.ratio_high, 1 / plan.ratio_low}
                                      : Stated{plan.ratio, plan.ratio_low, plan.ratio_high});
            qInfo("repeat %d (%.1f s, other processes took up to %.0f %% of the CPUs): %s", repeat + 1, took,
                  100 * plan.timing_others_share, english_text(plan.why).c_str());
        }
        // Agreement: one ratio lies within every repeat's stated spread.
        double lowest_high = stated.front().high, highest_low = stated.front().low;
        for (const auto& s : stated) {
            lowest_high = std::min(lowest_high, s.high);
            highest_low = std::max(highest_low, s.low);
        }
        QVERIFY2(highest_low <= lowest_high,
                 qPrintable(QStringLiteral("the stated spreads share no value: the highest low %1 is above the lowest "
                                           "high %2")
                                .arg(highest_low)
                                .arg(lowest_high)));
    }
};

QTEST_GUILESS_MAIN(TestPlanTiming)
#include "test_plan_timing.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
