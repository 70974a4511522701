#pragma once
// Every run of the session (live runs, lab runs, run directories opened from
// disk) in a table; ticked runs are overlaid on a loss plot (samples seen on
// the x axis, so different micro-batch sizes line up).

#include <QWidget>
#include <vector>

#include "plot_look.h"
#include "run_result.h"

class QCustomPlot;
class QPushButton;
class QTableWidget;
class QTableWidgetItem;

namespace studio {

class RunsPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunsPanel(QWidget* parent = nullptr);

    void add_run(const RunResult& run, bool ticked = false);
    bool open_directory(const QString& dir, QString* error = nullptr); // adds it ticked
    void set_ticked(int row, bool ticked);

    int run_count() const { return int(runs_.size()); }
    const RunResult& run(int row) const { return runs_[static_cast<std::size_t>(row)]; }
    QTableWidget* table() const { return table_; }
    QCustomPlot* plot() const { return plot_; }
    // Points of the overlaid curve of `row` (0 when not ticked).
    int plotted_points(int row) const;
    // Presentation mode: the plot's text and lines `scale` times their desk size.
    void set_presentation_scale(double scale);

private:
    void open_dialog();
    void on_item_changed(QTableWidgetItem* item);
    void rebuild_plot();

    std::vector<RunResult> runs_;
    std::vector<int> graph_of_row_;
    QTableWidget* table_ = nullptr;
    QCustomPlot* plot_ = nullptr;
    QPushButton* open_ = nullptr;
    bool filling_ = false;
    PlotLook look_;
};

} // namespace studio
