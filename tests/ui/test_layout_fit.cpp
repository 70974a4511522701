// Readable at 1024 × 768, 1280 × 720 and 1920 × 1080, and from
// the back row. On each screen, at the desk and in presentation mode, with the
// lesson's bar and the out-of-memory banner showing and on every tab, the test
// walks every visible widget and fails where one is cut:
//   - the window taller or wider than the screen's available room;
//   - a widget's rectangle outside the window (or outside the scroll area it is in);
//   - a single-line label whose text is wider than the label;
//   - in presentation mode, any text below 1/40 of the screen's height (the
//     widgets' fonts, the tables' headers, and every QCustomPlot's tick labels,
//     axis labels, legend, titles and text items);
//   - a plot's legend hidden in presentation mode, a lab table that cuts the end
//     of a run's name ("(wrong)", "(right)").
//
// Runs offscreen on three screens made for it (the offscreen platform's config
// file, as test_classroom does): nothing needs an X server.

#include <QAbstractScrollArea>
#include <QApplication>
#include <QFontInfo>
#include <QHeaderView>
#include <QLabel>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

#include "accum/engine_messages.h"
#include "lab_panel.h"
#include "lesson.h"
#include "lesson_panel.h"
#include "main_window.h"
#include "lesson_fixtures.h"
#include "offscreen_screens.h"
#include "oom_banner.h"

using studio::MainWindow;
using test_screens::screen_of_size;

namespace {

QString name_of(const QWidget* w) {
    QString name = QString::fromLatin1(w->metaObject()->className());
    if (!w->objectName().isEmpty()) name += QLatin1Char('#') + w->objectName();
    if (const auto* label = qobject_cast<const QLabel*>(w))
        name += QStringLiteral(" \"%1\"").arg(label->text().left(40));
    return name;
}

// A widget counts when it and all its parents up to the window are visible.
bool shown(const QWidget* w, const QWidget* window) {
    for (const QWidget* p = w; p && p != window; p = p->parentWidget())
        if (!p->isVisible()) return false;
    return w->width() > 0 && w->height() > 0;
}

// Inside a scroll area's viewport a widget may lie outside the window: it is
// scrolled to, not cut.
bool in_scroll_area(const QWidget* w, const QWidget* window) {
    for (const QWidget* p = w->parentWidget(); p && p != window; p = p->parentWidget())
        if (qobject_cast<const QAbstractScrollArea*>(p)) return true;
    return false;
}

int pixels(const QFont& font) { return QFontInfo(font).pixelSize(); }

// A plot's text below `least` pixels: tick labels, axis labels, legend items,
// titles and text items.
QStringList small_plot_text(QCustomPlot* plot, int least) {
    QStringList found;
    auto small = [&](const QString& what, const QFont& font) {
        if (pixels(font) < least)
            found << QStringLiteral("%1: %2 of %3 px, below %4 (1/40 of the screen)")
                         .arg(name_of(plot), what)
                         .arg(pixels(font))
                         .arg(least + 1);
    };
    for (auto* rect : plot->axisRects())
        for (auto* axis : rect->axes()) {
            if (!axis->visible()) continue;
            if (axis->tickLabels()) small(QStringLiteral("tick labels"), axis->tickLabelFont());
            if (!axis->label().isEmpty()) small(QStringLiteral("axis label \"%1\"").arg(axis->label()), axis->labelFont());
        }
    if (plot->legend && plot->legend->visible())
        for (int i = 0; i < plot->legend->itemCount(); ++i)
            if (auto* item = plot->legend->item(i); item && item->visible())
                small(QStringLiteral("legend item %1").arg(i), item->font());
    for (auto* element : plot->plotLayout()->elements(true))
        if (auto* text = qobject_cast<QCPTextElement*>(element); text && text->visible() && !text->text().isEmpty())
            small(QStringLiteral("title \"%1\"").arg(text->text()), text->font());
    for (int i = 0; i < plot->itemCount(); ++i)
        if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)); text && text->visible() && !text->text().isEmpty())
            small(QStringLiteral("text \"%1\"").arg(text->text().left(30)), text->font());
    return found;
}

} // namespace

class TestLayoutFit : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void nothingIsCut_data();
    void nothingIsCut();

private:
    // Every problem found in the window as it stands, in words.
    QStringList problems(MainWindow& window, const QScreen* screen, bool presentation);
    QTemporaryDir settings_dir_;
    QStringList notes_; // what is tight but not cut: printed, not failed
};

