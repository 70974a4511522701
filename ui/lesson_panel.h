#pragma once
// The guided lesson's bar above the studio's tabs: the step's title and its two
// or three sentences, Back / Run again / Next, and a line that says how the
// step's experiment ended (with its numbers). Entering a step asks for its run
// (a live run or a lab experiment, with the step's configuration); moving on
// while it runs asks to stop it first. The bar knows nothing of the window: it
// asks through its signals, and the window, which decides whether the engine
// may run (engine_use.h), answers through its slots. The steps themselves are
// lesson.h.

#include <QFrame>
#include <memory>
#include <vector>

#include "accum/run_config.h"
#include "experiments.h"
#include "lesson.h"
#include "run_result.h"

class QLabel;
class QPushButton;

namespace studio {

class LessonPanel : public QFrame {
    Q_OBJECT
public:
    explicit LessonPanel(QWidget* parent = nullptr);

    void start(int index = 0); // shows the bar and runs step `index`
    void go_to(int index);     // runs step `index` (after stopping the one that runs)
    void run_again();
    void close_lesson();       // stops the step's run and hides the bar

    int current() const { return index_; }
    int step_count() const { return int(lesson_->steps.size()); }
    // The lesson the bar walks: the built-in one until another is set (which
    // stops the step that runs and hides the bar; start() walks the new one).
    const Lesson& lesson() const { return *lesson_; }
    void set_lesson(std::shared_ptr<const Lesson> lesson);
    // The memory lever of the step that runs (MemoryLever::Planner when none does).
    MemoryLever running_lever() const;
    // The step's run started and has not ended.
    bool is_running() const { return waiting_ != Waiting::Nothing; }
    // While the step asks the window for its experiment: the shapes it names
    // (lesson.h), which the lab plans with; else none.
    std::vector<std::pair<std::int64_t, std::int64_t>> requested_shapes() const;
    // The last finished step's verdict and runs.
    const LessonVerdict& verdict() const { return verdict_; }
    const std::vector<RunResult>& results() const { return results_; }

    QPushButton* back_button() const { return back_; }
    QPushButton* again_button() const { return again_; }
    QPushButton* next_button() const { return next_; }
    QLabel* title_label() const { return title_; }
    QLabel* text_label() const { return text_; }
    QLabel* verdict_label() const { return verdict_label_; }
    // Every text again in the language installed now, the current step's included:
    // on QEvent::LanguageChange.
    void retranslate();

public Q_SLOTS:
    // The answers to a request, given before the request returns: the step's run
    // started, or it did not (`why`: the end of "The step could not start: …").
    void on_run_started();
    void on_run_refused(const QString& why);
    // The runs that ended: the live run, or the lab's experiment. The step that
    // waits for that kind takes them; otherwise they were not the lesson's.
    void on_live_run_finished(const studio::RunResult& run);
    void on_experiment_finished(const std::vector<studio::RunResult>& runs);

Q_SIGNALS:
    // Set the configuration to `config` and start a live run, the room of the Live
    // run tab given to `focus`.
    void live_run_requested(const accum::RunConfig& config, studio::LiveFocus focus);
    // Set the configuration to `config` and run the lab's `experiment` on it.
    void experiment_requested(const accum::RunConfig& config, studio::Experiment experiment);
    // Stop the step's run (it ends through on_live_run_finished or on_experiment_finished).
    void stop_requested();
    // The step ended: its check's verdict, or false when its run could not start.
    void step_finished(int index, bool as_expected);
    // The teacher closed the lesson: the window gives the form back its configuration.
    void closed();

protected:
    void changeEvent(QEvent* event) override;

private:
    enum class Waiting { Nothing, Live, Experiment };

    void show_step();
    void run_step();
    void finish(const std::vector<RunResult>& runs);
    void show_verdict(const std::vector<RunResult>& runs); // the step's check, judged and shown
    void stop_current();
    void update_buttons();
    void fit_fonts();
    void set_verdict_colour(const QColor& colour);

    std::shared_ptr<const Lesson> lesson_ = builtin_lesson_shared();
    int index_ = -1;
    int pending_ = -1; // the step to run once the stopped one has ended
    bool closing_ = false;
    Waiting waiting_ = Waiting::Nothing;   // the step's run, once the window started it
    Waiting requested_ = Waiting::Nothing; // while a request waits for its answer
    LessonVerdict verdict_;
    std::vector<RunResult> results_;
    QLabel* counter_ = nullptr;
    QLabel* title_ = nullptr;
    QLabel* text_ = nullptr;
    QLabel* verdict_label_ = nullptr;
    QPushButton* back_ = nullptr;
    QPushButton* again_ = nullptr;
    QPushButton* next_ = nullptr;
    QPushButton* close_ = nullptr;
};

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
