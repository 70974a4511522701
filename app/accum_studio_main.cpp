// accum-studio: the Qt front end. Thin: the window lives in ui/.
//
//   accum-studio [options] [RUN_DIR...]   RUN_DIR: accum-run output directories,
//                                         opened in the Runs tab
//   --config FILE       load a configuration (the JSON accum-run --config reads)
//   --demo NAME         start a demo: code-panel, or a lab experiment by its id
//                       (ui/experiments.h); --help lists them. A demo runs on its own
//                       configuration (the defaults, or --config FILE's), not the saved one
//   --language CODE     en or vi for this session (the setting is under Settings › Language)
//   --lesson            open the guided lesson (Lab › Lesson) at its first step
//   --lesson-file FILE  open a lesson file (File › Open lesson…, docs/lessons.md) at its first step
//   --presentation      start in presentation mode (View › Presentation, F11)
// Hidden options for demos and screenshots:
//   --autorun           start the run as soon as the window is shown
//   --screenshot FILE   grab the window to FILE (PNG) when the run ends
//                       (with --demo: when the lab experiment ends)
//   --quit-after-run    quit when the run ends
//   --screenshot-after MS  grab the window MS milliseconds after start (then quit)
//   --screenshot-at-point N  grab to --screenshot FILE once the loss plot has N
//                       micro-batch points, and go on (instead of the grab at the run's end)
//   --event-loop-probe FILE  the event loop's lateness, for bench/ (event_loop_probe.h)
//   --build-up-lines N  the code panel's build-up with its first N lines shown
//   --lesson-step STEP  open the lesson at step STEP (1-based, or a name: problem, proof, tokens…);
//                       with --screenshot: grab when the step's run ends

#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QIcon>
#include <QTabWidget>
#include <QThreadPool>
#include <QTimer>
#include <cstdio>

#include "accum/records.h"
#include "code_panel.h"
#include "config_panel.h"
#include "event_loop_probe.h"
#include "language.h"
#include "lesson.h"
#include "lesson_panel.h"
#include "loss_plot.h"
#include "main_window.h"
#include "runs_panel.h"
#include "runner/cli_docs.h"

