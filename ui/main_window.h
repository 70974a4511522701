#pragma once
// The studio's window: configuration on the left, live loss and memory plots,
// status and per-epoch evaluation, the out-of-memory banner, the guided lesson's
// bar (Lab › Lesson) and presentation mode (View › Presentation, F11). Runs go through
// a RunController (engine on its own thread); what starts is the RunDirector's
// choice (run_director.h), the plots and the status row's numbers are the
// LiveView's (live_view.h) and the File menu's reading and writing is
// FileActions' (file_actions.h): each a class of its own, tested on a fake.

#include <QPointer>
#include <QFont>
#include <QMainWindow>
#include <QTimer>
#include <functional>
#include <optional>
#include <vector>

#include "accum/records.h"
#include "accum/run_config.h"
#include "engine_use.h"
#include "experiments.h"
#include "file_actions.h"
#include "lesson.h"
#include "live_view.h"
#include "record_batch.h"
#include "run_director.h"
#include "retranslate.h"
#include "run_result.h"

class QAction;
class QCloseEvent;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QScreen;
class QScrollArea;
class QSplitter;
class QTabWidget;
class QTableWidget;
class QTextStream;
class QToolBar;

namespace studio {

class CodePanel;
class ConfigPanel;
class LabPanel;
class LessonPanel;
class LossPlot;
class MemoryPlot;
class NoisePlot;
class OomBanner;
class RunController;
class RunsPanel;

class MainWindow : public QMainWindow, private RunSurface, private FileSurface {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    ConfigPanel* config_panel() const { return config_panel_; }
    LossPlot* loss_plot() const { return loss_plot_; }
    MemoryPlot* memory_plot() const { return memory_plot_; }
    // The live run's gradient noise scale: its plot beside the evaluation, its
    // readout below the status row (noise_plot.h).
    NoisePlot* noise_plot() const { return noise_plot_; }
    OomBanner* oom_banner() const { return oom_banner_; }
    QTableWidget* eval_table() const { return eval_table_; }
    QProgressBar* progress_bar() const { return progress_; }
    RunController* controller() const { return controller_; }
    QAction* run_action() const { return run_action_; }
    QAction* pause_action() const { return pause_action_; }
    QAction* stop_action() const { return stop_action_; }
    QAction* step_action() const { return step_action_; }
    CodePanel* code_panel() const { return code_panel_; }
    LabPanel* lab_panel() const { return lab_panel_; }
    RunsPanel* runs_panel() const { return runs_panel_; }
    QTabWidget* tabs() const { return tabs_; }
    LessonPanel* lesson_panel() const { return lesson_panel_; }
    QAction* presentation_action() const { return presentation_action_; }
    QScrollArea* config_area() const { return config_scroll_; }
    QLabel* config_summary() const { return config_summary_; }
    // Below the configuration, always in view: the form's problems, each a link to its field.
    QLabel* config_problems() const { return config_problems_; }
    QLabel* status_label() const { return status_label_; }
    // The run's thread count ("2 threads"), its tooltip the engine's reason:
    // the default for the model and the cores, --threads, or a change while
    // other programs took cores.
    QLabel* threads_label() const { return threads_label_; }
    QPlainTextEdit* log_view() const { return log_view_; }
    QAction* reset_defaults_action() const { return reset_defaults_action_; }
    QPushButton* undo_reset_button() const { return undo_reset_button_; }
    // While the lesson has the form: the configuration the user had before it,
    // which the saved settings keep and leaving the lesson brings back.
    const std::optional<accum::RunConfig>& user_config() const { return director_->user_config(); }
    // The last live run (configuration, step records, summary) once it has ended.
    const RunResult& last_live_run() const { return live_view_->run(); }

    // Sizes the window for `screen` (its available area): the saved geometry, moved
    // and shrunk into the screen, or a first size that fits it. The constructor
    // calls it with the primary screen.
    void fit_to_screen(QScreen* screen);
    bool presentation_mode() const { return presentation_; }

