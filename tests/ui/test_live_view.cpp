// SPDX-License-Identifier: GPL-3.0-or-later
// The live view alone (live_view.h), fed records made up here: no engine, no
// window. What it keeps, what the refresh timer draws and when, what a run's
// end shows, and that a new run starts from empty views.

#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>
#include <cmath>

#include "accum/engine_messages.h"
#include "engine_text.h"
#include "live_view.h"
#include "loss_plot.h"
#include "memory_plot.h"
#include "noise_plot.h"
#include "refresh_budget.h"

namespace {

// The widgets the window would lay out, here under one parent and never shown.
struct Views {
    QWidget parent;
    studio::LossPlot* loss = new studio::LossPlot(&parent);
    studio::MemoryPlot* memory = new studio::MemoryPlot(&parent);
    studio::NoisePlot* noise = new studio::NoisePlot(&parent);
    QTableWidget* evals = new QTableWidget(0, 5, &parent);
    QPlainTextEdit* log = new QPlainTextEdit(&parent);
    QProgressBar* progress = new QProgressBar(&parent);
    QLabel* step = new QLabel(&parent);
    QLabel* epoch = new QLabel(&parent);
    QLabel* speed = new QLabel(&parent);
    QLabel* threads = new QLabel(&parent);
    QLabel* eta = new QLabel(&parent);

    Views() { progress->setRange(0, 1000); }
    studio::LiveWidgets widgets() {
        return {loss, memory, noise, evals, log, progress, step, epoch, speed, threads, eta, nullptr};
    }
};

accum::RunConfig ten_steps() {
    accum::RunConfig c;
    c.max_steps = 10;
    c.epochs = 0;
    c.batch_size = 4;
    return c;
}

// Steps first … last, one second and 4 samples each.
studio::RecordBatch steps(int first, int last) {
    studio::RecordBatch batch;
    for (int s = first; s <= last; ++s) {
        accum::StepRecord r;
        r.step = s;
        r.epoch = 0.1 * s;
        r.loss = 1.0 / s;
        r.samples_seen = 4 * s;
        r.elapsed_s = s;
        batch.steps.push_back(r);
        accum::MemoryRecord m;
        m.elapsed_s = s;
        m.memory_bytes = m.peak_memory_bytes = 1 << 20;
        batch.memory.push_back(m);
    }
    return batch;
}

accum::SummaryRecord completed(double seconds, double rate) {
    accum::SummaryRecord s;
    s.status = accum::RunStatus::Completed;
    s.train_runtime_s = seconds;
    s.samples_per_second = rate;
    s.final_loss = 0.25;
    return s;
}

} // namespace

class TestLiveView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void recordsAreKeptAndDrawnByTheTimer();
    void threadCountAndItsChange();
    void endDrawsTheLastRecordsAndTheTimes();
    void refusedStartDrawsNothing();
    void outOfMemoryIsMarked();
    void newRunStartsEmpty();
    void logFollowsUnlessScrolledUp();
    void durations();
};

