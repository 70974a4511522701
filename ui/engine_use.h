#pragma once
// One training run per process (ARCHITECTURE.md §4.4): the engine's CPU allocator
// counters, budget and thread settings are process globals, and the studio has
// two engine threads, the live run's and the lab's experiment queue's. What the
// engine is busy with is read from one snapshot of both (EngineState, filled by
// MainWindow::engine_state()), and every enabled action and every refused start
// is derived from it here. The engine refuses a second concurrent run too
// (engine_refused_as_busy()); this is the first line, which says why in words.
// The memory estimate is no user: the engine makes it wait for a run, never the
// other way round (memory/estimate_guard.h). No widgets: tested alone.

#include <QString>

#include "accum/records.h"

namespace studio {

// Who holds the engine.
enum class EngineUser {
    None,
    LiveRun,       // the Live run tab's run
    LabExperiment, // an experiment of the equivalence lab
    LessonStep,    // the lesson's step (its live run or its experiment)
};

struct EngineState {
    bool live_running = false; // the live run's controller
    bool live_paused = false;
    bool lab_running = false;  // the lab's experiment queue
    bool lesson_step = false;  // the lesson waits for what runs: its step's run

    EngineUser user() const;
    bool busy() const { return user() != EngineUser::None; }
};

// What the window's controls may do now.
struct EngineActions {
    bool run = false;         // start the live run (Run, Ctrl+R)
    bool pause = false;       // pause or resume it
    bool stop = false;
    bool step = false;        // one micro-batch while paused
    bool experiments = false; // start a lab experiment (its buttons, the Lab menu)
    bool configure = false;   // change the configuration
};
EngineActions engine_actions(const EngineState& state, bool config_valid);

// Why nothing may start now, as the end of a sentence ("Not started: another run
// is in progress (the live run)."), translated; empty when the engine is free.
QString engine_refusal(const EngineState& state);

// The engine's own refusal: the summary of a run that did not start because
// another run of this process trains (message code run_in_progress).
bool engine_refused_as_busy(const accum::SummaryRecord& summary);

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
