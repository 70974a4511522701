#pragma once
// Live memory from the engine's MemoryRecords, as stacked areas by category
// (parameters, gradients, optimizer state, activations) at the peak since the
// previous record (interval_peak_bytes and its parts: records come between
// micro-batches, when the activations are freed, so the stack's top is the
// peak, not the quiet moment; the moment's figures are in the hover text),
// the run's peak (and the CUDA caching allocator's reserve) as lines,
// the budget as a line, the out-of-memory point, and faint ticks at the
// optimizer steps (the sync micro-batches). A caption under it says which band
// accumulation shrinks; hovering shows a moment's figures. Labelled "CPU tensor
// memory" or "GPU memory". In a run of several processes the bands are rank
// 0's, and each other rank's current memory is a line of its own ("rank 1", …).

#include <QFont>
#include <QWidget>
#include <map>
#include <vector>

#include "plot_look.h"
#include "retranslate.h"
#include "record_batch.h"

class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCPTextElement;
class QLabel;
class QMouseEvent;
class QTextStream;

namespace studio {

class MemoryPlot : public QWidget {
    Q_OBJECT
public:
    explicit MemoryPlot(QWidget* parent = nullptr);

    void clear();
    // The device the run asked for ("auto", "cpu", "cuda:1"): on CUDA the title
    // names it with its memory, e.g. "GPU memory: NVIDIA H200, 139 GiB".
    void set_device(const QString& device);
    QString title_text() const;
    void append(const RecordBatch& batch);
    // Marks the end of the run as out of memory (at the last record's time).
    void mark_out_of_memory(std::int64_t peak_bytes);
    void refresh();

    int point_count() const;
    // Ranks besides rank 0 that have a line (data parallel).
    int other_rank_count() const { return static_cast<int>(rank_graphs_.size()); }
    // The five bands at the last record (bytes): parameters, gradients,
    // optimizer state, activations, the optimizer step above them (the parts
    // of its interval peak).
    std::vector<std::int64_t> band_bytes() const;
    // The last record's frozen weights (a part of the parameters band), 0 without.
    std::int64_t frozen_bytes() const { return frozen_bytes_; }
    // What is drawn at record `index` (rank 0's, in order), in MiB: the top of
    // the stacked bands and the peak line; -1 when there is no such record.
    double stacked_top_mib(int index) const;
    double peak_line_mib(int index) const;
    int sync_tick_count() const;
    // What hovering at time `t` (seconds) shows: the nearest record's figures.
    QString hover_text(double t) const;
    QLabel* caption() const { return caption_; }
    bool has_oom_marker() const;
    // Whether the out-of-memory mark is drawn whole, at the right end of the time
    // axis (the run ended there) and clear of the legend. Lays the plot out first.
    bool oom_marker_in_clear_view();
    bool is_cuda() const { return cuda_; }
    QCustomPlot* plot() const { return plot_; }
    bool save_image(const QString& path) const;
    // Presentation mode: text, lines and markers `scale` times their desk size (1 = desk).
    // The caption under the plot too, at least 1/40 of the screen's height when scaled.
    void set_presentation_scale(double scale);
    void write_csv(QTextStream& out) const;

protected:
    void changeEvent(QEvent* event) override; // a language switched live: every text again

private:
    QString device_title() const; // CPU, or GPU with its name
    Retexts texts_;
    void rebuild();
    void show_hover(QMouseEvent* event);

    QCustomPlot* plot_ = nullptr;
    QCPTextElement* title_ = nullptr;
    QString cuda_device_;               // "NVIDIA H200, 139 GiB" for the title; "" until known
    QCPGraph* current_graph_ = nullptr; // the stack's top edge
    std::vector<QCPGraph*> bands_;      // parameters, +gradients, +optimizer state, +activations (cumulative)
    QCPGraph* frozen_graph_ = nullptr;  // the frozen weights, hatched over the parameters band
    std::int64_t frozen_bytes_ = 0;
    QCPGraph* sync_graph_ = nullptr;    // faint ticks at optimizer steps
    QLabel* caption_ = nullptr;
    QFont caption_font_; // at the desk
    QCPGraph* peak_graph_ = nullptr;
    QCPGraph* reserved_graph_ = nullptr;
    QCPGraph* oom_graph_ = nullptr;
    QCPGraph* budget_graph_ = nullptr; // legend entry for the budget line
    QCPItemStraightLine* budget_line_ = nullptr;
    QCPItemText* oom_label_ = nullptr;
    std::vector<accum::MemoryRecord> records_; // rank 0's
    std::map<int, std::vector<accum::MemoryRecord>> other_ranks_;
    std::map<int, QCPGraph*> rank_graphs_;
    std::vector<double> sync_times_;
    bool cuda_ = false;
    bool oom_ = false;
    std::int64_t oom_peak_ = 0;
    PlotLook look_;
    bool dirty_ = false;       // the curves need rebuilding (memory records, a marker, a reset)
    bool ticks_dirty_ = false; // only the optimizer-step ticks changed
    bool auto_range_ = true;
};

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