void TestLiveView::recordsAreKeptAndDrawnByTheTimer() {
    Views v;
    studio::LiveView live(v.widgets());
    live.start(ten_steps(), QStringLiteral("run 1"));
    QVERIFY(live.running());
    QVERIFY(live.refreshing());
    QCOMPARE(live.refresh_interval_ms(), studio::RefreshBudget::kFastestMs);
    QCOMPARE(live.run().label, QStringLiteral("run 1"));
    QCOMPARE(live.run().source, QStringLiteral("live"));

    auto batch = steps(1, 3);
    accum::EvalRecord e;
    e.step = 3;
    e.epoch = 0.3;
    e.eval_loss = 0.5;
    e.eval_accuracy = 0.75;
    e.eval_f1 = 0.625;
    batch.evals.push_back(e);
    batch.logs << QStringLiteral("step 3: loss 0.33");
    batch.run_directory = QStringLiteral("runs/one");
    live.append(batch);
    // Kept at once, and the table's row; drawn only at the timer's tick.
    QCOMPARE(int(live.run().steps.size()), 3);
    QCOMPARE(int(live.run().evals.size()), 1);
    QCOMPARE(live.run().folder, QStringLiteral("runs/one"));
    QCOMPARE(v.evals->rowCount(), 1);
    const QStringList cells = {"0.30", "3", "0.5000", "0.7500", "0.6250"};
    for (int c = 0; c < cells.size(); ++c) QCOMPARE(v.evals->item(0, c)->text(), cells[c]);
    QCOMPARE(v.loss->step_point_count(), 0);
    QVERIFY(v.log->toPlainText().isEmpty());
    QVERIFY(v.step->text().isEmpty());

    QTRY_VERIFY_WITH_TIMEOUT(v.log->toPlainText().contains(QStringLiteral("step 3: loss 0.33")), 10000);
    QCOMPARE(v.loss->step_point_count(), 3);
    QCOMPARE(v.memory->point_count(), 3);
    // 3 of max_steps 10; ETA from 3 s for 30 %: 7 s left.
    QCOMPARE(v.progress->value(), 300);
    QCOMPARE(v.step->text(), QStringLiteral("Step 3"));
    QCOMPARE(v.epoch->text(), QStringLiteral("Epoch 0.30"));
    QCOMPARE(v.speed->text(), studio::samples_rate_text(4.0));
    QCOMPARE(v.eta->text(), QStringLiteral("ETA 0:07"));
    QVERIFY(live.refreshing());
}

void TestLiveView::threadCountAndItsChange() {
    Views v;
    studio::LiveView live(v.widgets());
    QSignalSpy changed(&live, &studio::LiveView::threads_changed);
    live.start(ten_steps(), QStringLiteral("run 1"));
    studio::RecordBatch batch;
    const QString first = QStringLiteral("threads: 2 (LibTorch's pool 2, BLAS 1), the default for this model on 2 cores");
    batch.logs << first;
    live.append(batch);
    QCOMPARE(v.threads->text(), QStringLiteral("2 threads"));
    QCOMPARE(v.threads->toolTip(), first);
    QCOMPARE(changed.count(), 0); // the start's count is no news
    const QString now = QStringLiteral("threads: now 1 (was 2), other programs using 1.0 cores");
    batch.logs = {now};
    live.append(batch);
    QCOMPARE(v.threads->text(), QStringLiteral("1 thread"));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.front().front().toString(), now);
}

void TestLiveView::endDrawsTheLastRecordsAndTheTimes() {
    Views v;
    studio::LiveView live(v.widgets());
    live.start(ten_steps(), QStringLiteral("run 1"));
    live.append(steps(1, 10));
    live.finish(completed(65.0, 123.4)); // before any tick: the end draws them
    // The made-up summary's 65 s of training, as the status row words a run's length.
    const QString length_text = QStringLiteral("took 1:05");
    QVERIFY(!live.running());
    QVERIFY(!live.refreshing());
    QVERIFY(live.run().has_summary);
    QCOMPARE(live.last_summary().train_runtime_s, 65.0);
    QCOMPARE(v.loss->step_point_count(), 10);
    QCOMPARE(v.progress->value(), 1000);
    QCOMPARE(v.step->text(), QStringLiteral("Step 10"));
    QCOMPARE(v.eta->text(), length_text);
    QCOMPARE(v.speed->text(), studio::samples_rate_text(123.4));
    // A change of language sets the ended run's times again, not an ETA.
    v.eta->clear();
    live.retranslate();
    QCOMPARE(v.eta->text(), length_text);
}

void TestLiveView::refusedStartDrawsNothing() {
    Views v;
    studio::LiveView live(v.widgets());
    live.start(ten_steps(), QStringLiteral("run 1"));
    accum::SummaryRecord refused;
    refused.status = accum::RunStatus::Error;
    refused.detail.code = accum::message_code::run_in_progress;
    live.finish(refused);
    QVERIFY(!live.refreshing());
    QVERIFY(live.run().has_summary);
    QVERIFY(v.eta->text().isEmpty());
    QCOMPARE(v.progress->value(), 0);
}

void TestLiveView::outOfMemoryIsMarked() {
    Views v;
    studio::LiveView live(v.widgets());
    live.start(ten_steps(), QStringLiteral("run 1"));
    live.append(steps(1, 2));
    accum::SummaryRecord oom;
    oom.status = accum::RunStatus::OutOfMemory;
    oom.peak_memory_bytes = 2 << 20;
    live.finish(oom);
    QVERIFY(v.memory->has_oom_marker());
    QVERIFY(v.progress->value() < 1000); // not completed
}

