#pragma once
// Every run of the session (live runs, lab runs, run directories opened from
// disk) and the runs saved in the studio's runs folder by earlier sessions, in
// a table; ticked runs are overlaid on a plot of loss, peak memory or
// throughput (samples seen on the x axis, so different micro-batch sizes line
// up). Runs of the folder are listed from their small files; their curves are
// read when they are first ticked.

#include <QDateTime>
#include <QTimer>
#include <QWidget>
#include <functional>
#include <vector>

#include "plot_look.h"
#include "retranslate.h"
#include "run_result.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QPushButton;
class QTableWidget;
class QTableWidgetItem;

namespace studio {

class RunsPanel : public QWidget {
    Q_OBJECT
public:
    // What the plot shows for each step of a ticked run.
    enum class Quantity { Loss, PeakMemory, Throughput };
    // The table's columns.
    enum Column { Name, Source, Date, Style, B, K, Effective, NoiseScale, Status, FinalLoss, Accuracy, PeakMemory,
                  SamplesPerSecond, Model, Data, Columns };

    explicit RunsPanel(QWidget* parent = nullptr);

    void add_run(const RunResult& run, bool ticked = false);
    bool open_directory(const QString& dir, QString* error = nullptr); // adds it ticked
    void set_ticked(int row, bool ticked);

    // The folder runs are saved in: its runs from earlier sessions are listed
    // (those of the folder listed before are not any more); "" lists none.
    void set_runs_folder(const QString& folder);
    // The same a moment later, the last folder asked for counting (one being typed).
    void follow_runs_folder(const QString& folder);
    const QString& runs_folder() const { return runs_folder_; }

    int run_count() const { return int(entries_.size()); }
    // The run of `row`; a run listed from the folder has its curves once ticked.
    const RunResult& run(int row) const { return entry(row).run; }
    bool is_earlier(int row) const { return entry(row).earlier; } // listed from the runs folder
    QString problem(int row) const { return entry(row).problem; } // why a listed run is damaged, or ""
    QDateTime started(int row) const { return entry(row).started; }
    QTableWidget* table() const { return table_; }
    QCustomPlot* plot() const { return plot_; }
    QComboBox* quantity_box() const { return quantity_; }
    QPushButton* delete_button() const { return delete_; }
    void set_quantity(Quantity quantity);
    // Points of the overlaid curve of `row` (0 when not ticked).
    int plotted_points(int row) const;
    // Presentation mode: the plot's text and lines `scale` times their desk size.
    void set_presentation_scale(double scale);
    // Every text again in the language installed now: on QEvent::LanguageChange.
    void retranslate();

    // Deletes the run directories of `rows` and takes them off the list; only a
    // directory holding accum_config.json or config.json is deleted. False, with `error` naming each
    // one that was not, when any was not.
    bool delete_runs(QList<int> rows, QString* error = nullptr);
    // The question asked before the Delete button deletes: true to go on. A
    // message box unless set (the tests answer it themselves).
    void set_confirm(std::function<bool(const QString& question)> confirm) { confirm_ = std::move(confirm); }

Q_SIGNALS:
    // The runs folder was listed (set_runs_folder, or follow_runs_folder's moment later).
    void runs_folder_listed();
    // The table's current row is `row` now (a click, the keyboard): the planner
    // takes its measured noise scale (noise_scale.h).
    void run_chosen(int row);

protected:
    void changeEvent(QEvent* event) override;

private:
    struct Entry {
        RunResult run;
        bool earlier = false;     // from the runs folder, written by an earlier session
        bool loaded = true;       // its curves are read (a listed run's, once ticked)
        bool config_read = true;  // its record (accum_config.json) was read: the style, B, K… are its own
        bool ticked = false;
        QString problem;
        QDateTime started;
    };
    const Entry& entry(int row) const { return entries_[static_cast<std::size_t>(row)]; }
    void fill_row(int row);
    void refill_table();
    void open_dialog();
    void delete_selected();
    void on_item_changed(QTableWidgetItem* item);
    void update_delete_button();
    void update_hint();
    void rebuild_plot();

    std::vector<Entry> entries_;
    std::vector<int> graph_of_row_;
    QString runs_folder_;
    QString pending_folder_;
    QTimer folder_timer_;
    QTableWidget* table_ = nullptr;
    QCustomPlot* plot_ = nullptr;
    QComboBox* quantity_ = nullptr;
    Retexts texts_;
    QLabel* hint_ = nullptr;
    QPushButton* open_ = nullptr;
    QPushButton* delete_ = nullptr;
    std::function<bool(const QString&)> confirm_;
    Quantity quantity_shown_ = Quantity::Loss;
    bool filling_ = false;
    PlotLook look_;
};

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
