// SPDX-License-Identifier: GPL-3.0-or-later
#include "lesson.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QStringList>
#include <algorithm>
#include <cmath>

#include "engine_text.h"
#include "lesson_reader.h"
#include "lab_stats.h" // the lab's measures of a run: format_bytes, allreduces_per_update…
#include "lab_verdict.h"
#include "link_curve.h"
#include "noise_scale.h"

namespace studio {

namespace {

// The checks' sentences, in the translation context "studio::Lesson".
class Tr {
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
            return {false, Tr::tr("Run “%1” did not complete: %2.")
                               .arg(r.label, r.has_summary ? run_status_text(r.summary.status) : Tr::tr("no summary"))};
    return {false, Tr::tr("Nothing ran.")};
}

// ------------------------------------------------------------- the checks

LessonVerdict problem_check(const std::vector<RunResult>& runs, const CheckParameters&) {
    if (runs.size() != 1 || !runs[0].has_summary) return {false, Tr::tr("Nothing ran.")};
    const auto& r = runs[0];
    if (r.summary.status != accum::RunStatus::OutOfMemory)
        return {false, Tr::tr("Expected out of memory, but the run ended: %1.").arg(run_status_text(r.summary.status))};
    const auto budget = accum::parse_byte_size(r.config.memory_budget).value_or(0);
    QString text = Tr::tr("Out of memory at micro-batch %1 × %2 under the %3 budget.")
                       .arg(r.config.batch_size)
                       .arg(r.config.accumulation_steps)
                       .arg(QString::fromStdString(accum::format_byte_size(budget)));
    if (r.summary.suggested_batch_size > 0 && r.summary.suggested_accumulation_steps > 0)
        text += QLatin1Char(' ') + (r.summary.suggested_gradient_checkpointing
                                        ? Tr::tr("The engine suggests %1 × %2 with gradient checkpointing: the "
                                                     "same %3 samples per update.")
                                        : Tr::tr("The engine suggests %1 × %2: the same %3 samples per update."))
                                       .arg(r.summary.suggested_batch_size)
                                       .arg(r.summary.suggested_accumulation_steps)
                                       .arg(r.summary.suggested_batch_size * r.summary.suggested_accumulation_steps);
    return {true, text};
}

LessonVerdict mechanism_check(const std::vector<RunResult>& runs, const CheckParameters&) {
    if (!all_completed(runs) || runs.size() != 1) return not_completed(runs);
    const auto& r = runs[0];
    const auto k = r.config.accumulation_steps;
    const bool ok = r.summary.optimizer_steps > 0 && r.summary.micro_steps == k * r.summary.optimizer_steps;
    return {ok, Tr::tr("%1 micro-batches, %2 updates: the optimizer stepped once every %3 micro-batches, after "
                   "their gradients had added up.")
                    .arg(r.summary.micro_steps)
                    .arg(r.summary.optimizer_steps)
                    .arg(k)};
}

LessonVerdict proof_check(const std::vector<RunResult>& runs, const CheckParameters& p) {
    if (!all_completed(runs) || runs.size() < 2) return not_completed(runs);
    const double worst = max_pairwise_loss_difference(runs);
    QStringList peaks;
    bool falling = true;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        peaks << format_bytes(runs[i].summary.peak_memory_bytes);
        if (i > 0 && runs[i].summary.peak_memory_bytes >= runs[i - 1].summary.peak_memory_bytes) falling = false;
    }
    const bool ok = worst <= p.at("tolerance") && falling;
    return {ok, LabVerdict::losses(worst) + QLatin1Char(' ') +
                    Tr::tr("Peak memory %1.").arg(peaks.join(QStringLiteral(" → ")))};
}

LessonVerdict styles_check(const std::vector<RunResult>& runs, const CheckParameters& p) {
    if (!all_completed(runs) || runs.size() != 3) return not_completed(runs);
    const double worst = max_pairwise_loss_difference(runs);
    return {worst <= p.at("tolerance"),
            Tr::tr("Largest |Δ loss| between the three styles: %1 (≤ 1e-5). One idea, three spellings.")
                .arg(delta_text(worst))};
}

// What no_sync saves between two hosts, as bench/two_hosts_bench.py measured it.
QString no_sync_measured() {
    const auto curve = measured_link_curve();
    return curve ? link_curve_sentence(*curve) : QString();
}

LessonVerdict no_sync_check(const std::vector<RunResult>& runs, const CheckParameters& p) {
    if (!all_completed(runs) || runs.size() != 2) return not_completed(runs);
    const double d = max_loss_difference(runs[0], runs[1]);
    const double once = allreduces_per_update(runs[0]), each = allreduces_per_update(runs[1]);
    const auto k = static_cast<double>(runs[1].config.accumulation_steps);
    return {d <= p.at("tolerance") && once == 1.0 && each == k,
            LabVerdict::losses(d) + QLatin1Char(' ') +
                Tr::tr("All-reduces per update: %1 with no_sync, %2 syncing every micro-batch; time per update "
                       "%3 ms vs %4 ms.")
                    .arg(once, 0, 'g', 3)
                    .arg(each, 0, 'g', 3)
                    .arg(1000.0 * seconds_per_update(runs[0]), 0, 'f', 1)
                    .arg(1000.0 * seconds_per_update(runs[1]), 0, 'f', 1)};
}

LessonVerdict tokens_check(const std::vector<RunResult>& runs, const CheckParameters& p) {
    if (!all_completed(runs) || runs.size() != 3) return not_completed(runs);
    const double wrong = max_loss_difference(runs[0], runs[1]);
    const double right = max_loss_difference(runs[0], runs[2]);
    return {wrong >= p.at("visible") && right <= p.at("tolerance"),
            Tr::tr("Mean per micro-batch: |Δ loss| up to %1, visibly off. Normalised by the window's tokens: %2, "
               "the big batch's curve.")
                .arg(delta_text(wrong), delta_text(right))};
}

LessonVerdict batchnorm_check(const std::vector<RunResult>& runs, const CheckParameters& p) {
    if (!all_completed(runs) || runs.size() != 2) return not_completed(runs);
    const double d = max_loss_difference(runs[0], runs[1]);
    return {d >= p.at("visible"),
            Tr::tr("With BatchNorm, %1 accumulated leaves one batch of %2 by up to %3 in loss.")
                .arg(QStringLiteral("%1 × %2").arg(runs[1].config.batch_size).arg(runs[1].config.accumulation_steps))
                .arg(runs[0].config.batch_size)
                .arg(delta_text(d))};
}

LessonVerdict scheduler_check(const std::vector<RunResult>& runs, const CheckParameters&) {
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
    return {ok, Tr::tr("Stepped per micro-batch, the learning rate is 0 from update %1 of %2; stepped per update, it "
                   "is still %3 at the last one.")
                    .arg(from)
                    .arg(n)
                    .arg(right.back().learning_rate, 0, 'g', 2)};
}

LessonVerdict loss_scale_check(const std::vector<RunResult>& runs, const CheckParameters& p) {
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
    const bool ok = skipped >= 1 && halved_once && d >= p.at("visible");
    return {ok, Tr::tr("Once per window, the scaler skipped %1 of %2 updates for overflow and halved S once for "
                           "each (%3 → %4). Per micro-batch, each update kept about its last micro-batch's "
                           "gradient: |Δ loss| up to %5.")
                    .arg(skipped)
                    .arg(right.size())
                    .arg(right.front().loss_scale, 0, 'g', 2)
                    .arg(right.back().loss_scale, 0, 'g', 2)
                    .arg(delta_text(d))};
}

LessonVerdict memory_check(const std::vector<RunResult>& runs, const CheckParameters& p) {
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
    const bool ok = worst <= p.at("tolerance") && same_fixed && activations[1] < activations[0] &&
                    activations[2] < activations[0] && activations[3] < activations[1];
    return {ok, Tr::tr("Largest |Δ loss| %1. Peak activations %2 at 256 × 1, %3 at 64 × 4; with checkpointing "
                   "%4 and %5. Parameters, gradients and optimizer state: %6 in all four.")
                    .arg(delta_text(worst), format_bytes(activations[0]), format_bytes(activations[1]),
                         format_bytes(activations[2]), format_bytes(activations[3]),
                         same_fixed ? format_bytes(fixed[0]) : Tr::tr("not the same (%1 → %2)")
                                                                   .arg(format_bytes(fixed[0]), format_bytes(fixed[3])))};
}

// Two effective batches on the same samples (the noise-scale experiment): the big
// one took fewer steps, saw no fewer samples and got no further on them; the
// noise scale the runs measured (compare_noise_runs) lies at least `margin`
// above the small batch and below the big one.
LessonVerdict noise_scale_check(const std::vector<RunResult>& runs, const CheckParameters& p) {
    if (!all_completed(runs) || runs.size() != 2) return not_completed(runs);
    const auto c = compare_noise_runs(runs[0], runs[1]);
    const double margin = p.at("margin");
    const bool apart = noise_scale_known(c.noise_scale) && c.effective_small * margin <= c.noise_scale &&
                       c.noise_scale * margin <= c.effective_big;
    const bool ok = c.valid && c.samples_small == c.samples_big && c.steps_big < c.steps_small && apart &&
                    c.tail_loss_small <= c.tail_loss_big;
    return {ok, noise_comparison_text(c)};
}

// The Trainer's log: the run completed and evaluated at least `evaluations`
// times, each later in the epochs than the one before.
LessonVerdict eval_log_check(const std::vector<RunResult>& runs, const CheckParameters& p) {
    if (!all_completed(runs) || runs.size() != 1) return not_completed(runs);
    const auto& evals = runs[0].evals;
    bool rising = true;
    QStringList lines;
    for (std::size_t i = 0; i < evals.size(); ++i) {
        if (i > 0 && evals[i].epoch <= evals[i - 1].epoch) rising = false;
        lines << Tr::tr("epoch %1: eval loss %2, accuracy %3")
                     .arg(evals[i].epoch, 0, 'f', 2)
                     .arg(evals[i].eval_loss, 0, 'f', 4)
                     .arg(evals[i].eval_accuracy, 0, 'f', 3);
    }
    const bool finite =
        std::all_of(evals.begin(), evals.end(), [](const auto& e) { return std::isfinite(e.eval_loss); });
    const bool ok = rising && finite && double(evals.size()) >= p.at("evaluations");
    return {ok, Tr::tr("%1 updates; the Trainer's log: %2.")
                    .arg(runs[0].summary.optimizer_steps)
                    .arg(lines.isEmpty() ? Tr::tr("no evaluation") : lines.join(QStringLiteral("; ")))};
}

} // namespace