namespace {

std::string text(const QString& s) { return s.toStdString(); }

// The studio's command line as the manual page describes it: the options the
// parser reads, less the hidden ones (a build step writes the page with
// --manual-page; resources/CMakeLists.txt).
accum::cli::ProgramDoc studio_doc(const QCommandLineParser& parser, const QList<QCommandLineOption>& options,
                                  const QString& positional, const QString& positional_syntax,
                                  const QString& positional_help) {
    accum::cli::ProgramDoc doc;
    doc.name = "accum-studio";
    doc.summary = "a desktop studio for gradient accumulation";
    doc.synopsis = {"[options] " + text(positional_syntax)};
    for (const QString& paragraph : parser.applicationDescription().split(QStringLiteral("\n\n")))
        doc.description.push_back(text(QString(paragraph).replace('\n', ' ')));
    accum::cli::OptionSection section{"Options", "", {}};
    for (const QCommandLineOption& o : options) {
        if (o.flags() & QCommandLineOption::HiddenFromHelp) continue;
        accum::cli::OptionDoc entry;
        for (const QString& name : o.names()) entry.names.push_back(text(name));
        entry.metavar = text(o.valueName());
        entry.help = text(o.description());
        if (o.valueName() == QLatin1String("FILE")) entry.complete = accum::cli::OptionDoc::Complete::File;
        section.options.push_back(std::move(entry));
    }
    accum::cli::OptionDoc run_dirs;
    run_dirs.metavar = text(positional);
    run_dirs.help = text(positional_help);
    doc.sections = {section, {"Arguments", "", {run_dirs}}};
    doc.exit_codes = {{0, "the window was closed"},
                      {1, "an unknown option, or an option without its value (Qt's parser)"},
                      {2, "a value or a run directory that cannot be used; the message on stderr names it"}};
    return doc;
}

// The window as a picture into `file` (none when it is empty); a file that
// cannot be written is said, and the run goes on.
void save_grab(QWidget& window, const QString& file) {
    if (!file.isEmpty() && !window.grab().save(file))
        std::fprintf(stderr, "accum-studio: could not write %s\n", qPrintable(file));
}

} // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("AccumulateStudio"));
    QApplication::setApplicationName(QStringLiteral("accum-studio"));
    QApplication::setApplicationDisplayName(QStringLiteral("Accumulate Studio"));
    QApplication::setApplicationVersion(QStringLiteral(ACCUM_VERSION));
    // The desktop entry and the icon share the application's id.
    QGuiApplication::setDesktopFileName(QStringLiteral(ACCUM_APP_ID));
    QIcon icon; // the installed theme's, else the built-in copies (a studio run from the build tree)
    if (QIcon::hasThemeIcon(QStringLiteral(ACCUM_APP_ID)))
        icon = QIcon::fromTheme(QStringLiteral(ACCUM_APP_ID));
    else
        for (const int size : {32, 64, 256})
            icon.addFile(QStringLiteral(":/icons/hicolor/%1x%1/apps/" ACCUM_APP_ID ".png").arg(size), QSize(size, size));
    QApplication::setWindowIcon(icon);
    // Qt splits large image conversions over its global thread pool, one thread per
    // core. While training keeps every core busy those helpers only preempt the
    // engine's threads (each redraw woke two of them); one helper is enough.
    QThreadPool::globalInstance()->setMaxThreadCount(1);

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Accumulate Studio: gradient accumulation, live.\n\n"
                       "Set the micro-batch and the accumulation steps, pick a style (a plain PyTorch loop,\n"
                       "an Accelerator, a Trainer) and watch the loss, memory and speed of a real training\n"
                       "run, with the loop's code lit line by line. The Equivalence lab runs the styles and\n"
                       "batch shapes side by side; the Runs tab compares runs, also accum-run's."));
    const QCommandLineOption help_option = parser.addHelpOption();
    // addHelpOption also adds --help-all (Qt's own options too), which it does not return.
    const QCommandLineOption help_all_option(QStringLiteral("help-all"),
                                             QStringLiteral("Displays help including Qt specific options."));
    const QCommandLineOption version_option = parser.addVersionOption();
    const QCommandLineOption config_option(QStringLiteral("config"), QStringLiteral("Load a configuration JSON."),
                                           QStringLiteral("FILE"));
    QCommandLineOption autorun_option(QStringLiteral("autorun"), QStringLiteral("Start the run at once."));
    QCommandLineOption screenshot_option(QStringLiteral("screenshot"),
                                         QStringLiteral("Save a PNG of the window when the run ends."),
                                         QStringLiteral("FILE"));
    QCommandLineOption quit_option(QStringLiteral("quit-after-run"), QStringLiteral("Quit when the run ends."));
    autorun_option.setFlags(QCommandLineOption::HiddenFromHelp);
    screenshot_option.setFlags(QCommandLineOption::HiddenFromHelp);
    quit_option.setFlags(QCommandLineOption::HiddenFromHelp);
    const QCommandLineOption demo_option(
        QStringLiteral("demo"),
        QStringLiteral("Start a demo: %1.").arg(studio::MainWindow::demo_names().join(QStringLiteral(", "))),
        QStringLiteral("NAME"));
    QCommandLineOption after_option(QStringLiteral("screenshot-after"),
                                    QStringLiteral("Grab the window after MS milliseconds, then quit."),
                                    QStringLiteral("MS"));
    QCommandLineOption language_option(QStringLiteral("language"), QStringLiteral("en or vi for this session."),
                                       QStringLiteral("CODE"));
    QCommandLineOption lesson_option(QStringLiteral("lesson"), QStringLiteral("Open the guided lesson."));
    QCommandLineOption lesson_step_option(QStringLiteral("lesson-step"),
                                          QStringLiteral("Open the lesson at STEP (1-based, or its name)."),
                                          QStringLiteral("STEP"));
    QCommandLineOption lesson_file_option(QStringLiteral("lesson-file"),
                                          QStringLiteral("Open a lesson file (docs/lessons.md) at its first step."),
                                          QStringLiteral("FILE"));
    QCommandLineOption presentation_option(QStringLiteral("presentation"),
                                           QStringLiteral("Start in presentation mode (F11 leaves it)."));
    after_option.setFlags(QCommandLineOption::HiddenFromHelp);
    QCommandLineOption at_option(QStringLiteral("screenshot-at-point"), QStringLiteral("Grab at the Nth point, go on."),
                                 QStringLiteral("N"));
    QCommandLineOption probe_option(QStringLiteral("event-loop-probe"), QStringLiteral("Write the event loop's lateness."),
                                    QStringLiteral("FILE"));
    at_option.setFlags(QCommandLineOption::HiddenFromHelp);
    probe_option.setFlags(QCommandLineOption::HiddenFromHelp);
    lesson_step_option.setFlags(QCommandLineOption::HiddenFromHelp);
    QCommandLineOption build_up_option(QStringLiteral("build-up-lines"),
                                       QStringLiteral("Show the code panel's build-up at its first N lines."),
                                       QStringLiteral("N"));
    build_up_option.setFlags(QCommandLineOption::HiddenFromHelp);
    // Build steps: the manual page from these options, with hand-written sections appended.
    QCommandLineOption manual_option(QStringLiteral("manual-page"), QStringLiteral("Write the manual page to FILE."),
                                     QStringLiteral("FILE"));
    QCommandLineOption manual_extra_option(QStringLiteral("manual-page-extra"),
                                           QStringLiteral("Append FILE's roff sections to the manual page."),
                                           QStringLiteral("FILE"));
    manual_option.setFlags(QCommandLineOption::HiddenFromHelp);
    manual_extra_option.setFlags(QCommandLineOption::HiddenFromHelp);
    const QList<QCommandLineOption> options{config_option,   autorun_option,      screenshot_option, quit_option,
                                            demo_option,     after_option,        language_option,   lesson_option,
                                            lesson_step_option, presentation_option, build_up_option, lesson_file_option,
                                            manual_option, manual_extra_option, at_option, probe_option};
    parser.addOptions(options);
    const QString run_dir = QStringLiteral("run-dir"), run_dirs = QStringLiteral("[run-dir...]");
    const QString run_dirs_help = QStringLiteral("accum-run output directories to open in the Runs tab.");
    parser.addPositionalArgument(run_dir, run_dirs_help, run_dirs);
    parser.process(app);
    if (parser.isSet(manual_option)) {
        std::string extra;
        if (parser.isSet(manual_extra_option)) {
            QFile in(parser.value(manual_extra_option));
            if (!in.open(QIODevice::ReadOnly)) {
                std::fprintf(stderr, "accum-studio: --manual-page-extra: cannot read %s: %s\n", qPrintable(in.fileName()),
                             qPrintable(in.errorString()));
                return 2;
            }
            extra = in.readAll().toStdString();
        }
        const auto doc = studio_doc(parser, QList<QCommandLineOption>{help_option, help_all_option, version_option} + options,
                                    run_dir, run_dirs, run_dirs_help);
        const std::string page = accum::cli::manual_page(doc, ACCUM_RELEASE_DATE, "Accumulate Studio " ACCUM_VERSION, extra);
        QFile out(parser.value(manual_option));
        if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
            out.write(page.data(), qint64(page.size())) != qint64(page.size()) || !out.flush()) {
            std::fprintf(stderr, "accum-studio: --manual-page: cannot write %s: %s\n", qPrintable(out.fileName()),
                         qPrintable(out.errorString()));
            return 2;
        }
        return 0;
    }
    if (parser.isSet(demo_option) && !studio::MainWindow::demo_names().contains(parser.value(demo_option))) {
        std::fprintf(stderr, "accum-studio: --demo: unknown demo '%s' (choose %s)\n",
                     qPrintable(parser.value(demo_option)),
                     qPrintable(studio::MainWindow::demo_names().join(QStringLiteral(", "))));
        return 2;
    }
    const QString language =
        parser.isSet(language_option) ? parser.value(language_option) : studio::configured_language();
    if (!studio::install_translators(app, language))
        std::fprintf(stderr, "accum-studio: no translation for '%s' in %s\n", qPrintable(language),
                     qPrintable(studio::translations_directory()));

    // The lesson: the built-in one, or --lesson-file's.
    auto lesson = studio::builtin_lesson_shared();
    if (parser.isSet(lesson_file_option)) {
        QString error;
        auto read = studio::read_lesson_file(parser.value(lesson_file_option), &error);
        if (!read) {
            std::fprintf(stderr, "accum-studio: --lesson-file: %s\n", qPrintable(error));
            return 2;
        }
        lesson = std::make_shared<const studio::Lesson>(std::move(*read));
    }
    int lesson_index = -1; // the lesson's step to open, if any
    if (parser.isSet(lesson_option) || parser.isSet(lesson_step_option) || parser.isSet(lesson_file_option)) {
        const QString step = parser.value(lesson_step_option);
        bool numeric = false;
        const int number = step.toInt(&numeric);
        lesson_index = step.isEmpty() ? 0 : numeric ? number - 1 : lesson->step_index(step);
        if (lesson_index < 0 || lesson_index >= int(lesson->steps.size())) {
            std::fprintf(stderr, "accum-studio: --lesson-step: no step '%s' (1 to %d, or a name such as %s)\n",
                         qPrintable(step), int(lesson->steps.size()), lesson->steps.front().key);
            return 2;
        }
    }

    bool point_numeric = false;
    const int grab_point = parser.value(at_option).toInt(&point_numeric);
    if (parser.isSet(at_option) && (!point_numeric || grab_point < 1)) {
        std::fprintf(stderr, "accum-studio: --screenshot-at-point: '%s' must be a number of points, 1 or more\n",
                     qPrintable(parser.value(at_option)));
        return 2;
    }
    if (parser.isSet(at_option) && !parser.isSet(screenshot_option)) {
        std::fprintf(stderr, "accum-studio: --screenshot-at-point needs --screenshot FILE, the picture it takes\n");
        return 2;
    }
    if (parser.isSet(probe_option)) { // refused now, not after the run it was to measure
        QFile probe_file(parser.value(probe_option));
        if (!probe_file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
            std::fprintf(stderr, "accum-studio: --event-loop-probe: cannot write %s: %s\n",
                         qPrintable(probe_file.fileName()), qPrintable(probe_file.errorString()));
            return 2;
        }
    }

    studio::MainWindow window;
    window.lesson_panel()->set_lesson(lesson);
    if (parser.isSet(config_option)) {
        QString error;
        if (!window.load_config(parser.value(config_option), &error)) {
            std::fprintf(stderr, "accum-studio: --config %s: %s\n", qPrintable(parser.value(config_option)),
                         qPrintable(error));
            return 2;
        }
    }
    for (const QString& dir : parser.positionalArguments()) {
        QString error;
        if (!window.runs_panel()->open_directory(dir, &error)) {
            std::fprintf(stderr, "accum-studio: %s: %s\n", qPrintable(dir), qPrintable(error));
            return 2;
        }
        window.tabs()->setCurrentWidget(window.runs_panel());
    }
    EventLoopProbe* probe =
        parser.isSet(probe_option) ? new EventLoopProbe(parser.value(probe_option), &window) : nullptr;
    if (probe) QObject::connect(&app, &QCoreApplication::aboutToQuit, probe, [probe] { probe->write(); });
    const bool grab_at = parser.isSet(at_option);
    const QString screenshot = grab_at ? QString() : parser.value(screenshot_option);
    const bool quit_after = parser.isSet(quit_option);
    if (grab_at) { // the plot is looked at every 100 ms
        auto* watch = new QTimer(&window);
        watch->start(100);
        QObject::connect(watch, &QTimer::timeout, &window, [&window, probe, watch, n = grab_point,
                                                            file = parser.value(screenshot_option)] {
            const int points = window.loss_plot()->micro_point_count();
            if (points > 0 && probe && !probe->has_mark(QStringLiteral("first_point")))
                probe->mark(QStringLiteral("first_point"));
            if (points < n) return;
            watch->stop();
            if (probe) probe->mark(QStringLiteral("screenshot"));
            save_grab(window, file);
            if (probe) probe->mark(QStringLiteral("screenshot_saved"));
        });
    }
    QObject::connect(&window, &studio::MainWindow::run_finished, &window,
                     [&window, screenshot, quit_after, probe](const accum::SummaryRecord& summary) {
                         if (probe) probe->mark(QStringLiteral("run_finished"));
                         std::fprintf(stderr, "accum-studio: run ended: %s %s (%.1f samples/s)\n", accum::to_string(summary.status),
                                      summary.message.c_str(), summary.samples_per_second);
                         // Let the queued replots paint before grabbing.
                         QTimer::singleShot(400, &window, [&window, screenshot, quit_after] {
                             save_grab(window, screenshot);
                             if (quit_after) QApplication::quit();
                         });
                     });
    const bool timed_grab = parser.isSet(after_option);
    if (timed_grab)
        QTimer::singleShot(parser.value(after_option).toInt(), &window, [&window, screenshot] {
            save_grab(window, screenshot);
            QApplication::quit();
        });
    else if (parser.isSet(demo_option) || lesson_index >= 0)
        QObject::connect(&window, &studio::MainWindow::experiment_finished, &window, [&window, screenshot, quit_after] {
            QTimer::singleShot(600, &window, [&window, screenshot, quit_after] {
                save_grab(window, screenshot);
                if (quit_after) QApplication::quit();
            });
        });
    window.show();
    if (parser.isSet(presentation_option)) window.set_presentation_mode(true);
    if (parser.isSet(build_up_option)) // after the lesson's step, which starts its own build-up
        QTimer::singleShot(600, &window, [&window, lines = parser.value(build_up_option).toInt()] {
            window.code_panel()->start_build_up();
            for (int i = 1; i < lines; ++i) window.code_panel()->next_line();
        });
    if (lesson_index >= 0) {
        QTimer::singleShot(300, &window, [&window, lesson_index] { window.start_lesson(lesson_index); });
    } else if (parser.isSet(demo_option)) {
        const auto name = parser.value(demo_option);
        // Its own configuration: --config FILE's when given, else the defaults.
        const auto config = parser.isSet(config_option) ? window.config_panel()->config() : accum::RunConfig{};
        QTimer::singleShot(300, &window, [&window, name, config] {
            if (!window.run_demo(name, config)) QApplication::exit(2); // checked above: cannot happen
        });
    } else if (parser.isSet(autorun_option)) {
        QTimer::singleShot(0, &window, [&window, probe] {
            if (probe) probe->mark(QStringLiteral("start"));
            window.start_run();
        });
    }
    return app.exec();
}
// SPDX-License-Identifier: GPL-3.0-or-later
