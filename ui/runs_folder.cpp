// SPDX-License-Identifier: GPL-3.0-or-later
#include "runs_folder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSettings>
#include <QStandardPaths>
#include <limits>
#include <variant>

#include "accum/metrics_io.h"
#include "accum/run_directory.h"

namespace studio {

namespace {

QSettings studio_settings() { return QSettings(QStringLiteral("AccumulateStudio"), QStringLiteral("accum-studio")); }

const QString kSaveKey = QStringLiteral("runs/save");
const QString kFolderKey = QStringLiteral("runs/folder");

// What metrics.jsonl's end says of a run that wrote no summary.json: its last
// complete step record. Only the file's last part is read (a killed run may end
// in half a line, which is skipped).
std::optional<accum::StepRecord> last_step_in(const QString& metrics_path) {
    QFile file(metrics_path);
    if (!file.open(QIODevice::ReadOnly)) return std::nullopt;
    constexpr qint64 kTail = 64 * 1024; // many records, whatever their kind
    if (file.size() > kTail) file.seek(file.size() - kTail);
    const auto lines = file.readAll().split('\n');
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        const auto line = it->trimmed().toStdString();
        if (line.empty()) continue;
        std::string error;
        const auto record = accum::parse_json_line(line, error);
        if (!record) continue;
        if (const auto* step = std::get_if<accum::StepRecord>(&*record)) return *step;
    }
    return std::nullopt;
}

} // namespace

QString default_runs_folder() {
    return QDir(QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation))
        .filePath(QStringLiteral("accum-studio/runs"));
}

RunsFolderSetting configured_runs_folder() {
    auto settings = studio_settings();
    RunsFolderSetting s;
    s.save = settings.value(kSaveKey, true).toBool();
    s.folder = settings.value(kFolderKey).toString().trimmed();
    if (s.folder.isEmpty()) s.folder = default_runs_folder();
    return s;
}

void set_configured_runs_folder(const RunsFolderSetting& setting) {
    auto settings = studio_settings();
    settings.setValue(kSaveKey, setting.save);
    // The default is kept as "": it follows XDG_DATA_HOME.
    settings.setValue(kFolderKey, setting.folder == default_runs_folder() ? QString() : setting.folder);
}

bool looks_like_run(const QString& dir) {
    const QDir run(dir);
    return QFileInfo(run.filePath(QLatin1String(accum::kRunRecordFile))).isFile() ||
           QFileInfo(run.filePath(QLatin1String(accum::kOlderRunRecordFile))).isFile();
}

QStringList run_directories_in(const QString& folder) {
    QStringList found;
    if (folder.isEmpty()) return found;
    const QDir dir(folder);
    for (const auto& name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        const QDir run(dir.filePath(name));
        for (const char* file : {accum::kRunRecordFile, accum::kOlderRunRecordFile, "metrics.jsonl", "summary.json"})
            if (QFileInfo(run.filePath(QLatin1String(file))).isFile()) {
                found << run.absolutePath();
                break;
            }
    }
    return found;
}

ListedRun read_listed_run(const QString& dir_path) {
    const QDir dir(dir_path);
    ListedRun listed;
    auto& run = listed.run;
    run.label = dir.dirName();
    run.source = dir.absolutePath();
    run.folder = dir.absolutePath();
    QStringList problems;

    // The run's record: accum_config.json, or an older run's config.json unless
    // that is the model's config (written over the record by older engines).
    const QString config_path = QString::fromStdString(accum::run_record_file(dir.absolutePath().toStdString()));
    QFile config_file(config_path);
    const QString config_name = QFileInfo(config_path).fileName();
    if (config_path.isEmpty()) {
        problems << (looks_like_run(dir_path) ? QObject::tr("no accum_config.json, and config.json is the model's: "
                                                            "the run's options are unknown")
                                              : QObject::tr("no accum_config.json"));
    } else if (!config_file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        problems << config_name + QStringLiteral(": ") + config_file.errorString();
    } else {
        std::vector<accum::ConfigProblem> config_problems;
        run.config = accum::from_json_text(config_file.readAll().toStdString(), accum::RunConfig{}, config_problems);
        if (config_problems.empty())
            listed.config_read = true;
        else
            problems << config_name + QStringLiteral(": ") +
                            QString::fromStdString(config_problems.front().to_string());
    }

    QFile summary_file(dir.filePath(QStringLiteral("summary.json")));
    if (summary_file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        std::string error;
        const auto record = accum::parse_json_line(summary_file.readAll().trimmed().toStdString(), error);
        const auto* summary = record ? std::get_if<accum::SummaryRecord>(&*record) : nullptr;
        if (summary) {
            run.summary = *summary;
            run.has_summary = true;
        } else {
            problems << QObject::tr("summary.json: %1")
                            .arg(record ? QObject::tr("not a summary") : QString::fromStdString(error));
        }
    }
    if (!run.has_summary) {
        // Killed or still running: the summary says what the last step said.
        run.summary.status = accum::RunStatus::Stopped;
        run.summary.final_loss = std::numeric_limits<double>::quiet_NaN();
        if (const auto step = last_step_in(dir.filePath(QStringLiteral("metrics.jsonl")))) {
            run.summary.optimizer_steps = step->step;
            run.summary.samples_seen = step->samples_seen;
            run.summary.train_runtime_s = step->elapsed_s;
            run.summary.final_loss = step->loss;
            run.summary.peak_memory_bytes = step->peak_memory_bytes;
            if (step->elapsed_s > 0) run.summary.samples_per_second = double(step->samples_seen) / step->elapsed_s;
        }
    }
    listed.problem = problems.join(QStringLiteral("; "));
    listed.started = run_started(dir_path);
    return listed;
}

QDateTime run_started(const QString& dir_path) {
    // The run writer names a directory after the local time its run started.
    static const QRegularExpression stamp(QStringLiteral("^(\\d{8}-\\d{6})(-\\d+)?$"));
    const QDir dir(dir_path);
    const auto match = stamp.match(dir.dirName());
    if (match.hasMatch()) {
        const auto started = QDateTime::fromString(match.captured(1), QStringLiteral("yyyyMMdd-HHmmss"));
        if (started.isValid()) return started;
    }
    const QFileInfo record(QString::fromStdString(accum::run_record_file(dir.absolutePath().toStdString())));
    const QFileInfo older(dir.filePath(QLatin1String(accum::kOlderRunRecordFile)));
    return (record.exists() ? record : older.exists() ? older : QFileInfo(dir.absolutePath())).lastModified();
}

bool delete_run_directory(const QString& dir, QString* error) {
    if (!looks_like_run(dir)) {
        if (error)
            *error = QObject::tr("%1 holds neither accum_config.json nor config.json: not a run directory, not deleted")
                         .arg(dir);
        return false;
    }
    if (!QDir(dir).removeRecursively()) {
        if (error) *error = QObject::tr("%1 could not be deleted completely").arg(dir);
        return false;
    }
    return true;
}

} // namespace studio
