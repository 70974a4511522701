#pragma once
// The guided lesson: the chapter on gradient accumulation as steps a teacher
// clicks through. Each step is data: a title and two or three sentences (English
// source, translated through the "studio::Lesson" context), the configuration the
// studio is set to, what runs (a live run, or an experiment of the equivalence
// lab), and the check that says whether it ended as the step says. A new step
// (the distributed sync counter, memory bands, loss scale…) is one more entry in
// lesson_steps(). No widgets here: lesson_panel.h shows and drives the steps.

#include <QString>
#include <vector>

#include "accum/run_config.h"
#include "experiments.h"
#include "run_result.h"

namespace studio {

// Which part of the Live run tab gets the room in a live step (the splitters move).
enum class LiveFocus {
    Balanced, // loss and memory plots, the code beside them
    Memory,   // the memory plot: where the budget runs out
    Code,     // the code panel and the accumulation meter
};

enum class LessonRun {
    Live,       // the configuration runs in the Live run tab (plots, code panel)
    Experiment, // the configuration is the base of an equivalence-lab experiment
};

struct LessonVerdict {
    bool as_expected = false;
    QString text; // one line, translated: what happened, with the numbers
};

struct LessonStep {
    const char* key = "";   // stable name: "problem", "mechanism", … (tests, --lesson-step)
    const char* title = ""; // QT_TRANSLATE_NOOP("studio::Lesson", …)
    const char* text = "";  // two or three sentences, same context
    LessonRun run = LessonRun::Live;
    LiveFocus focus = LiveFocus::Balanced; // with LessonRun::Live
    Experiment experiment = Experiment::CompareStyles; // with LessonRun::Experiment
    accum::RunConfig (*config)() = nullptr;
    // The runs the step made (one for a live run, the lab's runs for an experiment).
    LessonVerdict (*check)(const std::vector<RunResult>& runs) = nullptr;
    // A sentence of measured figures, from a benchmark's results compiled into
    // the studio, after the text (none when they are missing).
    QString (*measured)() = nullptr;

    QString title_text() const;
    QString body_text() const;
};

const std::vector<LessonStep>& lesson_steps();
// The index of the step named `key`, or -1.
int lesson_step_index(const QString& key);

// Thresholds of the checks. Same update, different arithmetic order: the runs differ
// only by rounding, well inside kSameLossTolerance. A pitfall must be visible from
// the back of the room: each kVisible… threshold sits well below the gap its step
// measured. The measured gaps: bench/STUDIO_MEASUREMENTS.md.
inline constexpr double kSameLossTolerance = 1e-5;
inline constexpr double kVisibleTokenDifference = 1e-2;
inline constexpr double kVisibleBatchNormDifference = 1e-3;
inline constexpr double kVisibleLossScaleDifference = 1e-2;

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
