#pragma once
// The guided lesson's bar above the studio's tabs: the step's title and its two
// or three sentences, Back / Run again / Next, and a line that says how the
// step's experiment ended (with its numbers). Entering a step sets the window's
// configuration to the step's and runs it (a live run or a lab experiment);
// moving on while it runs stops it first. The steps themselves are lesson.h.

#include <QFrame>
#include <vector>

#include "lesson.h"
#include "run_result.h"

class QLabel;
class QPushButton;

namespace studio {

class MainWindow;

class LessonPanel : public QFrame {
    Q_OBJECT
public:
    explicit LessonPanel(MainWindow* window);

    void start(int index = 0); // shows the bar and runs step `index`
    void go_to(int index);     // runs step `index` (after stopping the one that runs)
    void run_again();
    void close_lesson();       // stops the step's run and hides the bar

    int current() const { return index_; }
    int step_count() const { return int(lesson_steps().size()); }
    bool is_running() const { return waiting_ != Waiting::Nothing; }
    // The last finished step's verdict and runs.
    const LessonVerdict& verdict() const { return verdict_; }
    const std::vector<RunResult>& results() const { return results_; }

    QPushButton* back_button() const { return back_; }
    QPushButton* again_button() const { return again_; }
    QPushButton* next_button() const { return next_; }
    QLabel* title_label() const { return title_; }
    QLabel* text_label() const { return text_; }
    QLabel* verdict_label() const { return verdict_label_; }

Q_SIGNALS:
    void step_started(int index);
    void step_finished(int index, bool as_expected);

protected:
    void changeEvent(QEvent* event) override;

private:
    enum class Waiting { Nothing, Live, Experiment };

    void show_step();
    void run_step();
    void on_live_finished();
    void on_experiment_finished();
    void finish(const std::vector<RunResult>& runs);
    void stop_current();
    void update_buttons();
    void fit_fonts();
    void set_verdict_colour(const QColor& colour);

    MainWindow* window_ = nullptr;
    int index_ = -1;
    int pending_ = -1; // the step to run once the stopped one has ended
    bool closing_ = false;
    Waiting waiting_ = Waiting::Nothing;
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