    bool save_config(const QString& path, QString* error = nullptr) const;
    bool load_config(const QString& path, QString* error = nullptr);
    bool export_csv(const QString& loss_path, const QString& memory_path) const;
    // code-panel, then the lab's experiments' ids (experiments.h): what run_demo takes.
    static QStringList demo_names();
    // What the engine is busy with now: the live run's and the lab's engine threads,
    // and whether the lesson's step is what runs. Every enabled action and every
    // refused start is derived from it (engine_use.h).
    EngineState engine_state() const override;

public Q_SLOTS:
    // Starts the live run with the configuration panel's configuration. While the
    // engine is busy, or with an invalid configuration, it starts nothing, says why
    // in the status bar and returns false.
    bool start_run();
    void toggle_pause();
    void stop_run();
    void step_once();
    // Demo entry points, one per name of demo_names(): the code panel's live run
    // and the lab's experiments. With `config` (--demo NAME: the defaults, or
    // --config FILE's) the demo runs on that configuration, leaves the form alone
    // and writes nothing to the saved settings; without, on the form's, as the Lab
    // menu does. Returns false for an unknown name.
    bool run_demo(const QString& name);
    bool run_demo(const QString& name, const accum::RunConfig& config);
    // Settings › Reset to defaults: the form gets the defaults; Undo (beside the
    // status line, and in the menu) brings back what it had.
    void reset_to_defaults();
    void undo_reset();
    // Runs a lab experiment on the configuration panel's configuration (the Lab
    // menu, the lab's buttons). Refused like start_run() while the engine is busy.
    bool run_experiment(Experiment experiment);
    // The guided lesson from step `index` (Lab › Lesson, accum-studio --lesson).
    void start_lesson(int index = 0);
    // A lesson file (File › Open lesson…, accum-studio --lesson-file): the lesson's
    // bar walks it from its first step. A bad file changes nothing and `error`
    // names its line and field (lesson.h).
    bool open_lesson(const QString& path, QString* error = nullptr);
    // Presentation mode: text and plot text enlarged (presentation_scale()), loss and
    // memory lines thicker, the configuration folded to a one-line summary, full
    // screen. Leaving it restores the font, the panels and the window's geometry.
    void set_presentation_mode(bool on);
    // Gives the room of the Live run tab to the plots, the memory plot or the code.
    void set_live_focus(LiveFocus focus);
    // Sets every text again in the language installed now (language.h); the window
    // does it on QEvent::LanguageChange, after its children.
    void retranslate();

Q_SIGNALS:
    void run_finished(const accum::SummaryRecord& summary);
    void experiment_finished(); // an equivalence-lab experiment ended

protected:
    void closeEvent(QCloseEvent* event) override;
    bool event(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void build_actions();
    void build_layout();
    void update_actions();
    // RunSurface: what the director drives.
    accum::RunConfig form_config() const override;
    void set_form_config(const accum::RunConfig& config) override;
    bool form_valid() const override;
    QString form_problems() const override;
    void start_live_run(const accum::RunConfig& config, const QString& label) override;
    void stop_live_run() override { stop_run(); }
    bool start_lab_experiment(Experiment experiment) override;
    void cancel_lab_experiment() override;
    void show_live_tab() override;
    void show_live(LiveFocus focus, bool build_up) override;
    void show_refusal(const QString& why) override;
    void store_settings() override;
    // FileSurface: what the file actions drive (form_config and set_form_config above).
    void start_lesson_file(std::shared_ptr<const Lesson> lesson) override;
    bool write_plot_image(bool loss, const QString& path) const override;
    void write_plot_csv(bool loss, QTextStream& out) const override;
    void show_warning(const QString& title, const QString& text) override;
    void show_message(const QString& text, int timeout_ms) override;
    // The status line's text (and tooltip), computed again when the language changes.
    void set_status(std::function<QString()> text, std::function<QString()> tooltip = {});
    void update_config_problems();
    // The field being typed in stays where it is on screen when the form's layout
    // changes above it (an estimate, an error row): the form scrolls by as much.
    void keep_focus_in_place();
    void on_finished(const accum::SummaryRecord& summary);
    void restore_settings();
    void build_language_menu();
    void build_help_menu(); // Help › Keyboard shortcuts…, listed from the window's actions
    void apply_presentation_scale(double scale);
    void update_config_summary();
    // The planner (the form's noise-scale line) takes `run`'s measured noise
    // scale, if it has one; `source` names it in the language of the moment.
    void take_noise_scale(const RunResult& run, std::function<QString()> source);

    Retexts texts_; // every fixed text the window sets, for a live change of language
    std::function<QString()> status_text_;
    std::function<QString()> status_tip_;
    ConfigPanel* config_panel_ = nullptr;
    LossPlot* loss_plot_ = nullptr;
    MemoryPlot* memory_plot_ = nullptr;
    NoisePlot* noise_plot_ = nullptr;
    OomBanner* oom_banner_ = nullptr;
    QTableWidget* eval_table_ = nullptr;
    QPlainTextEdit* log_view_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* status_label_ = nullptr;
    QLabel* threads_label_ = nullptr;
    QAction* run_action_ = nullptr;
    QAction* pause_action_ = nullptr;
    QAction* stop_action_ = nullptr;
    QAction* step_action_ = nullptr;
    std::vector<QAction*> experiment_actions_; // the Lab menu's, one per experiment
    CodePanel* code_panel_ = nullptr;
    LabPanel* lab_panel_ = nullptr;
    RunsPanel* runs_panel_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    LessonPanel* lesson_panel_ = nullptr;
    QScrollArea* config_scroll_ = nullptr;
    QLabel* config_summary_ = nullptr;
    QAction* config_summary_action_ = nullptr;
    QWidget* config_column_ = nullptr; // the scrolling form and its problems line
    QLabel* config_problems_ = nullptr;
    QAction* reset_defaults_action_ = nullptr;
    QAction* undo_reset_action_ = nullptr;
    QPushButton* undo_reset_button_ = nullptr;
    QTimer undo_reset_timer_;
    QPointer<QWidget> focus_anchor_;
    int focus_anchor_y_ = 0;
    QAction* show_config_action_ = nullptr;
    QAction* presentation_action_ = nullptr;
    QSplitter* plots_split_ = nullptr;
    QSplitter* live_split_ = nullptr;
    QToolBar* toolbar_ = nullptr;
    // What presentation mode changes, as it was at the desk.
    bool presentation_ = false;
    bool desk_font_set_ = false;
    QFont desk_font_;
    QByteArray desk_geometry_; // saved as the window's geometry while in presentation mode
    QRect desk_rect_;
    QByteArray desk_plots_state_;
    QByteArray desk_live_state_; // the plots and the code, across
    QSize desk_icon_size_;
    bool desk_maximized_ = false;
    QFont log_font_;
    RunController* controller_ = nullptr;
    RunDirector* director_ = nullptr;
    LiveView* live_view_ = nullptr;
    FileActions* file_actions_ = nullptr;
};

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
