// SPDX-License-Identifier: GPL-3.0-or-later
#include "run_director.h"

namespace studio {

RunDirector::RunDirector(RunSurface& surface, QObject* parent) : QObject(parent), surface_(surface) {}

bool RunDirector::refuse_if_busy() {
    const auto why = engine_refusal(surface_.engine_state());
    if (why.isEmpty()) return false;
    surface_.show_refusal(why);
    return true;
}

bool RunDirector::start_run() {
    if (refuse_if_busy()) return false;
    if (!surface_.form_valid()) {
        surface_.show_refusal(surface_.form_problems());
        return false;
    }
    start_live(surface_.form_config(), true);
    return true;
}

void RunDirector::start_live(const accum::RunConfig& config, bool users) {
    accum::RunConfig c = config;
    c.record_micro_steps = true; // the faint per-micro-batch curve
    c.quiet = true;
    if (users) surface_.store_settings();
    surface_.start_live_run(c, tr("run %1").arg(++live_run_count_));
}

QStringList RunDirector::demo_names() {
    QStringList names{QStringLiteral("code-panel")};
    for (const auto& info : experiments()) names << QLatin1String(info.id);
    return names;
}

bool RunDirector::run_demo(const QString& name) {
    if (name == QLatin1String("code-panel")) {
        surface_.show_live_tab();
        start_run();
        return true;
    }
    const auto* info = find_experiment(name);
    if (!info) return false;
    run_experiment(info->experiment);
    return true;
}

bool RunDirector::run_demo(const QString& name, const accum::RunConfig& config) {
    const bool live = name == QLatin1String("code-panel");
    const auto* info = live ? nullptr : find_experiment(name);
    if (!live && !info) return false;
    if (refuse_if_busy()) return true;
    if (const auto problems = accum::validate(config); !problems.empty()) {
        surface_.show_refusal(QString::fromStdString(problems.front().to_string()));
        return true;
    }
    if (live) {
        surface_.show_live_tab();
        start_live(config, false);
        return true;
    }
    // The lab reads its base configuration when the experiment starts: the demo's, this once.
    experiment_config_ = config;
    run_experiment(info->experiment);
    experiment_config_.reset();
    return true;
}

bool RunDirector::run_experiment(Experiment experiment) {
    if (refuse_if_busy()) return false;
    return surface_.start_lab_experiment(experiment);
}

accum::RunConfig RunDirector::lab_base_config() const {
    return experiment_config_ ? *experiment_config_ : surface_.form_config();
}

bool RunDirector::lesson_may_start() {
    // Asked before the step's configuration replaces the one a run started by
    // hand goes with.
    const auto why = engine_refusal(surface_.engine_state());
    if (!why.isEmpty()) Q_EMIT lesson_run_refused(why);
    return why.isEmpty();
}

void RunDirector::borrow_form_for_lesson(const accum::RunConfig& config) {
    if (!user_config_) user_config_ = surface_.form_config();
    surface_.set_form_config(config);
}

void RunDirector::run_lesson_live(const accum::RunConfig& config, LiveFocus focus) {
    if (!lesson_may_start()) return;
    borrow_form_for_lesson(config);
    // The mechanism's step builds the loop up a line at a time while it runs.
    surface_.show_live(focus, focus == LiveFocus::Code);
    if (start_run())
        Q_EMIT lesson_run_started();
    else
        Q_EMIT lesson_run_refused(surface_.form_problems());
}

void RunDirector::run_lesson_experiment(const accum::RunConfig& config, Experiment experiment) {
    if (!lesson_may_start()) return;
    borrow_form_for_lesson(config);
    if (run_experiment(experiment))
        Q_EMIT lesson_run_started();
    else
        Q_EMIT lesson_run_refused(engine_refusal(surface_.engine_state()));
}

void RunDirector::stop_lesson_run() {
    // The lesson asks only while its own run goes, and only one run goes at a time.
    const auto state = surface_.engine_state();
    if (state.live_running) surface_.stop_live_run();
    if (state.lab_running) surface_.cancel_lab_experiment();
}

void RunDirector::leave_lesson() {
    if (!user_config_) return;
    const auto mine = *user_config_;
    user_config_.reset();
    surface_.set_form_config(mine);
}

bool RunDirector::reset_to_defaults() {
    if (!engine_actions(surface_.engine_state(), surface_.form_valid()).configure) return false;
    config_before_reset_ = surface_.form_config();
    surface_.set_form_config(accum::RunConfig{});
    // During the lesson the defaults are what leaving it brings back.
    if (user_config_) user_config_ = accum::RunConfig{};
    surface_.store_settings();
    return true;
}

bool RunDirector::undo_reset() {
    if (!config_before_reset_) return false;
    surface_.set_form_config(*config_before_reset_);
    if (user_config_) user_config_ = *config_before_reset_;
    config_before_reset_.reset();
    surface_.store_settings();
    return true;
}

} // namespace studio