void TestLayoutFit::initTestCase() {
    QVERIFY(settings_dir_.isValid());
    qputenv("XDG_CONFIG_HOME", settings_dir_.path().toUtf8());
    QStandardPaths::setTestModeEnabled(true);
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings_dir_.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings_dir_.path());
    QVERIFY2(screen_of_size(1024, 768) && screen_of_size(1280, 720) && screen_of_size(1920, 1080),
             "the offscreen screens were not configured");
}

void TestLayoutFit::init() { QSettings(QStringLiteral("AccumulateStudio"), QStringLiteral("accum-studio")).clear(); }

QStringList TestLayoutFit::problems(MainWindow& window, const QScreen* screen, bool presentation) {
    QStringList found;
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    QApplication::processEvents();
    const QRect available = presentation ? screen->geometry() : screen->availableGeometry();
    if (window.frameGeometry().height() > available.height() || window.frameGeometry().width() > available.width())
        found << QStringLiteral("the window is %1x%2, the screen has %3x%4")
                     .arg(window.frameGeometry().width())
                     .arg(window.frameGeometry().height())
                     .arg(available.width())
                     .arg(available.height());
    // The window can shrink into the screen (the offscreen screen has no title bar
    // or panel: on a desktop they take 30 to 60 px more, see notes below).
    const QSize minimum = window.minimumSizeHint();
    if (minimum.height() > available.height() || minimum.width() > available.width())
        found << QStringLiteral("the window needs at least %1x%2, the screen has %3x%4")
                     .arg(minimum.width())
                     .arg(minimum.height())
                     .arg(available.width())
                     .arg(available.height());
    if (!presentation && minimum.height() + 60 > available.height())
        notes_ << QStringLiteral("the window needs %1 px of the screen's %2: with a title bar and a panel it would not "
                                 "fit")
                      .arg(minimum.height())
                      .arg(available.height());
    const QRect inside = window.rect();
    // 1/40 of the screen's height, less one pixel for a font's rounding to whole pixels.
    const int least = screen->geometry().height() / 40 - 1;
    for (auto* w : window.findChildren<QWidget*>()) {
        if (!shown(w, &window) || w->isWindow()) continue;
        const QRect r(w->mapTo(&window, QPoint(0, 0)), w->size());
        if (!in_scroll_area(w, &window) && !inside.contains(r))
            found << QStringLiteral("%1 at %2,%3 %4x%5 runs out of the window %6x%7")
                         .arg(name_of(w))
                         .arg(r.x())
                         .arg(r.y())
                         .arg(r.width())
                         .arg(r.height())
                         .arg(inside.width())
                         .arg(inside.height());
        if (const auto* label = qobject_cast<const QLabel*>(w)) {
            const QString text = label->text();
            const bool plain = !text.isEmpty() && !label->wordWrap() && !text.contains(QLatin1Char('\n')) &&
                               !Qt::mightBeRichText(text) && label->pixmap().isNull();
            if (plain) {
                const int need = label->fontMetrics().horizontalAdvance(text) + 2 * label->margin() + 2 * label->indent();
                if (need > label->contentsRect().width() + 1)
                    found << QStringLiteral("%1: its text needs %2 px, it has %3").arg(name_of(w)).arg(need).arg(
                                 label->contentsRect().width());
            }
        }
        if (presentation) {
            const bool shows_text = qobject_cast<const QLabel*>(w) || qobject_cast<const QAbstractButton*>(w) ||
                                    qobject_cast<const QTableWidget*>(w) || qobject_cast<const QHeaderView*>(w) ||
                                    qobject_cast<const QTabBar*>(w);
            const auto* label = qobject_cast<const QLabel*>(w);
            const bool empty = label && label->text().isEmpty();
            if (shows_text && !empty && pixels(w->font()) < least)
                found << QStringLiteral("%1: text of %2 px, below %3 (1/40 of the screen)")
                             .arg(name_of(w))
                             .arg(pixels(w->font()))
                             .arg(least + 1);
        }
        if (auto* plot = qobject_cast<QCustomPlot*>(w)) {
            if (presentation) found << small_plot_text(plot, least);
            // A plot squeezed under its legend or its neighbours shows little (the
            // issue's lab plots of 60–80 px): noted below 100 px, not failed — with the
            // lesson's bar and the banner at 720 lines the window has no more to give.
            for (auto* rect : plot->axisRects())
                if (rect->visible() && rect->height() < 100 && rect->height() > 0)
                    notes_ << QStringLiteral("%1: a plot area %2 px high").arg(name_of(plot)).arg(rect->height());
        }
    }
    return found;
}

