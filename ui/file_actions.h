// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the studio reads and writes from the File menu: configurations (Open,
// Save), lesson files (Open lesson…), the plots as images and their data as
// CSV. It works through FileSurface (the window, or a test's fake) and a file
// dialog given as a function, so it is tested with no window and no modal
// dialog (tests/ui/test_file_actions.cpp). A file that cannot be read or
// written changes nothing, and the warning names it with the reason.

#include <QObject>
#include <QString>
#include <functional>
#include <memory>

#include "accum/run_config.h"
#include "lesson.h"

class QTextStream;
class QWidget;

namespace studio {

// What the file actions drive: the window gives its form and plots, a test a fake.
class FileSurface {
public:
    virtual ~FileSurface() = default;
    virtual accum::RunConfig form_config() const = 0;
    virtual void set_form_config(const accum::RunConfig& config) = 0;
    // The lesson's bar walks `lesson` from its first step.
    virtual void start_lesson_file(std::shared_ptr<const Lesson> lesson) = 0;
    // The loss plot (`loss`) or the memory plot: as an image (.pdf or PNG), or its data as CSV.
    virtual bool write_plot_image(bool loss, const QString& path) const = 0;
    virtual void write_plot_csv(bool loss, QTextStream& out) const = 0;
    virtual void show_warning(const QString& title, const QString& text) = 0;
    virtual void show_message(const QString& text, int timeout_ms) = 0; // the status bar's, for a while
};

// A file dialog's question; the answer is the chosen path, empty when cancelled.
struct FileDialogRequest {
    bool save = false;
    QString title;
    QString start; // a file name (save) or a folder (open)
    QString filter;
};
using FileDialog = std::function<QString(const FileDialogRequest&)>;

class FileActions : public QObject {
    Q_OBJECT
public:
    FileActions(FileSurface& surface, FileDialog dialog, QObject* parent = nullptr);
    // QFileDialog's modal dialogs over `parent`: what the window uses.
    static FileDialog modal_dialog(QWidget* parent);

    // The form's configuration as JSON (without the output folder, the studio's
    // own setting). False with the file's `error` when it cannot be written.
    bool save_config(const QString& path, QString* error = nullptr) const;
    // A configuration file into the form. A file that cannot be read, or has a
    // problem (each on its line in `error`), leaves the form as it was.
    bool load_config(const QString& path, QString* error = nullptr);
    // A lesson file: the lesson's bar walks it from its first step. A bad file
    // changes nothing and `error` names its line and field (lesson.h).
    bool open_lesson(const QString& path, QString* error = nullptr);
    // The loss plot's data into `loss_path`, the memory plot's into `memory_path`;
    // false with `error` naming the file and why when either cannot be written.
    bool export_csv(const QString& loss_path, const QString& memory_path, QString* error = nullptr) const;

    // The File menu: a dialog asks for the file, then the above; a failure is a warning.
    void save_config_dialog();
    void load_config_dialog();
    void open_lesson_dialog();
    // Opens the lesson file at `path`; a file that cannot be read is named in a warning.
    void open_lesson_or_warn(const QString& path);
    void export_plot_dialog(bool loss);
    void export_csv_dialog();

private:
    FileSurface& surface_;
    FileDialog dialog_;
};

} // namespace studio
