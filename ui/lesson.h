#pragma once
// The guided lesson: a chapter as steps a teacher clicks through. A lesson is a
// file (docs/lessons.md): per step a title and two or three sentences in each of
// the lesson's languages, the configuration the studio is set to (accum-run's
// --config keys), what runs (a live run, or an experiment of the equivalence
// lab), the check that says whether it ended as the step says, and the memory
// lever the out-of-memory advice leads with. The checks and the measured
// sentences are named kinds, implemented here; the file gives their parameters.
// The studio ships its lessons compiled in (resources/lessons/); File › Open
// lesson… reads a teacher's own. No widgets here: lesson_panel.h shows and
// drives the steps.

#include <QString>
#include <QStringList>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
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

// What the out-of-memory advice offers first (oom_banner.h): the planner's
// measured choice, or the lever the lesson teaches, the other one second.
enum class MemoryLever { Planner, Accumulation, Checkpointing };

struct LessonVerdict {
    bool as_expected = false;
    QString text; // one line, translated: what happened, with the numbers
};

// A text in each of a lesson's languages.
struct LessonText {
    std::vector<std::pair<QString, QString>> by_language; // ("en", "…"), ("vi", "…")
    // The text in `language`, else in English, else in the lesson's first language.
    QString in(const QString& language) const;
};

struct LessonStep {
    const char* key = ""; // stable name: "problem", "mechanism", … (tests, --lesson-step)
    LessonText title;
    LessonText text; // two or three sentences
    LessonRun run = LessonRun::Live;
    LiveFocus focus = LiveFocus::Balanced;             // with LessonRun::Live
    Experiment experiment = Experiment::CompareStyles; // with LessonRun::Experiment
    MemoryLever lever = MemoryLever::Planner;
    std::function<accum::RunConfig()> config;
    // A compare-accumulation step's (micro-batch, K) pairs, the reference first;
    // empty: the lab's own from the configuration's B and K.
    std::vector<std::pair<std::int64_t, std::int64_t>> shapes;
    // The runs the step made (one for a live run, the lab's runs for an experiment).
    std::function<LessonVerdict(const std::vector<RunResult>&)> check;
    // A sentence of measured figures, from a benchmark's results compiled into
    // the studio, after the text (none when they are missing).
    std::function<QString()> measured;
    int line = 0; // where the step starts in its file
    std::shared_ptr<const std::string> key_storage; // what `key` points into, shared by copies

    // In the interface's language (interface_language()).
    QString title_text() const;
    QString body_text() const;
};

struct Lesson {
    QString file; // what it was read from (":/lessons/…" for a shipped lesson)
    LessonText title;
    QStringList languages;
    std::vector<LessonStep> steps;

    int step_index(const QString& key) const; // -1 when no step is named `key`
};

// Reads a lesson file. On a bad file: nothing, and `error` says where and what:
// "FILE, line N: FIELD: reason" (the field as "steps[3].check.kind", steps
// counted from 1).
std::optional<Lesson> read_lesson_file(const QString& path, QString* error);
std::optional<Lesson> parse_lesson(const QByteArray& text, const QString& name, QString* error);

// The lessons the studio ships (compiled in), the built-in one first.
QStringList shipped_lessons();
// The folder of the shipped lessons' files for a studio in `program_directory`:
// the installed share/accum-studio/lessons (the build tree keeps a copy at the
// same place relative to app/), or "" when it is not there. File › Open lesson…
// starts in it: a teacher copies a lesson from it to edit.
QString lessons_directory(const QString& program_directory);
// The chapter's own lesson (a text classifier in three APIs): Lab › Chapter lesson.
QString chapter_lesson();
// The built-in lesson: the chapter on gradient accumulation.
const Lesson& builtin_lesson();
std::shared_ptr<const Lesson> builtin_lesson_shared();
const std::vector<LessonStep>& lesson_steps(); // builtin_lesson().steps
// The index of the built-in lesson's step named `key`, or -1.
int lesson_step_index(const QString& key);

// The language of the interface's installed translation ("en" without one).
QString interface_language();

// The kinds of check a lesson file names, with their parameters and defaults.
using CheckParameters = std::map<std::string, double>;
struct CheckKind {
    const char* name;
    CheckParameters defaults; // every parameter the kind takes
    LessonVerdict (*check)(const std::vector<RunResult>& runs, const CheckParameters& p);
};
const std::vector<CheckKind>& check_kinds();
// The measured sentences a step may add (kind name → the sentence, "" without figures).
const std::vector<std::pair<const char*, QString (*)()>>& measured_kinds();

// Thresholds of the built-in lesson's checks (the defaults of their kinds' parameters).
// Same update, different arithmetic order: the runs differ only by rounding, well
// inside kSameLossTolerance (run_result.h). A pitfall must be visible from the back
// of the room: each kVisible… threshold sits well below the gap its step measured.
// The measured gaps: bench/STUDIO_MEASUREMENTS.md.
inline constexpr double kVisibleTokenDifference = 1e-2;
inline constexpr double kVisibleBatchNormDifference = 1e-3;
inline constexpr double kVisibleLossScaleDifference = 1e-2;
// The noise-scale step's batches are planned kNoiseScaleMargin (4) from the
// figure known before the runs; the runs' own estimates may drift from it, so
// the check asks a factor of 2 each way.
inline constexpr double kNoiseScaleCheckMargin = 2.0;

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
