#include "experiments.h"

#include <QCoreApplication>
#include <cstdlib>

namespace studio {

namespace {

QString translated(const char* text) { return QCoreApplication::translate("studio::Experiments", text); }

} // namespace

QString ExperimentInfo::title_text() const { return translated(title); }
QString ExperimentInfo::menu_title_text() const { return translated(menu_title); }
QString ExperimentInfo::tooltip_text() const { return translated(tooltip); }
QString ExperimentInfo::explanation_text() const { return translated(explanation); }
QString ExperimentInfo::object_name() const { return QString::fromLatin1(id).replace(QLatin1Char('-'), QLatin1Char('_')); }

const std::vector<ExperimentInfo>& experiments() {
    static const std::vector<ExperimentInfo> table = {
        {Experiment::CompareStyles, "compare-styles", ExperimentGroup::Equivalence,
         QT_TRANSLATE_NOOP("studio::Experiments", "Compare styles"),
         QT_TRANSLATE_NOOP("studio::Experiments", "Compare styles"),
         QT_TRANSLATE_NOOP("studio::Experiments", "Run the configuration as PyTorch loop, Accelerator and Trainer"),
         QT_TRANSLATE_NOOP("studio::Experiments",
                           "Compare styles: the same configuration, seed and data order in the PyTorch loop, the "
                           "Accelerator and the Trainer. They are three spellings of one idea, so the loss curves "
                           "lie on top of each other and max |Δ loss| is at rounding level.")},
        {Experiment::CompareAccumulation, "compare-accumulation", ExperimentGroup::Equivalence,
         QT_TRANSLATE_NOOP("studio::Experiments", "Compare accumulation"),
         QT_TRANSLATE_NOOP("studio::Experiments", "Compare accumulation"),
         QT_TRANSLATE_NOOP("studio::Experiments", "Same effective batch as (B·K, 1), (B, K) and (B/2, 2K)"),
         QT_TRANSLATE_NOOP("studio::Experiments",
                           "Compare accumulation: one big batch (B·K, 1), the configured (B, K) and (B/2, 2K) — the "
                           "same effective batch and seed. Expect the same curve, less peak memory for smaller "
                           "micro-batches, and a little less speed.")},
        {Experiment::NoSyncVsSyncEach, "no-sync", ExperimentGroup::Equivalence,
         QT_TRANSLATE_NOOP("studio::Experiments", "no_sync vs sync each"),
         QT_TRANSLATE_NOOP("studio::Experiments", "no_sync vs sync every micro-batch"),
         QT_TRANSLATE_NOOP("studio::Experiments",
                           "Several processes: gradients averaged once per update (no_sync) or after every "
                           "micro-batch"),
         QT_TRANSLATE_NOOP("studio::Experiments",
                           "no_sync vs sync every micro-batch: several processes on this machine each run K "
                           "micro-batches per update. Inside no_sync() (accelerator.accumulate(), the Trainer's "
                           "loop) the gradients add up locally and are averaged across the processes once per "
                           "update; syncing after every backward averages them K times. The losses are the same, "
                           "the communication is K times as much.")},
        {Experiment::PitfallBatchNorm, "pitfall-batchnorm", ExperimentGroup::Pitfall,
         QT_TRANSLATE_NOOP("studio::Experiments", "BatchNorm"),
         QT_TRANSLATE_NOOP("studio::Experiments", "Pitfall: BatchNorm"),
         QT_TRANSLATE_NOOP("studio::Experiments", "BatchNorm breaks the equivalence"),
         QT_TRANSLATE_NOOP("studio::Experiments",
                           "BatchNorm normalises each micro-batch with its own mean and variance, so K small batches "
                           "are not one big batch: with BatchNorm the accumulated run leaves the big-batch curve.")},
        {Experiment::PitfallTokenLoss, "pitfall-tokens", ExperimentGroup::Pitfall,
         QT_TRANSLATE_NOOP("studio::Experiments", "Mean vs token loss"),
         QT_TRANSLATE_NOOP("studio::Experiments", "Pitfall: mean vs token loss"),
         QT_TRANSLATE_NOOP("studio::Experiments",
                           "Variable-length sequences: mean per micro-batch vs normalised by the window's tokens"),
         QT_TRANSLATE_NOOP("studio::Experiments",
                           "With sequences of different lengths, averaging each micro-batch's mean loss weights "
                           "short sequences too much; dividing the summed token losses by the window's token count "
                           "matches the big batch.")},
        {Experiment::PitfallScheduler, "pitfall-scheduler", ExperimentGroup::Pitfall,
         QT_TRANSLATE_NOOP("studio::Experiments", "Scheduler per micro-batch"),
         QT_TRANSLATE_NOOP("studio::Experiments", "Pitfall: scheduler per micro-batch"),
         QT_TRANSLATE_NOOP("studio::Experiments",
                           "lr_scheduler.step() after every micro-batch (wrong) vs after every update (right)"),
         QT_TRANSLATE_NOOP("studio::Experiments",
                           "Calling lr_scheduler.step() after every micro-batch runs the schedule K times too fast: "
                           "the learning rate reaches zero after 1/K of the run. Step it once per update.")},
        {Experiment::PitfallLossScale, "pitfall-loss-scale", ExperimentGroup::Pitfall,
         QT_TRANSLATE_NOOP("studio::Experiments", "Loss scaler per micro-batch"),
         QT_TRANSLATE_NOOP("studio::Experiments", "Pitfall: loss scaler per micro-batch"),
         QT_TRANSLATE_NOOP("studio::Experiments",
                           "scaler.unscale_() and scaler.update() after every micro-batch (wrong) vs once per window "
                           "(right), on a run whose gradients overflow the scale"),
         QT_TRANSLATE_NOOP("studio::Experiments",
                           "The loss scaler multiplies each micro-batch's loss by S. Once per window, before "
                           "clipping, unscale_() divides .grad by S; step() skips the update if a gradient is "
                           "inf/NaN (✕), and update() then halves S. S starts at 3.4e38, float32's largest, and SGD "
                           "runs at lr 0.1 or more, so gradient spikes above 1 overflow. Unscaling and updating "
                           "after every micro-batch divides what .grad holds by S again: each update keeps about its "
                           "last micro-batch's gradient.")},
        {Experiment::MemoryLevers, "memory-levers", ExperimentGroup::Equivalence,
         QT_TRANSLATE_NOOP("studio::Experiments", "Memory levers"),
         QT_TRANSLATE_NOOP("studio::Experiments", "Memory levers"),
         QT_TRANSLATE_NOOP("studio::Experiments",
                           "The CNN at 256 × 1 and 64 × 4, each without and with gradient checkpointing: their "
                           "losses, peak memory by category, samples/s"),
         QT_TRANSLATE_NOOP("studio::Experiments",
                           "Memory levers: the CNN at 256 × 1 and 64 × 4, each without and with gradient "
                           "checkpointing. The losses agree to float rounding, which training can grow (the verdict "
                           "says how far apart they end); the bars show what each lever shrinks: only the "
                           "activations. Parameters, gradients and optimizer state stay the same size. "
                           "Checkpointing recomputes activations in backward (the CNN's first block; its second "
                           "runs in slices of the batch), so it costs some speed.")},
        {Experiment::NoiseScale, "noise-scale", ExperimentGroup::Batch,
         QT_TRANSLATE_NOOP("studio::Experiments", "Batch vs noise scale"),
         QT_TRANSLATE_NOOP("studio::Experiments", "Effective batch vs the noise scale"),
         QT_TRANSLATE_NOOP("studio::Experiments",
                           "Two effective batches, well below and well above the measured gradient noise scale, on "
                           "the same number of samples"),
         QT_TRANSLATE_NOOP("studio::Experiments",
                           "Batch vs noise scale: the same micro-batch accumulated over a small K and a large K, so "
                           "one effective batch sits well below the gradient noise scale and one well above it, each "
                           "trained on the same number of samples. The big one takes far fewer optimizer steps, but "
                           "above the noise scale its extra samples buy little: per sample it learns no faster. The "
                           "x axis is samples seen.")},
    };
    return table;
}

const ExperimentInfo& experiment_info(Experiment experiment) {
    for (const auto& info : experiments())
        if (info.experiment == experiment) return info;
    std::abort(); // a value of Experiment without its row: add it to the table above
}

const ExperimentInfo* find_experiment(const QString& id) {
    for (const auto& info : experiments())
        if (id == QLatin1String(info.id)) return &info;
    return nullptr;
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