void TestLayoutFit::nothingIsCut_data() {
    QTest::addColumn<QSize>("screen_size");
    QTest::addColumn<bool>("presentation");
    for (const QSize size : {QSize(1024, 768), QSize(1280, 720), QSize(1920, 1080)})
        for (const bool on : {false, true})
            QTest::newRow(qPrintable(QStringLiteral("%1x%2 %3")
                                         .arg(size.width())
                                         .arg(size.height())
                                         .arg(on ? QStringLiteral("presentation") : QStringLiteral("desk"))))
                << size << on;
}

void TestLayoutFit::nothingIsCut() {
    QFETCH(QSize, screen_size);
    QFETCH(bool, presentation);
    auto* screen = screen_of_size(screen_size.width(), screen_size.height());
    QVERIFY(screen);
    MainWindow window;
    window.fit_to_screen(screen);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    if (presentation) {
        window.set_presentation_mode(true);
        QTRY_COMPARE(window.geometry(), screen->geometry());
    }
    // The lesson's bar with its first step and a verdict of two lines, and the
    // out-of-memory banner with the measured suggestion: the 706 px window.
    auto* lesson = window.lesson_panel();
    lesson->show();
    const auto& step = studio::lesson_steps().front();
    lesson->title_label()->setText(step.title_text());
    lesson->text_label()->setText(step.body_text());
    lesson->verdict_label()->setText(step.body_text());
    window.oom_banner()->show_for(test_fixtures::lesson_step1_out_of_memory(), 256, 1);
    // The lab's table with the runs whose meaning is at the end of their names.
    QStringList all;
    for (int tab = 0; tab < window.tabs()->count(); ++tab) {
        window.tabs()->setCurrentIndex(tab);
        const auto found = problems(window, screen, presentation);
        for (const auto& p : found) all << QStringLiteral("tab \"%1\": %2").arg(window.tabs()->tabText(tab), p);
        // Where the room goes, for whoever fixes a failure.
        if (!found.isEmpty())
            for (auto* w : window.findChildren<QWidget*>()) {
                const bool named = !w->objectName().isEmpty() && !w->objectName().startsWith(QLatin1String("qt_"));
                if (named && shown(w, &window) && w->height() >= 30)
                    qInfo("  %s: %dx%d (minimum %dx%d)", qPrintable(name_of(w)), w->width(), w->height(),
                          w->minimumSizeHint().width(), w->minimumSizeHint().height());
            }
    }
    // Presentation keeps the lab plot's legend (moved outside the plot), and the lab's
    // table elides run names in the middle, keeping "(wrong)" and "(right)".
    if (presentation && !window.lab_panel()->plot()->legend->visible())
        all << QStringLiteral("the lab plot's legend is hidden in presentation mode");
    // The lab's other plots, shown for their experiments only (step 8's bars, the
    // no_sync demo's curve): their text is set for presentation all the same.
    if (presentation)
        for (auto* plot : {window.lab_panel()->memory_bars(), window.lab_panel()->link_curve()})
            if (plot)
                for (const auto& p : small_plot_text(plot, screen->geometry().height() / 40 - 1))
                    all << QStringLiteral("lab: %1").arg(p);
    // (A cell that wraps is cut at the end of its first line whatever the mode.)
    if (window.lab_panel()->table()->textElideMode() != Qt::ElideMiddle || window.lab_panel()->table()->wordWrap())
        all << QStringLiteral("the lab's table cuts the end of run names (elide mode %1, word wrap %2)")
                   .arg(int(window.lab_panel()->table()->textElideMode()))
                   .arg(window.lab_panel()->table()->wordWrap());
    notes_.removeDuplicates();
    for (const auto& n : notes_) qInfo("note: %s", qPrintable(n));
    notes_.clear();
    for (const auto& p : all) qWarning("%s", qPrintable(p));
    QVERIFY2(all.isEmpty(), qPrintable(QStringLiteral("%1 problem(s); the first: %2").arg(all.size()).arg(all.value(0))));
    if (presentation) window.set_presentation_mode(false);
}

int main(int argc, char** argv) {
    QTemporaryDir dir;
    if (!test_screens::use_offscreen_screens(dir.filePath(QStringLiteral("screens.json")),
                                             {{"projector-1024", {1024, 768}},
                                              {"projector-1280", {1280, 720}},
                                              {"desk-1920", {1920, 1080}}}))
        return 1;
    QApplication app(argc, argv);
    TestLayoutFit test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_layout_fit.moc"