void TestLiveView::newRunStartsEmpty() {
    Views v;
    studio::LiveView live(v.widgets());
    live.start(ten_steps(), QStringLiteral("run 1"));
    auto batch = steps(1, 4);
    batch.evals.push_back(accum::EvalRecord{});
    batch.logs << QStringLiteral("threads: 2 (pool 2)");
    live.append(batch);
    live.finish(completed(4.0, 4.0));
    QCOMPARE(v.loss->step_point_count(), 4);
    QVERIFY(!v.log->toPlainText().isEmpty());

    auto second = ten_steps();
    second.batch_size = 8;
    live.start(second, QStringLiteral("run 2"));
    QVERIFY(live.refreshing());
    QCOMPARE(live.run().label, QStringLiteral("run 2"));
    QCOMPARE(live.run().config.batch_size, 8);
    QVERIFY(live.run().steps.empty());
    QVERIFY(!live.run().has_summary);
    QCOMPARE(v.evals->rowCount(), 0);
    QVERIFY(v.log->toPlainText().isEmpty());
    QCOMPARE(v.progress->value(), 0);
    for (auto* label : {v.step, v.epoch, v.speed, v.threads, v.eta}) QVERIFY(label->text().isEmpty());
    live.retranslate(); // a language switch before the engine's threads line: the first run's count stays gone
    QVERIFY2(v.threads->text().isEmpty(), qPrintable(v.threads->text()));
    live.refresh(true);
    QCOMPARE(v.loss->step_point_count(), 0);
    QCOMPARE(v.memory->point_count(), 0);
    live.append(steps(1, 2));
    live.refresh(true);
    QCOMPARE(v.loss->step_point_count(), 2);
    QCOMPARE(v.progress->value(), 200);
}

void TestLiveView::logFollowsUnlessScrolledUp() {
    Views v;
    v.parent.resize(400, 300);
    v.log->setGeometry(0, 0, 300, 120);
    v.log->raise();
    v.parent.show(); // the scroll bar's range needs a laid-out viewport
    QVERIFY(QTest::qWaitForWindowExposed(&v.parent));
    studio::LiveView live(v.widgets());
    live.start(ten_steps(), QStringLiteral("run 1"));
    auto lines = [&live](int from) {
        studio::RecordBatch batch;
        for (int i = from; i < from + 50; ++i) batch.logs << QStringLiteral("line %1").arg(i);
        live.append(batch);
        live.refresh(true);
    };
    auto* bar = v.log->verticalScrollBar();
    lines(0);
    QVERIFY(bar->maximum() > 0);
    QCOMPARE(bar->value(), bar->maximum()); // at the end: it follows
    // Scrolled up to read: new lines leave the view where it is.
    bar->triggerAction(QAbstractSlider::SliderToMinimum);
    QCOMPARE(bar->value(), 0);
    lines(50);
    QCOMPARE(bar->value(), 0);
    QVERIFY(v.log->toPlainText().contains(QStringLiteral("line 99")));
    // Back at the end: it follows again.
    bar->triggerAction(QAbstractSlider::SliderToMaximum);
    lines(100);
    QCOMPARE(bar->value(), bar->maximum());
}

void TestLiveView::durations() {
    using studio::LiveView;
    QCOMPARE(LiveView::format_duration(65.0), QStringLiteral("1:05"));
    QCOMPARE(LiveView::format_duration(3723.0), QStringLiteral("1:02:03"));
    QCOMPARE(LiveView::format_duration(0.4), QStringLiteral("0:00"));
    QCOMPARE(LiveView::format_duration(std::nan("")), QStringLiteral("–"));
    QCOMPARE(LiveView::format_duration(-1.0), QStringLiteral("–"));
    QCOMPARE(LiveView::threads_text(1), QStringLiteral("1 thread"));
    QCOMPARE(LiveView::threads_text(4), QStringLiteral("4 threads"));
}

QTEST_MAIN(TestLiveView)
#include "test_live_view.moc"