const std::vector<CheckKind>& check_kinds() {
    static const std::vector<CheckKind> kinds = {
        {"out-of-memory", {}, problem_check},
        {"accumulates", {}, mechanism_check},
        {"same-loss-less-memory", {{"tolerance", kSameLossTolerance}}, proof_check},
        {"same-loss", {{"tolerance", kSameLossTolerance}}, styles_check},
        {"token-loss-visible", {{"visible", kVisibleTokenDifference}, {"tolerance", kSameLossTolerance}}, tokens_check},
        {"batchnorm-visible", {{"visible", kVisibleBatchNormDifference}}, batchnorm_check},
        {"scheduler-per-micro-batch", {}, scheduler_check},
        {"memory-levers", {{"tolerance", kSameLossTolerance}}, memory_check},
        {"loss-scale-per-micro-batch", {{"visible", kVisibleLossScaleDifference}}, loss_scale_check},
        {"no-sync", {{"tolerance", kSameLossTolerance}}, no_sync_check},
        {"eval-log", {{"evaluations", 1.0}}, eval_log_check},
        {"noise-scale-steps", {{"margin", kNoiseScaleCheckMargin}}, noise_scale_check},
    };
    return kinds;
}

const std::vector<std::pair<const char*, QString (*)()>>& measured_kinds() {
    static const std::vector<std::pair<const char*, QString (*)()>> kinds = {
        {"two-hosts-link-curve", no_sync_measured},
    };
    return kinds;
}

