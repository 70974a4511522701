#include "run_result.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "accum/metrics_io.h"
#include "accum/run_directory.h"

namespace studio {

namespace {
constexpr double nan = std::numeric_limits<double>::quiet_NaN();
}

double RunResult::final_accuracy() const { return evals.empty() ? nan : evals.back().eval_accuracy; }

double RunResult::final_loss() const {
    if (has_summary && std::isfinite(summary.final_loss)) return summary.final_loss;
    return steps.empty() ? nan : steps.back().loss;
}

std::int64_t RunResult::peak_activations_bytes() const {
    std::int64_t peak = 0;
    for (const auto& s : steps) peak = std::max(peak, s.peak_activations_bytes);
    return peak;
}

std::int64_t RunResult::peak_optimizer_step_bytes() const {
    std::int64_t peak = 0;
    for (const auto& s : steps) peak = std::max(peak, s.peak_optimizer_step_bytes);
    return peak;
}

std::int64_t RunResult::static_bytes_at_peak() const {
    // After the first step: before it the optimizer has no state yet. A step's
    // peak is its static part and the larger of its two phases' excess.
    const accum::StepRecord* top = nullptr;
    for (const auto& s : steps)
        if ((s.step > 1 || steps.size() == 1) && (!top || s.peak_activations_bytes > top->peak_activations_bytes))
            top = &s;
    return top ? std::max<std::int64_t>(0, top->peak_memory_bytes - std::max(top->peak_activations_bytes,
                                                                             top->peak_optimizer_step_bytes))
               : 0;
}

void RunResult::note_memory(const accum::MemoryRecord& r) {
    parameters_bytes = std::max(parameters_bytes, r.parameters_bytes);
    gradients_bytes = std::max(gradients_bytes, r.gradients_bytes);
    optimizer_state_bytes = std::max(optimizer_state_bytes, r.optimizer_state_bytes);
}

double max_loss_difference(const RunResult& a, const RunResult& b) {
    std::map<std::int64_t, double> by_step;
    for (const auto& s : a.steps) by_step[s.step] = s.loss;
    double worst = -1.0;
    for (const auto& s : b.steps) {
        const auto it = by_step.find(s.step);
        if (it == by_step.end()) continue;
        const double d = std::abs(it->second - s.loss);
        worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(worst, d);
    }
    return worst < 0 ? nan : worst;
}

double max_pairwise_loss_difference(const std::vector<RunResult>& runs) {
    double worst = nan;
    for (std::size_t i = 0; i < runs.size(); ++i)
        for (std::size_t j = i + 1; j < runs.size(); ++j) {
            const double d = max_loss_difference(runs[i], runs[j]);
            if (!std::isnan(d) && (std::isnan(worst) || d > worst)) worst = d;
        }
    return worst;
}

std::optional<RunResult> load_run_directory(const QString& dir_path, QString* error) {
    const QDir dir(dir_path);
    RunResult run;
    run.label = QFileInfo(dir_path).fileName();
    run.source = dir.absolutePath();
    run.folder = dir.absolutePath();
    bool any = false;

    // The run's record (accum_config.json, or an older run's config.json that is no model's config).
    QFile config_file(QString::fromStdString(accum::run_record_file(dir.absolutePath().toStdString())));
    if (!config_file.fileName().isEmpty() && config_file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        std::vector<accum::ConfigProblem> problems;
        run.config = accum::from_json_text(config_file.readAll().toStdString(), accum::RunConfig{}, problems);
        any = true;
    }
    QFile metrics(dir.filePath(QStringLiteral("metrics.jsonl")));
    if (metrics.open(QIODevice::ReadOnly | QIODevice::Text)) {
        any = true;
        while (!metrics.atEnd()) {
            const auto line = metrics.readLine().trimmed().toStdString();
            if (line.empty()) continue;
            std::string parse_error;
            const auto record = accum::parse_json_line(line, parse_error);
            if (!record) continue;
            if (const auto* s = std::get_if<accum::StepRecord>(&*record)) run.steps.push_back(*s);
            else if (const auto* e = std::get_if<accum::EvalRecord>(&*record)) run.evals.push_back(*e);
            else if (const auto* m = std::get_if<accum::MemoryRecord>(&*record)) run.note_memory(*m);
            else if (const auto* m = std::get_if<accum::SummaryRecord>(&*record)) {
                run.summary = *m;
                run.has_summary = true;
            }
        }
    }
    if (!any) {
        if (error) *error = QObject::tr("%1 holds neither accum_config.json nor metrics.jsonl").arg(dir_path);
        return std::nullopt;
    }
    if (!run.has_summary && !run.steps.empty()) {
        run.summary.status = accum::RunStatus::Stopped;
        run.summary.optimizer_steps = run.steps.back().step;
        run.summary.samples_seen = run.steps.back().samples_seen;
        run.summary.train_runtime_s = run.steps.back().elapsed_s;
        run.summary.final_loss = run.steps.back().loss;
    }
    return run;
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
