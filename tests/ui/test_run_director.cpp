// SPDX-License-Identifier: GPL-3.0-or-later
// The run director alone (run_director.h), on a fake surface: who holds the
// engine and what starts, refused in words; the lesson borrowing the form and
// giving it back; Reset to defaults and Undo. Logic only: no window, no training.

#include <QSignalSpy>
#include <QTest>
#include <vector>

#include "experiments.h"
#include "run_director.h"

namespace {

// Records what the director asks; the engine's state and the form are set by the test.
class FakeSurface : public studio::RunSurface {
public:
    studio::EngineState state;
    accum::RunConfig form;
    bool valid = true;
    QString problems = QStringLiteral("--batch-size must be at least 1");
    std::vector<std::pair<accum::RunConfig, QString>> live_starts;
    std::vector<studio::Experiment> experiments;
    std::vector<accum::RunConfig> experiment_bases; // the lab's base when each started
    std::function<accum::RunConfig()> lab_base;
    QStringList refusals;
    int stores = 0, live_stops = 0, lab_cancels = 0, live_tabs = 0;
    std::vector<std::pair<studio::LiveFocus, bool>> focuses;
    bool lab_runs = true; // what start_lab_experiment answers

    studio::EngineState engine_state() const override { return state; }
    accum::RunConfig form_config() const override { return form; }
    void set_form_config(const accum::RunConfig& c) override { form = c; }
    bool form_valid() const override { return valid; }
    QString form_problems() const override { return problems; }
    void start_live_run(const accum::RunConfig& c, const QString& label) override {
        live_starts.emplace_back(c, label);
        state.live_running = true;
    }
    void stop_live_run() override { ++live_stops; }
    bool start_lab_experiment(studio::Experiment e) override {
        experiments.push_back(e);
        if (lab_base) experiment_bases.push_back(lab_base());
        state.lab_running = lab_runs;
        return lab_runs;
    }
    void cancel_lab_experiment() override { ++lab_cancels; }
    void show_live_tab() override { ++live_tabs; }
    void show_live(studio::LiveFocus f, bool build_up) override { focuses.emplace_back(f, build_up); }
    void show_refusal(const QString& why) override { refusals << why; }
    void store_settings() override { ++stores; }
};

accum::RunConfig config_with_batch(std::int64_t b) {
    accum::RunConfig c;
    c.batch_size = b;
    return c;
}

} // namespace

class TestRunDirector : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void startRunTakesTheFormAndCountsRuns();
    void busyEngineRefusesEveryStart();
    void invalidFormIsRefusedWithItsProblems();
    void demosByName();
    void demoOnItsOwnConfigurationLeavesTheForm();
    void lessonBorrowsTheFormOnceAndGivesItBack();
    void lessonRefusedWhileBusy();
    void lessonStopsWhatRuns();
    void resetAndUndoDuringTheLesson();
};

void TestRunDirector::startRunTakesTheFormAndCountsRuns() {
    FakeSurface s;
    s.form = config_with_batch(32);
    studio::RunDirector d(s);
    QVERIFY(d.start_run());
    QCOMPARE(int(s.live_starts.size()), 1);
    const auto& [config, label] = s.live_starts.front();
    QCOMPARE(config.batch_size, 32);
    QVERIFY(config.record_micro_steps); // the faint per-micro-batch curve
    QVERIFY(config.quiet);
    QCOMPARE(label, QStringLiteral("run 1"));
    QCOMPARE(s.stores, 1); // the user's run is remembered
    s.state.live_running = false;
    QVERIFY(d.start_run());
    QCOMPARE(s.live_starts.back().second, QStringLiteral("run 2"));
}

void TestRunDirector::busyEngineRefusesEveryStart() {
    using studio::Experiment;
    for (const auto& busy : {studio::EngineState{true, false, false, false}, studio::EngineState{false, false, true, false},
                             studio::EngineState{true, false, false, true}}) {
        FakeSurface s;
        s.state = busy;
        studio::RunDirector d(s);
        QVERIFY(!d.start_run());
        QVERIFY(!d.run_experiment(Experiment::CompareStyles));
        QVERIFY(d.run_demo(QStringLiteral("code-panel"), accum::RunConfig{})); // a known name, refused
        QVERIFY(s.live_starts.empty());
        QVERIFY(s.experiments.empty());
        QCOMPARE(s.refusals.size(), 3);
        for (const auto& why : s.refusals) {
            QCOMPARE(why, studio::engine_refusal(busy));
            QVERIFY(why.startsWith(QStringLiteral("another run is in progress")));
        }
    }
}

void TestRunDirector::invalidFormIsRefusedWithItsProblems() {
    FakeSurface s;
    s.valid = false;
    studio::RunDirector d(s);
    QVERIFY(!d.start_run());
    QCOMPARE(s.refusals, QStringList{s.problems});
    QVERIFY(s.live_starts.empty());
    QCOMPARE(s.stores, 0);
}

void TestRunDirector::demosByName() {
    const auto names = studio::RunDirector::demo_names();
    QCOMPARE(names.front(), QStringLiteral("code-panel"));
    QCOMPARE(names.size(), 1 + int(studio::experiments().size()));
    FakeSurface s;
    studio::RunDirector d(s);
    QVERIFY(!d.run_demo(QStringLiteral("no-such-demo")));
    QVERIFY(d.run_demo(QStringLiteral("code-panel")));
    QCOMPARE(s.live_tabs, 1);
    QCOMPARE(int(s.live_starts.size()), 1);
    s.state = {};
    for (const auto& info : studio::experiments()) {
        s.state = {};
        QVERIFY(d.run_demo(QLatin1String(info.id)));
        QCOMPARE(s.experiments.back(), info.experiment);
    }
}

