// SPDX-License-Identifier: GPL-3.0-or-later
#include "file_actions.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QSaveFile>
#include <QStringList>
#include <QTextStream>
#include <vector>

namespace studio {

FileActions::FileActions(FileSurface& surface, FileDialog dialog, QObject* parent)
    : QObject(parent), surface_(surface), dialog_(std::move(dialog)) {}

FileDialog FileActions::modal_dialog(QWidget* parent) {
    return [parent](const FileDialogRequest& r) {
        return r.save ? QFileDialog::getSaveFileName(parent, r.title, r.start, r.filter)
                      : QFileDialog::getOpenFileName(parent, r.title, r.start, r.filter);
    };
}

bool FileActions::save_config(const QString& path, QString* error) const {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
        if (error) *error = file.errorString();
        return false;
    }
    // Where the studio saves runs is its setting, not the experiment's: in
    // accum-run --config, output-dir would be the run's own directory.
    auto config = surface_.form_config();
    config.output_dir.clear();
    file.write(QByteArray::fromStdString(accum::to_json_text(config)));
    return true;
}

bool FileActions::load_config(const QString& path, QString* error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        if (error) *error = file.errorString();
        return false;
    }
    std::vector<accum::ConfigProblem> problems;
    const auto config = accum::from_json_text(file.readAll().toStdString(), accum::RunConfig{}, problems);
    if (!problems.empty()) {
        QStringList lines;
        for (const auto& p : problems) lines << QString::fromStdString(p.to_string());
        if (error) *error = lines.join(QLatin1Char('\n'));
        return false;
    }
    surface_.set_form_config(config);
    return true;
}

bool FileActions::open_lesson(const QString& path, QString* error) {
    auto lesson = read_lesson_file(path, error);
    if (!lesson) return false;
    surface_.start_lesson_file(std::make_shared<const Lesson>(std::move(*lesson)));
    return true;
}

bool FileActions::export_csv(const QString& loss_path, const QString& memory_path, QString* error) const {
    // Both are written aside and put in place once both are whole: a file that
    // cannot be opened or written leaves what was at either path as it was (only
    // the second rename failing after the first leaves the loss file new).
    QSaveFile loss(loss_path), memory(memory_path);
    const auto failed = [error](const QSaveFile& file) {
        if (error) *error = tr("Could not write %1:\n%2").arg(file.fileName(), file.errorString());
        return false;
    };
    for (QSaveFile* file : {&loss, &memory})
        if (!file->open(QIODevice::WriteOnly | QIODevice::Text)) return failed(*file);
    {
        QTextStream loss_out(&loss), memory_out(&memory);
        surface_.write_plot_csv(true, loss_out);
        surface_.write_plot_csv(false, memory_out);
    }
    for (QSaveFile* file : {&loss, &memory})
        if (!file->commit()) return failed(*file);
    return true;
}

void FileActions::save_config_dialog() {
    const auto path = dialog_({true, tr("Save configuration"), QStringLiteral("config.json"), tr("JSON (*.json)")});
    if (path.isEmpty()) return;
    QString error;
    if (!save_config(path, &error))
        surface_.show_warning(tr("Save configuration"), tr("Could not write %1:\n%2").arg(path, error));
}

void FileActions::load_config_dialog() {
    const auto path = dialog_({false, tr("Open configuration"), QString(), tr("JSON (*.json)")});
    if (path.isEmpty()) return;
    QString error;
    if (!load_config(path, &error))
        surface_.show_warning(tr("Open configuration"), tr("Could not read %1:\n%2").arg(path, error));
}

void FileActions::open_lesson_dialog() {
    // The shipped lessons' folder (installed, else the build tree's copy): a
    // teacher's own lessons start as copies of these.
    const auto path = dialog_({false, tr("Open lesson"), lessons_directory(QCoreApplication::applicationDirPath()),
                               tr("Lesson (*.json)")});
    if (!path.isEmpty()) open_lesson_or_warn(path);
}

void FileActions::open_lesson_or_warn(const QString& path) {
    QString error;
    if (!open_lesson(path, &error)) surface_.show_warning(tr("Open lesson"), error);
}

void FileActions::export_plot_dialog(bool loss) {
    const auto path = dialog_({true, loss ? tr("Export loss plot") : tr("Export memory plot"),
                               loss ? QStringLiteral("loss.png") : QStringLiteral("memory.png"),
                               tr("PNG image (*.png);;PDF (*.pdf)")});
    if (path.isEmpty()) return;
    if (!surface_.write_plot_image(loss, path)) surface_.show_warning(tr("Export"), tr("Could not write %1").arg(path));
}

void FileActions::export_csv_dialog() {
    const auto path = dialog_({true, tr("Export data (CSV)"), QStringLiteral("loss.csv"), tr("CSV (*.csv)")});
    if (path.isEmpty()) return;
    const QFileInfo info(path);
    const auto memory_path = info.dir().filePath(info.completeBaseName() + QStringLiteral("-memory.csv"));
    QString error;
    if (!export_csv(path, memory_path, &error))
        surface_.show_warning(tr("Export"), error);
    else
        surface_.show_message(tr("Wrote %1 and %2").arg(path, memory_path), 5000);
}

} // namespace studio