std::optional<Lesson> parse_lesson(const QByteArray& text, const QString& name, QString* error) {
    return parse_lesson_with(text, name, {check_kinds(), measured_kinds()}, error);
}

std::optional<Lesson> read_lesson_file(const QString& path, QString* error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error) *error = QStringLiteral("%1: %2").arg(path, file.errorString());
        return std::nullopt;
    }
    return parse_lesson(file.readAll(), path, error);
}

QString interface_language() {
    // Translated as the code of the translation's language: what is installed now.
    return QCoreApplication::translate("studio::Lesson", "en", "the code of this translation's language");
}

QString LessonText::in(const QString& language) const {
    for (const auto& [code, text] : by_language)
        if (code == language) return text;
    for (const auto& [code, text] : by_language)
        if (code == QLatin1String("en")) return text;
    return by_language.empty() ? QString() : by_language.front().second;
}

QString LessonStep::title_text() const { return title.in(interface_language()); }
QString LessonStep::body_text() const {
    QString body = text.in(interface_language());
    if (measured)
        if (const QString figures = measured(); !figures.isEmpty()) body += QLatin1Char(' ') + figures;
    return body;
}

int Lesson::step_index(const QString& key) const {
    for (std::size_t i = 0; i < steps.size(); ++i)
        if (key == QLatin1String(steps[i].key)) return static_cast<int>(i);
    return -1;
}

QStringList shipped_lessons() { return {QStringLiteral(":/lessons/gradient-accumulation.json"), chapter_lesson()}; }

QString lessons_directory(const QString& program_directory) {
    const QString dir = QDir::cleanPath(program_directory + QLatin1Char('/') + QStringLiteral(ACCUM_LESSONS_RELATIVE_DIR));
    return QDir(dir).exists() ? dir : QString();
}

QString chapter_lesson() { return QStringLiteral(":/lessons/chapter-text-classifier.json"); }

std::shared_ptr<const Lesson> builtin_lesson_shared() {
    static const std::shared_ptr<const Lesson> lesson = [] {
        QString error;
        auto read = read_lesson_file(shipped_lessons().front(), &error);
        // Compiled in and read by the tests: a refusal here is a build's mistake.
        if (!read) qFatal("the built-in lesson: %s", qPrintable(error));
        return std::make_shared<const Lesson>(std::move(*read));
    }();
    return lesson;
}

const Lesson& builtin_lesson() { return *builtin_lesson_shared(); }

const std::vector<LessonStep>& lesson_steps() { return builtin_lesson().steps; }

int lesson_step_index(const QString& key) { return builtin_lesson().step_index(key); }

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
