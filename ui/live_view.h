// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The live run's views: the loss, memory and noise plots, the evaluation table,
// the run log and the status row's numbers (progress, step, epoch, speed,
// threads, ETA), fed from the run's records. Records are kept as they come;
// a timer draws them, at most 10 times a second and less when drawing would
// take more than its share of a core (refresh_budget.h), never per record. The
// window builds the widgets and lays them out; this class only fills them, so
// it is tested on records made up in the test, with no engine
// (tests/ui/test_live_view.cpp).

#include <QElapsedTimer>
#include <QObject>
#include <QStringList>
#include <QTimer>

#include "accum/records.h"
#include "accum/run_config.h"
#include "record_batch.h"
#include "refresh_budget.h"
#include "run_result.h"

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QTableWidget;

namespace studio {

class CodePanel;
class LossPlot;
class MemoryPlot;
class NoisePlot;

// The widgets the live view fills; the window owns them.
struct LiveWidgets {
    LossPlot* loss = nullptr;
    MemoryPlot* memory = nullptr;
    NoisePlot* noise = nullptr;
    QTableWidget* evals = nullptr; // five columns: epoch, step, loss, accuracy, F1
    QPlainTextEdit* log = nullptr;
    QProgressBar* progress = nullptr; // range 0–1000
    QLabel* step = nullptr;
    QLabel* epoch = nullptr;
    QLabel* speed = nullptr;
    QLabel* threads = nullptr;
    QLabel* eta = nullptr;
    CodePanel* code = nullptr; // set for each run, fed and drawn with the plots; may be null
};

class LiveView : public QObject {
    Q_OBJECT
public:
    explicit LiveView(const LiveWidgets& widgets, QObject* parent = nullptr);

    // A new run on `config`, shown as `label`: every view cleared, the plots told
    // its micro-batch, loss scaling and device, the refresh timer started.
    void start(const accum::RunConfig& config, const QString& label);
    // The engine's records: kept in run() and handed to the views, drawn at the next tick.
    void append(const RecordBatch& batch);
    // The run ended: the timer stops and the last records are drawn, with the run's
    // time and speed. A start the engine refused as busy draws nothing more.
    void finish(const accum::SummaryRecord& summary);
    // Draws what came since the last time: the plots every time, the status row at
    // most 4 times a second unless `final` (its text layout is a good part of a
    // tick's cost, and nobody reads numbers changing faster).
    void refresh(bool final);
    void stop_refresh() { timer_.stop(); }
    bool refreshing() const { return timer_.isActive(); }
    int refresh_interval_ms() const { return timer_.interval(); }
    // The status row's labels, each as wide as its widest text (measured again
    // when presentation mode changes the font).
    void fit_labels();
    // Every number again in the language installed now.
    void retranslate();

    // The run shown (configuration, records, summary once it ended).
    const RunResult& run() const { return run_; }
    const accum::SummaryRecord& last_summary() const { return run_.summary; }
    // From start() (which names the run's source) to finish().
    bool running() const { return !run_.source.isEmpty() && !run_.has_summary; }

    // The status row's texts: "4 threads", "1:05" or "1:02:03" ("–" when unknown).
    static QString threads_text(int count);
    static QString format_duration(double seconds);

Q_SIGNALS:
    // The engine changed the run's thread count mid-run: its log line says why.
    void threads_changed(const QString& log_line);

private:
    void on_tick();
    void show_threads(const QString& log_line);
    void show_run_times(const accum::SummaryRecord& summary);

    LiveWidgets w_;
    RunResult run_;
    QStringList pending_logs_;
    int threads_count_ = 0; // the run's thread count, once the engine said it
    bool log_follow_ = true; // the run log follows new lines while the user is at its end
    QTimer timer_;
    QElapsedTimer status_clock_;
    RefreshBudget budget_;
};

} // namespace studio
