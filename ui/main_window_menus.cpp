// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow's menus and toolbar actions: File, Run, Lab, View, Settings (the
// language, switched live) and Help; each text set again on a change of language.
#include "main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QStyle>
#include <QToolBar>

#include "language.h"
#include "lesson_panel.h"
#include "shortcuts.h"

namespace studio {

void MainWindow::build_actions() {
    auto* style = QApplication::style();
    run_action_ = new QAction(style->standardIcon(QStyle::SP_MediaPlay), QString(), this);
    run_action_->setObjectName(QStringLiteral("run_action"));
    run_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    pause_action_ = new QAction(style->standardIcon(QStyle::SP_MediaPause), QString(), this);
    pause_action_->setObjectName(QStringLiteral("pause_action"));
    pause_action_->setShortcut(QKeySequence(Qt::Key_Space));
    stop_action_ = new QAction(style->standardIcon(QStyle::SP_MediaStop), QString(), this);
    stop_action_->setObjectName(QStringLiteral("stop_action"));
    stop_action_->setShortcut(QKeySequence(Qt::Key_Escape));
    step_action_ = new QAction(style->standardIcon(QStyle::SP_MediaSkipForward), QString(), this);
    step_action_->setObjectName(QStringLiteral("step_action"));
    step_action_->setShortcut(QKeySequence(Qt::Key_F10));
    texts_.add([this] {
        run_action_->setText(tr("&Run"));
        run_action_->setToolTip(tr("Start the run (Ctrl+R)"));
        pause_action_->setToolTip(tr("Pause or resume at the next micro-batch (Space)")); // its text: update_actions()
        stop_action_->setText(tr("&Stop"));
        stop_action_->setToolTip(tr("Stop at the next micro-batch (Esc)"));
        step_action_->setText(tr("Step one micro-batch"));
        step_action_->setToolTip(tr("While paused: run exactly one more micro-batch (F10)"));
    });
    connect(step_action_, &QAction::triggered, this, &MainWindow::step_once);
    connect(run_action_, &QAction::triggered, this, &MainWindow::start_run);
    connect(pause_action_, &QAction::triggered, this, &MainWindow::toggle_pause);
    connect(stop_action_, &QAction::triggered, this, &MainWindow::stop_run);

    auto* toolbar = toolbar_ = addToolBar(QString());
    texts_.add([toolbar] { toolbar->setWindowTitle(tr("Run")); });
    toolbar->setObjectName(QStringLiteral("run_toolbar"));
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolbar->setMovable(false);
    toolbar->addAction(run_action_);
    toolbar->addAction(pause_action_);
    toolbar->addAction(stop_action_);
    toolbar->addAction(step_action_);
    // Presentation mode folds the configuration panel into this line; the button
    // unfolds it for a change.
    show_config_action_ = new QAction(style->standardIcon(QStyle::SP_FileDialogDetailedView), QString(), this);
    show_config_action_->setObjectName(QStringLiteral("show_config_action"));
    show_config_action_->setCheckable(true);
    texts_.add([this] {
        show_config_action_->setText(tr("Configuration"));
        show_config_action_->setToolTip(tr("Show or hide the configuration panel"));
    });
    connect(show_config_action_, &QAction::toggled, this, [this](bool on) { config_column_->setVisible(on); });
    config_summary_ = new QLabel;
    config_summary_->setObjectName(QStringLiteral("config_summary"));
    QFont bold; // bold only: the size follows the window's font
    bold.setBold(true);
    config_summary_->setFont(bold);
    QPalette summary_palette;
    summary_palette.setColor(QPalette::WindowText, QColor(0x1f4e99));
    config_summary_->setPalette(summary_palette);
    config_summary_->setIndent(12);
    config_summary_->setMinimumWidth(1); // the toolbar gives it what the actions leave
    config_summary_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    config_summary_->installEventFilter(this);
    toolbar->addSeparator();
    toolbar->addAction(show_config_action_);
    config_summary_action_ = toolbar->addWidget(config_summary_);
    show_config_action_->setVisible(false);
    config_summary_action_->setVisible(false);

    auto* file = menuBar()->addMenu(QString());
    auto* open = file->addAction(QString(), QKeySequence::Open, file_actions_, &FileActions::load_config_dialog);
    auto* save = file->addAction(QString(), QKeySequence::Save, file_actions_, &FileActions::save_config_dialog);
    auto* open_lesson = file->addAction(QString(), file_actions_, &FileActions::open_lesson_dialog);
    open_lesson->setObjectName(QStringLiteral("open_lesson_action"));
    file->addSeparator();
    auto* export_loss = file->addAction(QString(), this, [this] { file_actions_->export_plot_dialog(true); });
    auto* export_memory = file->addAction(QString(), this, [this] { file_actions_->export_plot_dialog(false); });
    auto* export_csv = file->addAction(QString(), file_actions_, &FileActions::export_csv_dialog);
    file->addSeparator();
    auto* quit = file->addAction(QString(), QKeySequence::Quit, this, &QWidget::close);
    texts_.add([=] {
        file->setTitle(tr("&File"));
        open->setText(tr("&Open configuration…"));
        save->setText(tr("&Save configuration…"));
        open_lesson->setText(tr("Open &lesson…"));
        export_loss->setText(tr("Export loss plot (PNG/PDF)…"));
        export_memory->setText(tr("Export memory plot (PNG/PDF)…"));
        export_csv->setText(tr("Export data (CSV)…"));
        quit->setText(tr("&Quit"));
    });
    auto* run = menuBar()->addMenu(QString());
    texts_.add([run] { run->setTitle(tr("&Run")); });
    run->addAction(run_action_);
    run->addAction(pause_action_);
    run->addAction(stop_action_);
    run->addAction(step_action_);
    auto* lab = menuBar()->addMenu(QString());
    auto* lesson = lab->addAction(QString(), this, [this] {
        // The built-in lesson, after a lesson file too (File › Open lesson…).
        if (&lesson_panel_->lesson() != &builtin_lesson()) lesson_panel_->set_lesson(builtin_lesson_shared());
        start_lesson(0);
    });
    lesson->setObjectName(QStringLiteral("lesson_action"));
    // The chapter's own lesson (a text classifier in three APIs), shipped as a file.
    auto* chapter = lab->addAction(QString(), this, [this] { file_actions_->open_lesson_or_warn(chapter_lesson()); });
    chapter->setObjectName(QStringLiteral("chapter_lesson_action"));
    texts_.add([lab, lesson, chapter] {
        lab->setTitle(tr("&Lab"));
        lesson->setText(tr("&Lesson"));
        lesson->setToolTip(tr("The chapter on gradient accumulation, step by step"));
        chapter->setText(tr("&Chapter lesson: a text classifier"));
        chapter->setToolTip(tr("The chapter's lesson: one text classifier trained with the PyTorch loop, "
                               "Accelerate and the Trainer"));
    });
    // The experiments by group, a separator before each, in the table's order.
    for (const auto group : {ExperimentGroup::Equivalence, ExperimentGroup::Pitfall, ExperimentGroup::Batch}) {
        lab->addSeparator();
        for (const auto& info : experiments()) {
            if (info.group != group) continue;
            auto* action = lab->addAction(QString(), this, [this, e = info.experiment] { run_experiment(e); });
            action->setObjectName(info.object_name() + QStringLiteral("_action"));
            texts_.add([action, &info] {
                action->setText(info.menu_title_text());
                action->setToolTip(info.tooltip_text());
            });
            experiment_actions_.push_back(action);
        }
    }
    auto* view = menuBar()->addMenu(QString());
    presentation_action_ = view->addAction(QString());
    presentation_action_->setObjectName(QStringLiteral("presentation_action"));
    presentation_action_->setCheckable(true);
    presentation_action_->setShortcut(QKeySequence(Qt::Key_F11));
    texts_.add([this, view] {
        view->setTitle(tr("&View"));
        presentation_action_->setText(tr("&Presentation"));
        presentation_action_->setToolTip(tr("Large text and lines, the configuration in one line, full screen (F11)"));
    });
    connect(presentation_action_, &QAction::toggled, this, &MainWindow::set_presentation_mode);
    build_language_menu();
    build_help_menu();
}

void MainWindow::build_language_menu() {
    auto* settings_menu = menuBar()->addMenu(QString());
    reset_defaults_action_ = settings_menu->addAction(QString(), this, &MainWindow::reset_to_defaults);
    reset_defaults_action_->setObjectName(QStringLiteral("reset_defaults_action"));
    undo_reset_action_ = settings_menu->addAction(QString(), this, &MainWindow::undo_reset);
    undo_reset_action_->setObjectName(QStringLiteral("undo_reset_action"));
    undo_reset_action_->setEnabled(false);
    undo_reset_button_ = new QPushButton;
    undo_reset_button_->setObjectName(QStringLiteral("undo_reset_button"));
    connect(undo_reset_button_, &QPushButton::clicked, this, &MainWindow::undo_reset);
    statusBar()->addPermanentWidget(undo_reset_button_);
    undo_reset_button_->hide();
    settings_menu->addSeparator();
    auto* language_menu = settings_menu->addMenu(QString());
    language_menu->setObjectName(QStringLiteral("language_menu"));
    texts_.add([=, this] {
        settings_menu->setTitle(tr("Se&ttings"));
        reset_defaults_action_->setText(tr("&Reset to defaults"));
        reset_defaults_action_->setToolTip(tr("Set every field of the configuration to its default (Undo brings them back)"));
        undo_reset_action_->setText(tr("&Undo reset to defaults"));
        undo_reset_button_->setText(tr("Undo"));
        undo_reset_button_->setToolTip(tr("Bring back the configuration from before Reset to defaults"));
        language_menu->setTitle(tr("&Language"));
    });
    auto* group = new QActionGroup(this);
    const auto current = current_language();
    for (const auto& [code, name] : available_languages()) {
        auto* action = language_menu->addAction(name);
        action->setObjectName(QStringLiteral("language_") + code);
        action->setCheckable(true);
        action->setChecked(code == current);
        action->setData(code);
        group->addAction(action);
        // The switch is live: every widget sets its texts again (changeEvent), and
        // the choice is kept for the next start.
        connect(action, &QAction::triggered, this, [this, code = code, action] {
            if (code == current_language()) return;
            if (!install_translators(*QCoreApplication::instance(), code)) {
                const auto why = tr("No translation for %1 in %2").arg(action->text(), translations_directory());
                statusBar()->showMessage(why, 10000);
                QMessageBox::warning(this, tr("Language"), why);
                for (auto* other : action->actionGroup()->actions())
                    other->setChecked(other->data().toString() == current_language());
                return;
            }
            set_configured_language(code);
        });
    }
}

void MainWindow::build_help_menu() {
    auto* help = menuBar()->addMenu(QString());
    auto* shortcuts = help->addAction(QString(), this, [this] {
        auto* dialog = make_shortcuts_dialog(this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->open();
    });
    shortcuts->setObjectName(QStringLiteral("shortcuts_action"));
    shortcuts->setShortcut(QKeySequence(Qt::Key_F1));
    texts_.add([help, shortcuts] {
        help->setTitle(tr("&Help"));
        shortcuts->setText(tr("&Keyboard shortcuts…"));
        shortcuts->setToolTip(tr("Every key of the studio, read from its menus and buttons (F1)"));
    });
}

} // namespace studio
