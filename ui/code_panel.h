#pragma once
// The selected style's loop beside the run, in three tabs: the chapter's
// (chapter_listing.h: about ten lines, what a class reads, the default), the
// Python script it mirrors (that runs) and the C++ the engine runs. At teaching pace the lines each
// micro-batch executes light up one after another (forward, loss / K,
// backward; then step, scheduler, zero_grad when the window syncs); the
// accumulation meter shows the window filling. "Step one micro-batch" lets a
// paused run advance by exactly one micro-batch. With several processes the
// no_sync line lights on the micro-batches that keep their gradients local,
// the backward's all-reduce on the one that averages them, and a counter says
// how many all-reduces the current update has made. The build-up reveals the
// chapter's loop a line at a time (Next line / Previous line), each new line
// with its sentence of why.

#include <QTimer>
#include <QWidget>
#include <deque>
#include <functional>
#include <vector>

#include "accum/run_config.h"
#include "chapter_listing.h"
#include "code_listing.h"
#include "record_batch.h"
#include "retranslate.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;

namespace studio {

class AccumulationMeter;

class CodePanel : public QWidget {
    Q_OBJECT
public:
    explicit CodePanel(QWidget* parent = nullptr);

    void set_style(const QString& mode); // pytorch | accelerator | trainer
    // The configuration the chapter's loop is written for: its style, K, and the
    // lines it adds (no_sync, autocast and the scaler, clipping).
    void set_configuration(const accum::RunConfig& config);
    // The run's model when it comes from a TorchScript file (empty for a built-in
    // one): a line above the listing says where `model` comes from.
    void set_model_file(const QString& file);
    // Every text again in the language installed now, the Chapter view's notes
    // included: on QEvent::LanguageChange.
    void retranslate();
    // Between runs: the meter shows the form's K (0 / K), not the window of a run
    // with another K (nor 0 / 1 before the first run).
    void preview_accumulation_steps(int accumulation_steps);
    QString style() const { return style_; }
    // pace_ms = 0: full speed (the last micro-batch's lines, no animation).
    // world_size: the run's processes (data parallel when above 1).
    void start_run(int accumulation_steps, int pace_ms, int world_size = 1);
    void append(const RecordBatch& batch);
    // At full speed the panel shows the latest micro-batch; the window's refresh
    // timer calls this to draw it (not every record batch: drawing costs the engine).
    void refresh();
    void set_paused(bool paused, bool running);
    // Presentation mode: the listings and the title `scale` times their desk size;
    // above 1 the title and the step button fold away (the toolbar has the step).
    void set_presentation_scale(double scale);

    // The roles lit in the C++ and Python listings right now (current first).
    std::vector<LineRole> lit_roles() const { return lit_; }
    QList<int> highlighted_lines(const QString& language) const; // "chapter", "cpp" or "py"
    QPlainTextEdit* editor(const QString& language) const;
    const ChapterListing& chapter() const { return chapter_; }
    // Each role lit at teaching pace, with the micro-batch it was lit for, since
    // the run started (the test compares it with the engine's records).
    struct LitRole {
        accum::MicroStepRecord record;
        LineRole role;
    };
    const std::vector<LitRole>& lit_history() const { return lit_history_; }

    // The build-up: the chapter's loop revealed a step (a line and its
    // continuation) at a time. start_build_up() shows the first step and the
    // Chapter tab; end_build_up() the whole loop again.
    void start_build_up();
    void end_build_up();
    void next_line();
    void previous_line();
    bool building_up() const { return build_step_ >= 0; }
    int build_up_step() const { return build_step_; }
    int shown_chapter_lines() const; // lines of the chapter on screen
    QLabel* why_label() const { return why_; }
    QPushButton* next_line_button() const { return next_line_; }
    QPushButton* previous_line_button() const { return previous_line_; }
    QPushButton* build_up_button() const { return build_up_; }
    AccumulationMeter* meter() const { return meter_; }
    QPushButton* step_button() const { return step_button_; }
    // "All-reduces this update: n" (shown in a run of several processes).
    QLabel* allreduce_counter() const { return allreduces_; }
    QTabWidget* tabs() const { return tabs_; }

Q_SIGNALS:
    void step_once_requested();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    // The caption under the code, computed again when the language changes.
    void set_caption(std::function<QString()> text);
    void rebuild_chapter();
    void show_chapter_text();
    void fit_chapter_font();
    void update_build_up();
    void show_phase();
    void next_phase();
    void apply_highlight();
    void show_allreduces(std::int64_t count);

    QString style_;
    QFont code_font_; // the listings' desk font
    QLabel* title_ = nullptr;
    Retexts texts_;
    std::function<QString()> caption_text_;
    QString model_file_;
    QLabel* model_line_ = nullptr; // model = torch.jit.load(…), for a model from a file
    QLabel* caption_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    QPlainTextEdit* cpp_ = nullptr;
    QPlainTextEdit* py_ = nullptr;
    QPlainTextEdit* chapter_edit_ = nullptr;
    ChapterOptions options_;
    ChapterListing chapter_;
    CodeListing chapter_listing_;
    int build_step_ = -1; // -1: the whole loop
    double scale_ = 1.0;
    QLabel* why_ = nullptr;
    QPushButton* build_up_ = nullptr;
    QPushButton* previous_line_ = nullptr;
    QPushButton* next_line_ = nullptr;
    std::vector<LitRole> lit_history_;
    CodeListing cpp_listing_;
    CodeListing py_listing_;
    AccumulationMeter* meter_ = nullptr;
    QPushButton* step_button_ = nullptr;
    QLabel* allreduces_ = nullptr;
    QTimer phase_timer_;
    int pace_ms_ = 0;
    int world_size_ = 1;
    std::int64_t allreduces_this_update_ = 0;
    std::int64_t allreduces_step_ = -1; // the update (optimizer steps before it) they count
    std::deque<accum::MicroStepRecord> queue_;
    accum::MicroStepRecord current_;
    std::vector<LineRole> current_roles_;
    int phase_ = -1;
    std::vector<LineRole> lit_; // current role first, then those done in this micro-batch
    bool full_speed_dirty_ = false;
};

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
