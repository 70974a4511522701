// The live memory plot's bands: drawn at the parts of the
// peak since the previous memory record, so the stacked bands reach the peak
// line, while hovering still gives the figures of the moment. Without a window:
// the plot alone, fed records as the studio feeds it.
#include <QtTest/QtTest>

#include <QFile>
#include <QFontInfo>
#include <QLabel>
#include <QScreen>
#include <cmath>

#include "accum/session.h"
#include "accum/sink.h"
#include "memory_plot.h"
#include "record_batch.h"

using studio::MemoryPlot;
using studio::RecordBatch;

namespace {

constexpr double mib = 1024.0 * 1024.0;

// A record of the moment (now) and of the peak since the previous one; the
// figures are made up, in MiB, to be read easily.
accum::MemoryRecord record(double t, double now_total, double now_activations, double run_peak,
                           std::array<double, 4> peak_parts, double optimizer_step = 0) {
    accum::MemoryRecord r;
    r.elapsed_s = t;
    r.memory_bytes = std::int64_t(now_total * mib);
    r.peak_memory_bytes = std::int64_t(run_peak * mib);
    r.parameters_bytes = std::int64_t(1 * mib);
    r.gradients_bytes = std::int64_t(1 * mib);
    r.optimizer_state_bytes = std::int64_t((now_total - now_activations - 2) * mib);
    r.activations_bytes = std::int64_t(now_activations * mib);
    r.peak_parameters_bytes = std::int64_t(peak_parts[0] * mib);
    r.peak_gradients_bytes = std::int64_t(peak_parts[1] * mib);
    r.peak_optimizer_state_bytes = std::int64_t(peak_parts[2] * mib);
    r.peak_activations_bytes = std::int64_t(peak_parts[3] * mib);
    r.peak_optimizer_step_bytes = std::int64_t(optimizer_step * mib);
    r.interval_peak_bytes = r.peak_parameters_bytes + r.peak_gradients_bytes + r.peak_optimizer_state_bytes +
                            r.peak_activations_bytes + r.peak_optimizer_step_bytes;
    return r;
}

struct Keep : accum::Sink {
    RecordBatch batch;
    accum::SummaryRecord summary;
    void on_step(const accum::StepRecord& r) override { batch.steps.push_back(r); }
    void on_memory(const accum::MemoryRecord& r) override { batch.memory.push_back(r); }
    void on_summary(const accum::SummaryRecord& s) override { summary = s; }
};

} // namespace

