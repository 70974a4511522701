#include "engine_use.h"

#include <QCoreApplication>

#include "accum/engine_messages.h"

namespace studio {

namespace {

// The strings of this file, in the translation context "studio::EngineUse".
class EngineUse {
    Q_DECLARE_TR_FUNCTIONS(studio::EngineUse)
};

} // namespace

EngineUser EngineState::user() const {
    if (!live_running && !lab_running) return EngineUser::None;
    if (lesson_step) return EngineUser::LessonStep;
    return live_running ? EngineUser::LiveRun : EngineUser::LabExperiment;
}

EngineActions engine_actions(const EngineState& state, bool config_valid) {
    EngineActions a;
    const bool free = !state.busy();
    a.run = free && config_valid;
    a.experiments = free;
    a.configure = free;
    a.pause = state.live_running;
    a.stop = state.live_running;
    a.step = state.live_running && state.live_paused;
    return a;
}

QString engine_refusal(const EngineState& state) {
    switch (state.user()) {
    case EngineUser::None:
        return {};
    case EngineUser::LiveRun:
        return EngineUse::tr("another run is in progress (the live run).");
    case EngineUser::LabExperiment:
        return EngineUse::tr("another run is in progress (an experiment of the equivalence lab).");
    case EngineUser::LessonStep:
        return EngineUse::tr("another run is in progress (the lesson's step).");
    }
    return {};
}

bool engine_refused_as_busy(const accum::SummaryRecord& summary) {
    return summary.detail.code == accum::message_code::run_in_progress;
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
