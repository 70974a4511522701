// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The folder the studio saves its runs in (each run a directory of its own:
// accum_config.json, metrics.jsonl, summary.json), the setting that names it, and
// reading what a run directory holds without widgets. Listing reads only the
// small files (the run's record, summary.json, the end of metrics.jsonl); the curves
// are read when a run is shown (load_run_directory).

#include <QDateTime>
#include <QString>
#include <QStringList>

#include "run_result.h"

namespace studio {

// $XDG_DATA_HOME/accum-studio/runs (~/.local/share/accum-studio/runs on Linux):
// where runs go unless the person chose another folder or none.
QString default_runs_folder();

// The setting: whether runs are saved, and where. Unset, runs are saved in
// default_runs_folder(); the folder is kept while saving is off.
struct RunsFolderSetting {
    bool save = true;
    QString folder;
};
RunsFolderSetting configured_runs_folder();
void set_configured_runs_folder(const RunsFolderSetting& setting);

// One run directory as the Runs tab lists it.
struct ListedRun {
    RunResult run;         // config and summary; no curves yet (steps empty)
    QDateTime started;     // from the directory's name (20261201-101530), else its record's time
    bool config_read = false;
    // Why the run is damaged ("" when it is not): the file and what is wrong with it.
    QString problem;
};

// Whether `dir` looks like a run directory: it holds accum_config.json (the
// run's record) or config.json (an older run's). Only such directories are ever deleted.
bool looks_like_run(const QString& dir);
// The run directories directly in `folder` (those holding accum_config.json,
// config.json, metrics.jsonl or summary.json), oldest name first.
QStringList run_directories_in(const QString& folder);
// Reads the small files of one run directory; never fails: what cannot be read
// is said in `problem`. The run's options are its record's (accum::run_record_file:
// accum_config.json, else an older run's config.json unless that is a model's).
// A run without summary.json (killed, or still running)
// has has_summary false and its last step's loss as final loss.
ListedRun read_listed_run(const QString& dir);
// When the run of `dir` started: from the directory's name (20261201-101530, as
// the run writer names it), else its record's time.
QDateTime run_started(const QString& dir);
// Removes a run directory and everything in it, after checking it looks like a
// run (looks_like_run). False, with `error` naming the directory, otherwise.
bool delete_run_directory(const QString& dir, QString* error);

} // namespace studio