class TestMemoryPlot : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Made-up records: at each the stack's top is the interval peak, the bands
    // its parts, the peak line the run's peak; the moment's figures are in the
    // hover text. A record without an interval peak (a metrics file written
    // before it existed) is drawn at its moment.
    void bandsStandAtTheIntervalPeak() {
        MemoryPlot plot;
        plot.resize(900, 300);
        RecordBatch batch;
        batch.memory.push_back(record(0.0, 3, 0, 3, {1, 0, 0, 0}));
        batch.memory.back().interval_peak_bytes = 0;                    // an old record: drawn at its moment (3 MiB)
        batch.memory.push_back(record(0.3, 4.5, 0.5, 20, {1, 1, 1, 17})); // activations freed now, 17 MiB at the peak
        batch.memory.push_back(record(0.6, 4.5, 0.5, 20, {1, 1, 1, 12}));
        // A small micro-batch: the optimizer step needed 6 MiB above 4 of activations.
        batch.memory.push_back(record(0.9, 4.5, 0.5, 20, {1, 1, 1, 4}, 6));
        plot.append(batch);
        plot.refresh();
        QCOMPARE(plot.point_count(), 4);
        QCOMPARE(plot.stacked_top_mib(0), 3.0);  // the moment's total
        QCOMPARE(plot.stacked_top_mib(1), 20.0); // the interval peak: 1 + 1 + 1 + 17
        QCOMPARE(plot.peak_line_mib(1), 20.0);   // reaches the run's peak line
        QCOMPARE(plot.stacked_top_mib(2), 15.0);
        QCOMPARE(plot.peak_line_mib(2), 20.0);
        QCOMPARE(plot.stacked_top_mib(3), 13.0); // five parts: 1 + 1 + 1 + 4 + 6
        QCOMPARE(plot.stacked_top_mib(4), -1.0); // no such record
        const auto bands = plot.band_bytes();    // the last record's peak parts
        QCOMPARE(int(bands.size()), 5);
        QCOMPARE(bands[3], std::int64_t(4 * mib));
        QCOMPARE(bands[4], std::int64_t(6 * mib));
        const QString step = plot.hover_text(0.9);
        QVERIFY2(step.contains(QStringLiteral("optimizer step (above the activations) 6.0 MiB")), qPrintable(step));
        const QString hover = plot.hover_text(0.3);
        QVERIFY2(hover.contains(QStringLiteral("peak since the previous record: 20.0 MiB")), qPrintable(hover));
        QVERIFY2(hover.contains(QStringLiteral("activations 17.0 MiB")), qPrintable(hover));
        QVERIFY2(hover.contains(QStringLiteral("now: 4.5 MiB (activations 512.0 KiB")) ||
                     hover.contains(QStringLiteral("now: 4.5 MiB (activations 0.5 MiB")),
                 qPrintable(hover));
        const QString old = plot.hover_text(0.0);
        QVERIFY2(old.contains(QStringLiteral("total 3.0 MiB")) && !old.contains(QStringLiteral("peak since")),
                 qPrintable(old));
        QCOMPARE(plot.frozen_bytes(), std::int64_t(0));
        QVERIFY2(!old.contains(QStringLiteral("frozen")), qPrintable(old));
    }

    // A LoRA run's records: the frozen weights, a part of the parameters band,
    // are named on hover and counted apart; the bands still add up as before.
    void frozenWeightsShownApart() {
        MemoryPlot plot;
        plot.resize(900, 300);
        RecordBatch batch;
        for (double t : {0.3, 0.6}) {
            batch.memory.push_back(record(t, 4.5, 0.5, 20, {1, 1, 1, 17}));
            batch.memory.back().frozen_parameters_bytes = std::int64_t(0.75 * mib);
        }
        plot.append(batch);
        plot.refresh();
        QCOMPARE(plot.frozen_bytes(), std::int64_t(0.75 * mib));
        QCOMPARE(plot.stacked_top_mib(1), 20.0);
        const QString hover = plot.hover_text(0.6);
        QVERIFY2(hover.contains(QStringLiteral("of them frozen weights 768.0 KiB")) ||
                     hover.contains(QStringLiteral("of them frozen weights 0.8 MiB")),
                 qPrintable(hover));
    }

    // Presentation mode: the caption ("Accumulation shrinks only the activations
    // band.") at least 1/40 of the screen's height, as the plot's text; back at the desk size after.
    void captionReadableInPresentation() {
        MemoryPlot plot;
        plot.resize(900, 300);
        const int desk = QFontInfo(plot.caption()->font()).pixelSize();
        plot.set_presentation_scale(1.6);
        const int least = plot.caption()->screen()->geometry().height() / 40;
        QVERIFY2(QFontInfo(plot.caption()->font()).pixelSize() >= least,
                 qPrintable(QStringLiteral("%1 px, least %2").arg(QFontInfo(plot.caption()->font()).pixelSize()).arg(least)));
        plot.set_presentation_scale(1.0);
        QCOMPARE(QFontInfo(plot.caption()->font()).pixelSize(), desk);
    }

    // A real run (the CNN, 64 × 2, 2 updates, a teaching pace of 0.26 s so that a
    // record comes before every micro-batch): at every record the stack's top is
    // the record's interval peak; where the run's peak was reached it meets the
    // peak line; and every record after the start stands near the peak (the
    // momentum buffers made by the first update, 1.7 MiB, are what the first
    // window's records lack), not at the quiet moment between micro-batches.
    void bandsReachThePeakLineInARun() {
        if (!QFile::exists(QStringLiteral("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")))
            QSKIP("dataset-fashion-mnist is not installed");
        accum::RunConfig c;
        c.model = accum::ModelKind::Cnn;
        c.dataset = accum::DatasetKind::FashionMnist;
        c.batch_size = 64;
        c.accumulation_steps = 2;
        c.epochs = 0;
        c.max_steps = 2;
        c.threads = 1;
        c.eval_strategy = accum::Strategy::No;
        c.save_strategy = accum::Strategy::No;
        c.micro_step_delay_s = 0.26;
        Keep keep;
        accum::Session session;
        session.run(c, keep);
        QVERIFY2(keep.summary.status == accum::RunStatus::Completed, keep.summary.message.c_str());
        const auto& records = keep.batch.memory;
        QVERIFY2(records.size() >= 4, qPrintable(QString::number(records.size())));
        MemoryPlot plot;
        plot.resize(900, 300);
        plot.append(keep.batch);
        plot.refresh();
        int meets = 0;
        for (int i = 0; i < int(records.size()); ++i) {
            const auto& r = records[std::size_t(i)];
            const double top = plot.stacked_top_mib(i), line = plot.peak_line_mib(i);
            qInfo("record %d at %.2f s: stack top %.3f MiB, peak line %.3f MiB, now %.3f MiB", i, r.elapsed_s, top, line,
                  r.memory_bytes / mib);
            QCOMPARE(top, r.interval_peak_bytes / mib);
            QVERIFY(top <= line);
            if (top == line) ++meets;
            if (i > 0) QVERIFY2(top >= 0.8 * line, qPrintable(QStringLiteral("record %1: %2 of %3").arg(i).arg(top).arg(line)));
        }
        QVERIFY2(meets >= 1, "the stacked bands never reach the peak line");
    }
};

QTEST_MAIN(TestMemoryPlot)
#include "test_memory_plot.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
