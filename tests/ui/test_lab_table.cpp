// SPDX-License-Identifier: GPL-3.0-or-later
// The lab's table alone (lab_table.h), filled from results made up here: no
// run, no panel. Each cell is checked against what the made-up records give:
// the shape, the final loss, |Δ loss| against the first run, and which columns
// show for which runs.

#include <QTest>
#include <vector>

#include "lab_panel_parts.h"
#include "lab_table.h"

namespace {

using namespace studio::lab_parts;

studio::RunResult run(const QString& label, std::int64_t b, std::int64_t k, const std::vector<double>& losses) {
    studio::RunResult r;
    r.label = label;
    r.config.batch_size = b;
    r.config.accumulation_steps = k;
    r.has_summary = true;
    r.summary.status = accum::RunStatus::Completed;
    r.summary.train_runtime_s = 1.5;
    for (std::size_t i = 0; i < losses.size(); ++i) {
        accum::StepRecord s;
        s.step = static_cast<std::int64_t>(i + 1);
        s.loss = losses[i];
        r.steps.push_back(s);
    }
    r.summary.final_loss = losses.back();
    return r;
}

} // namespace

class TestLabTable : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rowsFromTheRuns();
    void columnsThatSayNothingAreHidden();
    void presentationKeepsThePoint();
};

void TestLabTable::rowsFromTheRuns() {
    studio::LabTable table;
    QCOMPARE(table.columnCount(), int(ColumnCount));
    QCOMPARE(table.objectName(), QStringLiteral("lab_table")); // what the window's tests find
    std::vector<studio::RunResult> runs = {run("B=32 × K=1", 32, 1, {0.9, 0.6, 0.5}),
                                           run("B=8 × K=4", 8, 4, {0.9, 0.625, 0.5})};
    table.fill(runs, false);
    QCOMPARE(table.rowCount(), 2);
    QCOMPARE(table.item(0, RunColumn)->text(), QStringLiteral("B=32 × K=1"));
    QCOMPARE(table.item(1, BatchColumn)->text(), QStringLiteral("8 × 4 = 32"));
    QCOMPARE(table.item(0, FinalLossColumn)->text(), QStringLiteral("0.5000"));
    QCOMPARE(table.item(0, DeltaColumn)->text(), QStringLiteral("—")); // the reference
    QCOMPARE(table.item(1, DeltaColumn)->text(), QStringLiteral("2.50e-02")); // |0.625 − 0.6| at step 2
    QCOMPARE(table.item(0, TimeColumn)->text(), QStringLiteral("1.50"));
    QVERIFY(table.item(0, RunColumn)->foreground().color() != table.item(1, RunColumn)->foreground().color());
    // Filled again with fewer runs: the rows follow.
    table.fill({runs[0]}, false);
    QCOMPARE(table.rowCount(), 1);
}

void TestLabTable::columnsThatSayNothingAreHidden() {
    studio::LabTable table;
    auto one = run("one process", 8, 4, {0.9, 0.7});
    table.fill({one}, false);
    QVERIFY(table.isColumnHidden(AccuracyColumn));   // no evaluation
    QVERIFY(table.isColumnHidden(AllReducesColumn)); // one process
    QVERIFY(table.isColumnHidden(TimePerUpdateColumn));
    QVERIFY(table.isColumnHidden(SkippedColumn)); // no loss scaling
    QVERIFY(!table.isColumnHidden(MemoryColumn));
    QVERIFY(!table.isColumnHidden(TimeColumn));

    one.evals.push_back(accum::EvalRecord{});
    auto two = one;
    two.config.nproc_per_node = 2;
    table.fill({one, two}, false);
    QVERIFY(!table.isColumnHidden(AccuracyColumn));
    QVERIFY(!table.isColumnHidden(AllReducesColumn));
    QVERIFY(!table.isColumnHidden(TimePerUpdateColumn));
    QCOMPARE(table.item(1, BatchColumn)->text(), QStringLiteral("8 × 4 × 2 = 64"));
}

void TestLabTable::presentationKeepsThePoint() {
    studio::LabTable table;
    auto one = run("one", 8, 4, {0.9, 0.7});
    one.evals.push_back(accum::EvalRecord{});
    table.fill({one}, true);
    QVERIFY(table.isColumnHidden(TimeColumn));
    QVERIFY(table.isColumnHidden(AccuracyColumn));
    QVERIFY(!table.isColumnHidden(MemoryColumn)); // one process: memory makes the point
    auto two = one;
    two.config.nproc_per_node = 2;
    table.fill({one, two}, true);
    QVERIFY(table.isColumnHidden(MemoryColumn)); // several processes: communication does
    QVERIFY(!table.isColumnHidden(TimePerUpdateColumn));
    table.fill({one}, false);
    QVERIFY(!table.isColumnHidden(TimeColumn)); // back at the desk
}

QTEST_MAIN(TestLabTable)
#include "test_lab_table.moc"
