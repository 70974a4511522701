#include "lesson.h"

#include <QCoreApplication>
#include <QStringList>
#include <algorithm>
#include <cmath>

#include "engine_text.h"
#include "lab_panel.h" // the lab's measures of a run: format_bytes, allreduces_per_update…
#include "link_curve.h"

namespace studio {

namespace {

// The lesson's strings, in the translation context "studio::Lesson".
class Lesson {
    Q_DECLARE_TR_FUNCTIONS(studio::Lesson)
};

QString delta_text(double d) {
    if (std::isnan(d)) return QStringLiteral("–");
    return d == 0.0 ? QStringLiteral("0") : QString::number(d, 'e', 1);
}

bool all_completed(const std::vector<RunResult>& runs) {
    return !runs.empty() && std::all_of(runs.begin(), runs.end(), [](const RunResult& r) {
        return r.has_summary && r.summary.status == accum::RunStatus::Completed;
    });
}

LessonVerdict not_completed(const std::vector<RunResult>& runs) {
    for (const auto& r : runs)
        if (!r.has_summary || r.summary.status != accum::RunStatus::Completed)
            return {false, Lesson::tr("Run “%1” did not complete: %2.")
                               .arg(r.label, r.has_summary ? run_status_text(r.summary.status) : Lesson::tr("no summary"))};
    return {false, Lesson::tr("Nothing ran.")};
}

// The lesson's model: the CNN on Fashion-MNIST, on the CPU, whose tensor memory the
// engine counts exactly (so a budget of 40 MiB behaves the same on every machine).
// lr 0.02: smooth curves (0.05 spikes at update 15 with the CNN). Runs of 10–12
// updates: long enough to see, short enough to walk the lesson in a minute.
accum::RunConfig cnn(std::int64_t batch, std::int64_t k, std::int64_t max_steps) {
    accum::RunConfig c;
    c.mode = accum::Mode::Pytorch;
    c.dataset = accum::DatasetKind::FashionMnist;
    c.model = accum::ModelKind::Cnn;
    c.batch_size = batch;
    c.accumulation_steps = k;
    c.epochs = 0;
    c.max_steps = max_steps;
    c.learning_rate = 0.02;
    c.momentum = 0.9;
    c.seed = 0;
    c.device = "cpu";
    c.eval_strategy = accum::Strategy::No;
    c.save_strategy = accum::Strategy::No;
    return c;
}

// --------------------------------------------------------------- the steps

// The CNN at 256 × 1 does not fit the budget and 64 × 4 does; the engine counts
// tensor memory exactly, so this holds on every machine (bench/STUDIO_MEASUREMENTS.md).
accum::RunConfig problem_config() {
    auto c = cnn(256, 1, 12);
    c.memory_budget = "40MiB";
    return c;
}

LessonVerdict problem_check(const std::vector<RunResult>& runs) {
    if (runs.size() != 1 || !runs[0].has_summary) return {false, Lesson::tr("Nothing ran.")};
    const auto& r = runs[0];
    if (r.summary.status != accum::RunStatus::OutOfMemory)
        return {false, Lesson::tr("Expected out of memory, but the run ended: %1.").arg(run_status_text(r.summary.status))};
    const auto budget = accum::parse_byte_size(r.config.memory_budget).value_or(0);
    QString text = Lesson::tr("Out of memory at micro-batch %1 × %2 under the %3 budget.")
                       .arg(r.config.batch_size)
                       .arg(r.config.accumulation_steps)
                       .arg(QString::fromStdString(accum::format_byte_size(budget)));
    if (r.summary.suggested_batch_size > 0 && r.summary.suggested_accumulation_steps > 0)
        text += QLatin1Char(' ') + (r.summary.suggested_gradient_checkpointing
                                        ? Lesson::tr("The engine suggests %1 × %2 with gradient checkpointing: the "
                                                     "same %3 samples per update.")
                                        : Lesson::tr("The engine suggests %1 × %2: the same %3 samples per update."))
                                       .arg(r.summary.suggested_batch_size)
                                       .arg(r.summary.suggested_accumulation_steps)
                                       .arg(r.summary.suggested_batch_size * r.summary.suggested_accumulation_steps);
    return {true, text};
}

// Teaching pace: the code panel lights each line, and the step lasts long enough
// to be narrated (5 updates of 4 micro-batches, a second each: 20 s and the
// training's own time), where 2 updates at 0.6 s were over in 5 s.
accum::RunConfig mechanism_config() {
    auto c = cnn(64, 4, 5);
    c.memory_budget = "40MiB";
    c.micro_step_delay_s = 1.0;
    return c;
}

LessonVerdict mechanism_check(const std::vector<RunResult>& runs) {
    if (!all_completed(runs) || runs.size() != 1) return not_completed(runs);
    const auto& r = runs[0];
    const auto k = r.config.accumulation_steps;
    const bool ok = r.summary.optimizer_steps > 0 && r.summary.micro_steps == k * r.summary.optimizer_steps;
    return {ok, Lesson::tr("%1 micro-batches, %2 updates: the optimizer stepped once every %3 micro-batches, after "
                   "their gradients had added up.")
                    .arg(r.summary.micro_steps)
                    .arg(r.summary.optimizer_steps)
                    .arg(k)};
}

accum::RunConfig proof_config() { return cnn(64, 4, 10); }

LessonVerdict proof_check(const std::vector<RunResult>& runs) {
    if (!all_completed(runs) || runs.size() < 2) return not_completed(runs);
    const double worst = max_pairwise_loss_difference(runs);
    QStringList peaks;
    bool falling = true;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        peaks << format_bytes(runs[i].summary.peak_memory_bytes);
        if (i > 0 && runs[i].summary.peak_memory_bytes >= runs[i - 1].summary.peak_memory_bytes) falling = false;
    }
    const bool ok = worst <= kSameLossTolerance && falling;
    return {ok, Lesson::tr("Largest |Δ loss| %1 (≤ 1e-5): the same curve. Peak memory %2.")
                    .arg(delta_text(worst), peaks.join(QStringLiteral(" → ")))};
}

accum::RunConfig styles_config() { return cnn(64, 4, 10); }

LessonVerdict styles_check(const std::vector<RunResult>& runs) {
    if (!all_completed(runs) || runs.size() != 3) return not_completed(runs);
    const double worst = max_pairwise_loss_difference(runs);
    return {worst <= kSameLossTolerance,
            Lesson::tr("Largest |Δ loss| between the three styles: %1 (≤ 1e-5). One idea, three spellings.")
                .arg(delta_text(worst))};
}

// Two processes on this machine, each with micro-batch 64 and K = 4 (effective
// batch 512), the MLP: its update is short, so the all-reduces it adds are seen
// in the time per update.
accum::RunConfig no_sync_config() {
    auto c = cnn(64, 4, 20);
    c.model = accum::ModelKind::Mlp;
    c.learning_rate = 0.05;
    c.nproc_per_node = 2;
    return c;
}

// What no_sync saves between two hosts, as bench/two_hosts_bench.py measured it.
QString no_sync_measured() {
    const auto curve = measured_link_curve();
    return curve ? link_curve_sentence(*curve) : QString();
}

LessonVerdict no_sync_check(const std::vector<RunResult>& runs) {
    if (!all_completed(runs) || runs.size() != 2) return not_completed(runs);
    const double d = max_loss_difference(runs[0], runs[1]);
    const double once = allreduces_per_update(runs[0]), each = allreduces_per_update(runs[1]);
    const auto k = static_cast<double>(runs[1].config.accumulation_steps);
    return {d <= kSameLossTolerance && once == 1.0 && each == k,
            Lesson::tr("The same losses (|Δ| %1). All-reduces per update: %2 with no_sync, %3 syncing every "
                       "micro-batch; time per update %4 ms vs %5 ms.")
                .arg(delta_text(d))
                .arg(once, 0, 'g', 3)
                .arg(each, 0, 'g', 3)
                .arg(1000.0 * seconds_per_update(runs[0]), 0, 'f', 1)
                .arg(1000.0 * seconds_per_update(runs[1]), 0, 'f', 1)};
}

// Few long and many short sequences (synthetic-lm), one sequence per micro-batch and
// K = 16: the mean per micro-batch weighs every sequence alike, however short.
accum::RunConfig tokens_config() {
    accum::RunConfig c;
    c.dataset = accum::DatasetKind::SyntheticLm;
    c.model = accum::ModelKind::Transformer;
    c.batch_size = 1;
    c.accumulation_steps = 16;
    c.epochs = 0;
    c.max_steps = 20;
    c.learning_rate = 0.1;
    c.loss_normalization = accum::LossNormalization::Tokens;
    c.device = "cpu";
    c.eval_strategy = accum::Strategy::No;
    c.save_strategy = accum::Strategy::No;
    return c;
}

LessonVerdict tokens_check(const std::vector<RunResult>& runs) {
    if (!all_completed(runs) || runs.size() != 3) return not_completed(runs);
    const double wrong = max_loss_difference(runs[0], runs[1]);
    const double right = max_loss_difference(runs[0], runs[2]);
    return {wrong >= kVisibleTokenDifference && right <= kSameLossTolerance,
            Lesson::tr("Mean per micro-batch: |Δ loss| up to %1, visibly off. Normalised by the window's tokens: %2, "
               "the big batch's curve.")
                .arg(delta_text(wrong), delta_text(right))};
}

accum::RunConfig batchnorm_config() { return cnn(64, 4, 12); }

LessonVerdict batchnorm_check(const std::vector<RunResult>& runs) {
    if (!all_completed(runs) || runs.size() != 2) return not_completed(runs);
    const double d = max_loss_difference(runs[0], runs[1]);
    return {d >= kVisibleBatchNormDifference,
            Lesson::tr("With BatchNorm, %1 accumulated leaves one batch of %2 by up to %3 in loss.")
                .arg(QStringLiteral("%1 × %2").arg(runs[1].config.batch_size).arg(runs[1].config.accumulation_steps))
                .arg(runs[0].config.batch_size)
                .arg(delta_text(d))};
}

accum::RunConfig scheduler_config() {
    auto c = cnn(64, 4, 12);
    c.scheduler = accum::SchedulerKind::Linear;
    return c;
}

LessonVerdict scheduler_check(const std::vector<RunResult>& runs) {
    if (!all_completed(runs) || runs.size() != 2 || runs[0].steps.empty() || runs[1].steps.empty())
        return not_completed(runs);
    const auto& right = runs[0].steps;
    const auto& wrong = runs[1].steps;
    const auto zero = std::find_if(wrong.begin(), wrong.end(), [](const auto& s) { return s.learning_rate <= 0.0; });
    const auto n = static_cast<std::int64_t>(wrong.size());
    const auto k = runs[1].config.accumulation_steps;
    // The schedule of n updates, stepped K times per update, is over after n / K updates.
    const bool ok = zero != wrong.end() && zero->step <= (n + k - 1) / k + 1 && right.back().learning_rate > 0.0;
    const QString from = zero == wrong.end() ? QStringLiteral("–") : QString::number(zero->step);
    return {ok, Lesson::tr("Stepped per micro-batch, the learning rate is 0 from update %1 of %2; stepped per update, it "
                   "is still %3 at the last one.")
                    .arg(from)
                    .arg(n)
                    .arg(right.back().learning_rate, 0, 'g', 2)};
}

// The default experiment's MLP at lr 0.1 with a dynamic loss scaler that starts at
// float32's largest scale: a gradient spike above 1 overflows and the right loop
// skips a window (bench/STUDIO_MEASUREMENTS.md).
accum::RunConfig loss_scale_config() {
    auto c = cnn(64, 4, 40);
    c.model = accum::ModelKind::Mlp;
    c.learning_rate = 0.1;
    c.loss_scaling = accum::LossScaling::Dynamic;
    c.loss_scale_init = kOverflowLossScale;
    return c;
}

LessonVerdict loss_scale_check(const std::vector<RunResult>& runs) {
    if (!all_completed(runs) || runs.size() != 2 || runs[0].steps.empty() || runs[1].steps.empty())
        return not_completed(runs);
    const auto& right = runs[0].steps;
    // Each skipped window halves the scale once; the others leave it (no growth in 40 windows).
    const auto skipped = skipped_updates(runs[0]);
    bool halved_once = true;
    for (std::size_t i = 0; i + 1 < right.size(); ++i)
        if (right[i + 1].loss_scale != (right[i].skipped ? right[i].loss_scale / 2 : right[i].loss_scale))
            halved_once = false;
    const double d = max_loss_difference(runs[0], runs[1]);
    const bool ok = skipped >= 1 && halved_once && d >= kVisibleLossScaleDifference;
    return {ok, Lesson::tr("Once per window, the scaler skipped %1 of %2 updates for overflow and halved S once for "
                           "each (%3 → %4). Per micro-batch, each update kept about its last micro-batch's "
                           "gradient: |Δ loss| up to %5.")
                    .arg(skipped)
                    .arg(right.size())
                    .arg(right.front().loss_scale, 0, 'g', 2)
                    .arg(right.back().loss_scale, 0, 'g', 2)
                    .arg(delta_text(d))};
}

// The memory levers (the lab's experiment) on the lesson's CNN: 256 × 1, 64 × 4,
// and both with gradient checkpointing, 10 updates each.
accum::RunConfig memory_config() { return cnn(64, 4, 10); }

LessonVerdict memory_check(const std::vector<RunResult>& runs) {
    if (!all_completed(runs) || runs.size() != 4) return not_completed(runs);
    const double worst = max_pairwise_loss_difference(runs);
    std::int64_t activations[4], fixed[4];
    for (std::size_t i = 0; i < 4; ++i) {
        activations[i] = runs[i].peak_activations_bytes();
        fixed[i] = runs[i].static_bytes_at_peak();
    }
    // Parameters, gradients and optimizer state are the model's and the
    // optimizer's: the same in the four runs; each lever shrinks the activations.
    const bool same_fixed = fixed[1] == fixed[0] && fixed[2] == fixed[0] && fixed[3] == fixed[0];
    const bool ok = worst <= kSameLossTolerance && same_fixed && activations[1] < activations[0] &&
                    activations[2] < activations[0] && activations[3] < activations[1];
    return {ok, Lesson::tr("Largest |Δ loss| %1. Peak activations %2 at 256 × 1, %3 at 64 × 4; with checkpointing "
                   "%4 and %5. Parameters, gradients and optimizer state: %6 in all four.")
                    .arg(delta_text(worst), format_bytes(activations[0]), format_bytes(activations[1]),
                         format_bytes(activations[2]), format_bytes(activations[3]),
                         same_fixed ? format_bytes(fixed[0]) : Lesson::tr("not the same (%1 → %2)")
                                                                   .arg(format_bytes(fixed[0]), format_bytes(fixed[3])))};
}

} // namespace

