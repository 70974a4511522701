// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Who holds the engine and what starts: the studio's run orchestration. The live
// run (Run, the demos, the out-of-memory banner's suggestion), the lab's
// experiments and the lesson's steps all start here, refused in words while the
// engine is busy (engine_use.h) or the form is invalid; the lesson borrows the
// form and gives it back; Reset to defaults keeps what Undo brings back. It
// drives the window through RunSurface, so it is tested with a fake surface and
// no widget (tests/ui/test_run_director.cpp); the window's layout, plots and
// status texts stay in main_window*.cpp.

#include <QObject>
#include <QString>
#include <QStringList>
#include <optional>

#include "accum/run_config.h"
#include "engine_use.h"
#include "experiments.h"
#include "lesson.h"

namespace studio {

// What the director drives: the window gives it its panels, a test a fake.
class RunSurface {
public:
    virtual ~RunSurface() = default;
    virtual EngineState engine_state() const = 0;
    // The configuration form.
    virtual accum::RunConfig form_config() const = 0;
    virtual void set_form_config(const accum::RunConfig& config) = 0;
    virtual bool form_valid() const = 0;
    virtual QString form_problems() const = 0; // one line
    // The live run: the views are cleared and the run starts with `config`, shown as `label`.
    virtual void start_live_run(const accum::RunConfig& config, const QString& label) = 0;
    virtual void stop_live_run() = 0;
    // The lab: its tab is shown and `experiment` starts on the lab's base
    // configuration (RunDirector::lab_base_config()); true when it runs.
    virtual bool start_lab_experiment(Experiment experiment) = 0;
    virtual void cancel_lab_experiment() = 0;
    // The Live run tab in front, as it is arranged; or with its room given to
    // `focus`, and (`build_up`) the code panel building the loop up a line at a
    // time while the run goes.
    virtual void show_live_tab() = 0;
    virtual void show_live(LiveFocus focus, bool build_up) = 0;
    virtual void show_refusal(const QString& why) = 0;
    // The user's own configuration goes into the saved settings.
    virtual void store_settings() = 0;
};

class RunDirector : public QObject {
    Q_OBJECT
public:
    explicit RunDirector(RunSurface& surface, QObject* parent = nullptr);

    // The live run on the form's configuration. Refused (false, the reason shown)
    // while the engine is busy or the form is invalid.
    bool start_run();
    // "code-panel", then the lab's experiments' ids: what run_demo takes.
    static QStringList demo_names();
    // On the form's configuration (the Lab menu); false for an unknown name.
    bool run_demo(const QString& name);
    // On `config` (--demo NAME), leaving the form and the saved settings alone.
    bool run_demo(const QString& name, const accum::RunConfig& config);
    // A lab experiment on the form's configuration; refused like start_run().
    bool run_experiment(Experiment experiment);
    // The configuration the lab's experiment starts from: a demo's, else the form's.
    accum::RunConfig lab_base_config() const;

    // The lesson's requests. Each answers through lesson_run_started or
    // lesson_run_refused.
    void run_lesson_live(const accum::RunConfig& config, LiveFocus focus);
    void run_lesson_experiment(const accum::RunConfig& config, Experiment experiment);
    void stop_lesson_run();
    // The lesson ended: the form gets back what the user had before it.
    void leave_lesson();
    // While the lesson has the form: the user's configuration, which the saved
    // settings keep and leaving the lesson brings back.
    const std::optional<accum::RunConfig>& user_config() const { return user_config_; }

    // Settings › Reset to defaults and its Undo; false when nothing changed.
    bool reset_to_defaults();
    bool undo_reset();
    bool can_undo_reset() const { return config_before_reset_.has_value(); }
    void forget_undo() { config_before_reset_.reset(); }

Q_SIGNALS:
    void lesson_run_started();
    void lesson_run_refused(const QString& why);

private:
    bool refuse_if_busy();
    void start_live(const accum::RunConfig& config, bool users);
    bool lesson_may_start();
    void borrow_form_for_lesson(const accum::RunConfig& config);

    RunSurface& surface_;
    std::optional<accum::RunConfig> user_config_;
    std::optional<accum::RunConfig> config_before_reset_;
    std::optional<accum::RunConfig> experiment_config_; // a demo's, while its experiment starts
    int live_run_count_ = 0;
};

} // namespace studio