void TestRunDirector::demoOnItsOwnConfigurationLeavesTheForm() {
    FakeSurface s;
    s.form = config_with_batch(8);
    studio::RunDirector d(s);
    s.lab_base = [&d] { return d.lab_base_config(); };
    // The lab starts from the demo's configuration, this once; the form stays.
    QVERIFY(d.run_demo(QStringLiteral("compare-styles"), config_with_batch(48)));
    QCOMPARE(s.experiment_bases.back().batch_size, 48);
    QCOMPARE(s.form.batch_size, 8);
    QCOMPARE(d.lab_base_config().batch_size, 8);
    // A live demo: not remembered in the saved settings.
    s.state = {};
    QVERIFY(d.run_demo(QStringLiteral("code-panel"), config_with_batch(24)));
    QCOMPARE(s.live_starts.back().first.batch_size, 24);
    QCOMPARE(s.stores, 0);
    // An invalid demo configuration is refused with the engine's reason, naming the option.
    s.state = {};
    QVERIFY(d.run_demo(QStringLiteral("code-panel"), config_with_batch(0)));
    QCOMPARE(int(s.live_starts.size()), 1);
    QVERIFY2(s.refusals.back().contains(QStringLiteral("batch")), qPrintable(s.refusals.back()));
}

void TestRunDirector::lessonBorrowsTheFormOnceAndGivesItBack() {
    FakeSurface s;
    s.form = config_with_batch(8);
    studio::RunDirector d(s);
    QSignalSpy started(&d, &studio::RunDirector::lesson_run_started);
    d.run_lesson_live(config_with_batch(256), studio::LiveFocus::Memory);
    QCOMPARE(started.count(), 1);
    QCOMPARE(s.live_starts.back().first.batch_size, 256);
    QCOMPARE(s.focuses.back(), std::make_pair(studio::LiveFocus::Memory, false));
    QVERIFY(d.user_config().has_value());
    QCOMPARE(d.user_config()->batch_size, 8);
    // The next step: the user's configuration is still the one kept, not step 1's.
    s.state = {};
    d.run_lesson_experiment(config_with_batch(64), studio::Experiment::CompareStyles);
    QCOMPARE(started.count(), 2);
    QCOMPARE(s.form.batch_size, 64);
    QCOMPARE(d.user_config()->batch_size, 8);
    // The mechanism's step builds the loop up.
    s.state = {};
    d.run_lesson_live(config_with_batch(16), studio::LiveFocus::Code);
    QCOMPARE(s.focuses.back(), std::make_pair(studio::LiveFocus::Code, true));
    d.leave_lesson();
    QCOMPARE(s.form.batch_size, 8);
    QVERIFY(!d.user_config().has_value());
}

void TestRunDirector::lessonRefusedWhileBusy() {
    FakeSurface s;
    s.form = config_with_batch(8);
    s.state.live_running = true; // a run the user started by hand
    studio::RunDirector d(s);
    QSignalSpy refused(&d, &studio::RunDirector::lesson_run_refused);
    d.run_lesson_live(config_with_batch(256), studio::LiveFocus::Balanced);
    QCOMPARE(refused.count(), 1);
    QCOMPARE(refused.front().front().toString(), studio::engine_refusal(s.state));
    QCOMPARE(s.form.batch_size, 8); // asked before the form changes
    QVERIFY(!d.user_config().has_value());
    // The lab refusing to start (the engine's own refusal) is reported too.
    s.state = {};
    s.lab_runs = false;
    d.run_lesson_experiment(config_with_batch(64), studio::Experiment::CompareStyles);
    QCOMPARE(refused.count(), 2);
}

void TestRunDirector::lessonStopsWhatRuns() {
    FakeSurface s;
    studio::RunDirector d(s);
    s.state.live_running = true;
    d.stop_lesson_run();
    QCOMPARE(s.live_stops, 1);
    QCOMPARE(s.lab_cancels, 0);
    s.state = {};
    s.state.lab_running = true;
    d.stop_lesson_run();
    QCOMPARE(s.live_stops, 1);
    QCOMPARE(s.lab_cancels, 1);
}

void TestRunDirector::resetAndUndoDuringTheLesson() {
    FakeSurface s;
    s.form = config_with_batch(8);
    studio::RunDirector d(s);
    QVERIFY(!d.undo_reset()); // nothing to undo
    d.run_lesson_live(config_with_batch(256), studio::LiveFocus::Balanced);
    QVERIFY(!d.reset_to_defaults()); // the lesson's run holds the engine
    s.state = {};
    QVERIFY(d.reset_to_defaults());
    QCOMPARE(s.form.batch_size, accum::RunConfig{}.batch_size);
    QCOMPARE(d.user_config()->batch_size, accum::RunConfig{}.batch_size); // what leaving brings back
    QVERIFY(d.can_undo_reset());
    QVERIFY(d.undo_reset());
    QCOMPARE(s.form.batch_size, 256);
    QCOMPARE(d.user_config()->batch_size, 256);
    QVERIFY(!d.can_undo_reset());
}

QTEST_GUILESS_MAIN(TestRunDirector)
#include "test_run_director.moc"
