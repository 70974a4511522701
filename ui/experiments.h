#pragma once
// The equivalence lab's experiments: the one table of them. The lab's buttons,
// the Lab menu, --demo NAME (and its list in --help), the lesson's steps and the
// tests all take the experiments from experiments(); a new experiment is a value
// of Experiment, a row here and a case of plan_experiment() (lab_plan.h). No
// widgets here.

#include <QString>
#include <vector>

namespace studio {

enum class Experiment {
    CompareStyles,
    CompareAccumulation,
    PitfallBatchNorm,
    PitfallTokenLoss,
    PitfallScheduler,
    NoSyncVsSyncEach, // N processes: no_sync (one all-reduce per update) vs an all-reduce per micro-batch
    MemoryLevers, // 256 × 1, 64 × 4, each without and with gradient checkpointing (the CNN)
    PitfallLossScale,
    // Two effective batches, well below and well above the gradient noise scale,
    // on the same samples: the big one takes fewer steps, not fewer samples.
    NoiseScale,
};

// The lab's two rows of buttons and the Lab menu's two sections.
enum class ExperimentGroup {
    Equivalence, // the same training in other shapes: the curves coincide
    Pitfall,     // a mistake beside the right loop: the curves part
    Batch,       // which effective batch at all (a row of its own: a fifth button would widen the window)
};

struct ExperimentInfo {
    Experiment experiment;
    const char* id;          // --demo NAME; with '_' for '-', the lab button's object name
    ExperimentGroup group;
    // English source texts, translated in the context "studio::Experiments".
    const char* title;       // the button, under its group's heading
    const char* menu_title;  // the Lab menu's entry, which stands alone
    const char* tooltip;     // the button's
    const char* explanation; // the lab's panel above the plot while it runs

    QString title_text() const;
    QString menu_title_text() const;
    QString tooltip_text() const;
    QString explanation_text() const;
    QString object_name() const;
};

// Every experiment once, in the order --help lists the demos and each group's
// buttons and menu entries appear.
const std::vector<ExperimentInfo>& experiments();
// The row of `experiment` (every value of Experiment has one).
const ExperimentInfo& experiment_info(Experiment experiment);
// The row whose id is `id`, or nullptr.
const ExperimentInfo* find_experiment(const QString& id);

// The initial loss scale of the loss-scaler pitfall: float32's largest power of
// two below its maximum is 2^127 (1.7e38); 3.4e38 is just below the maximum,
// where a gradient above 1 overflows (as one above 1 does in fp16 at 2^16).
inline constexpr double kOverflowLossScale = 3.4e38;

// The noise-scale experiment's figure when none was measured on the model and
// data: the lesson's CNN on Fashion-MNIST early in training (the noise scale
// the studio measured there: bench/STUDIO_MEASUREMENTS.md). The runs then measure
// their own, and the verdict says where the two batches sit against it.
inline constexpr double kDefaultNoiseScale = 90.0;
// How far below and above the noise scale its two batches sit (a factor each way).
inline constexpr double kNoiseScaleMargin = 4.0;

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