QString LessonStep::title_text() const { return Lesson::tr(title); }
QString LessonStep::body_text() const {
    QString body = Lesson::tr(text);
    if (measured)
        if (const QString figures = measured(); !figures.isEmpty()) body += QLatin1Char(' ') + figures;
    return body;
}

const std::vector<LessonStep>& lesson_steps() {
    static const std::vector<LessonStep> steps = {
        {.key = "problem",
         .title = QT_TRANSLATE_NOOP("studio::Lesson", "The problem: a big batch does not fit"),
         .text = QT_TRANSLATE_NOOP("studio::Lesson",
                                   "We want 256 images per update. One batch of 256 through the CNN needs more "
                                   "tensor memory than this device's 40 MiB budget. Watch the memory plot: the "
                                   "run stops with out of memory at the first batch."),
         .run = LessonRun::Live,
         .focus = LiveFocus::Memory,
         .config = problem_config,
         .check = problem_check},
        {.key = "mechanism",
         .title = QT_TRANSLATE_NOOP("studio::Lesson", "The mechanism: K micro-batches add up in .grad"),
         .text = QT_TRANSLATE_NOOP("studio::Lesson",
                                   "Split the 256 into K = 4 micro-batches of 64. Each runs forward and backward "
                                   "and adds its gradient to .grad; after the fourth, the optimizer steps once "
                                   "and .grad is zeroed. Space pauses, F10 runs one micro-batch: the code panel "
                                   "lights the line that runs."),
         .run = LessonRun::Live,
         .focus = LiveFocus::Code,
         .config = mechanism_config,
         .check = mechanism_check},
        {.key = "proof",
         .title = QT_TRANSLATE_NOOP("studio::Lesson", "The proof: the same losses, less memory"),
         .text = QT_TRANSLATE_NOOP("studio::Lesson",
                                   "One batch of 256, 64 × 4 and 32 × 8 see the same samples in every update, so "
                                   "their loss curves lie on top of each other; the lower panel shows |Δ loss| at "
                                   "rounding level. The table shows what changes: peak memory falls with the "
                                   "micro-batch."),
         .run = LessonRun::Experiment,
         .experiment = Experiment::CompareAccumulation,
         .config = proof_config,
         .check = proof_check},
        {.key = "styles",
         .title = QT_TRANSLATE_NOOP("studio::Lesson", "Three APIs, one idea"),
         .text = QT_TRANSLATE_NOOP("studio::Lesson",
                                   "The same training written three ways: the plain PyTorch loop, Hugging Face "
                                   "Accelerate and the Transformers Trainer. Their curves coincide update for "
                                   "update; only the spelling of the loop differs."),
         .run = LessonRun::Experiment,
         .experiment = Experiment::CompareStyles,
         .config = styles_config,
         .check = styles_check},
        {.key = "tokens",
         .title = QT_TRANSLATE_NOOP("studio::Lesson", "Pitfall: mean loss vs token loss"),
         .text = QT_TRANSLATE_NOOP("studio::Lesson",
                                   "Sequences of different lengths, one per micro-batch, K = 16. Averaging each "
                                   "micro-batch's mean loss gives a short sequence as much weight as a long one, "
                                   "and training drifts from the big batch. Dividing the summed token losses by "
                                   "the window's token count (num_items_in_batch) matches it."),
         .run = LessonRun::Experiment,
         .experiment = Experiment::PitfallTokenLoss,
         .config = tokens_config,
         .check = tokens_check},
        {.key = "batchnorm",
         .title = QT_TRANSLATE_NOOP("studio::Lesson", "Pitfall: BatchNorm"),
         .text = QT_TRANSLATE_NOOP("studio::Lesson",
                                   "BatchNorm normalises each micro-batch with its own mean and variance, so four "
                                   "batches of 64 are not one batch of 256. The |Δ loss| panel shows the "
                                   "accumulated run leaving the big-batch curve."),
         .run = LessonRun::Experiment,
         .experiment = Experiment::PitfallBatchNorm,
         .config = batchnorm_config,
         .check = batchnorm_check},
        {.key = "scheduler",
         .title = QT_TRANSLATE_NOOP("studio::Lesson", "Pitfall: the scheduler per micro-batch"),
         .text = QT_TRANSLATE_NOOP("studio::Lesson",
                                   "lr_scheduler.step() after every micro-batch runs the schedule K times too "
                                   "fast: the learning rate reaches zero after a quarter of the run and training "
                                   "stalls. Step it once per update, beside optimizer.step()."),
         .run = LessonRun::Experiment,
         .experiment = Experiment::PitfallScheduler,
         .config = scheduler_config,
         .check = scheduler_check},
        {.key = "memory",
         .title = QT_TRANSLATE_NOOP("studio::Lesson", "Memory bands: what accumulation shrinks"),
         .text = QT_TRANSLATE_NOOP("studio::Lesson",
                                   "Memory has four bands: parameters, gradients, optimizer state and activations. "
                                   "Accumulation shrinks only the activations, which grow with the micro-batch; the "
                                   "other three belong to the model and the optimizer. Gradient checkpointing is "
                                   "the second lever: it recomputes each block's activations in backward, for the "
                                   "same losses with less memory, at some cost in speed."),
         .run = LessonRun::Experiment,
         .experiment = Experiment::MemoryLevers,
         .config = memory_config,
         .check = memory_check},
        {.key = "loss_scale",
         .title = QT_TRANSLATE_NOOP("studio::Lesson", "Pitfall: the loss scaler per micro-batch"),
         .text = QT_TRANSLATE_NOOP("studio::Lesson",
                                   "Mixed precision multiplies each micro-batch's loss by a scale S so that small "
                                   "gradients survive; once per window, just before clipping and the step, .grad "
                                   "is divided by S, and an inf or NaN gradient skips that update and halves S. "
                                   "Here S starts at float32's largest, so gradient spikes overflow: the plot "
                                   "shows S per update and a cross where an update was skipped. Unscaling and "
                                   "updating after every micro-batch divides what .grad holds again and again, so "
                                   "each update keeps only its last micro-batch."),
         .run = LessonRun::Experiment,
         .experiment = Experiment::PitfallLossScale,
         .config = loss_scale_config,
         .check = loss_scale_check},
        {.key = "no_sync",
         .title = QT_TRANSLATE_NOOP("studio::Lesson", "Several processes: no_sync"),
         .text = QT_TRANSLATE_NOOP("studio::Lesson",
                                   "Two processes each run micro-batches of 64 and average their gradients: the "
                                   "effective batch is 64 × 4 × 2. Inside no_sync() the gradients add up locally, "
                                   "and one all-reduce per update averages them; syncing after every micro-batch "
                                   "gives the same losses with four times the communication. This is what "
                                   "accelerator.accumulate() is for."),
         .run = LessonRun::Experiment,
         .experiment = Experiment::NoSyncVsSyncEach,
         .config = no_sync_config,
         .check = no_sync_check,
         .measured = no_sync_measured},
    };
    return steps;
}

int lesson_step_index(const QString& key) {
    const auto& steps = lesson_steps();
    for (std::size_t i = 0; i < steps.size(); ++i)
        if (key == QLatin1String(steps[i].key)) return static_cast<int>(i);
    return -1;
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
