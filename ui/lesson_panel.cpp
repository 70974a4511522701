#include "lesson_panel.h"

#include <QApplication>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

#include "engine_text.h"
#include "engine_use.h"
#include "plot_look.h"

namespace studio {

LessonPanel::LessonPanel(QWidget* parent) : QFrame(parent) {
    setObjectName(QStringLiteral("lesson_panel"));
    // Colours from the palette, not a style sheet: a widget with a style sheet stops
    // following its parent's font, and presentation mode enlarges that font.
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    QPalette tint;
    tint.setColor(QPalette::Window, QColor(0xeef4ff));
    setPalette(tint);
    counter_ = new QLabel;
    counter_->setObjectName(QStringLiteral("lesson_counter"));
    title_ = new QLabel;
    title_->setObjectName(QStringLiteral("lesson_title"));
    title_->setWordWrap(true); // a long title takes two lines on a 1024 px projector, not more width
    QPalette blue;
    blue.setColor(QPalette::WindowText, QColor(0x1f4e99));
    title_->setPalette(blue);
    text_ = new QLabel;
    text_->setObjectName(QStringLiteral("lesson_text"));
    text_->setWordWrap(true);
    verdict_label_ = new QLabel;
    verdict_label_->setObjectName(QStringLiteral("lesson_verdict"));
    verdict_label_->setWordWrap(true);

    auto* style = QApplication::style();
    back_ = new QPushButton(style->standardIcon(QStyle::SP_ArrowBack), QString());
    back_->setObjectName(QStringLiteral("lesson_back"));
    back_->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Left));
    again_ = new QPushButton(style->standardIcon(QStyle::SP_BrowserReload), QString());
    again_->setObjectName(QStringLiteral("lesson_again"));
    next_ = new QPushButton(style->standardIcon(QStyle::SP_ArrowForward), QString());
    next_->setObjectName(QStringLiteral("lesson_next"));
    next_->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Right));
    close_ = new QPushButton(style->standardIcon(QStyle::SP_DialogCloseButton), QString());
    close_->setObjectName(QStringLiteral("lesson_close"));
    retranslate();
    connect(back_, &QPushButton::clicked, this, [this] { go_to(index_ - 1); });
    connect(again_, &QPushButton::clicked, this, &LessonPanel::run_again);
    connect(next_, &QPushButton::clicked, this, [this] { go_to(index_ + 1); });
    connect(close_, &QPushButton::clicked, this, &LessonPanel::close_lesson);

    auto* top = new QHBoxLayout;
    top->addWidget(counter_);
    top->addSpacing(12);
    top->addWidget(title_, 1);
    top->addWidget(back_);
    top->addWidget(again_);
    top->addWidget(next_);
    top->addWidget(close_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 6, 8, 6);
    layout->setSpacing(2);
    layout->addLayout(top);
    layout->addWidget(text_);
    layout->addWidget(verdict_label_);

    fit_fonts();
    hide();
}

void LessonPanel::changeEvent(QEvent* event) {
    QFrame::changeEvent(event);
    if (event->type() == QEvent::FontChange) fit_fonts();
    if (event->type() == QEvent::LanguageChange) retranslate();
}

void LessonPanel::retranslate() {
    // QAbstractButton::setText sets the shortcut to the text's mnemonic: the keys are kept.
    const auto set_text = [](QPushButton* button, const QString& text) {
        const auto keys = button->shortcut();
        button->setText(text);
        button->setShortcut(keys);
    };
    set_text(back_, tr("Back"));
    back_->setToolTip(tr("The previous step (Alt+Left)"));
    set_text(again_, tr("Run again"));
    again_->setToolTip(tr("Set the step's configuration again and run it"));
    set_text(next_, tr("Next"));
    next_->setToolTip(tr("The next step (Alt+Right)"));
    close_->setToolTip(tr("Close the lesson"));
    if (index_ < 0) return;
    // The current step's words, and its verdict judged again in the new language.
    const auto& step = lesson_->steps[static_cast<std::size_t>(index_)];
    counter_->setText(tr("Step %1 of %2").arg(index_ + 1).arg(step_count()));
    title_->setText(step.title_text());
    text_->setText(step.body_text());
    if (is_running())
        verdict_label_->setText(tr("Running…"));
    else if (!results_.empty())
        show_verdict(results_);
}

void LessonPanel::show_verdict(const std::vector<RunResult>& runs) {
    const auto& step = lesson_->steps[static_cast<std::size_t>(index_)];
    const auto refused =
        std::find_if(runs.begin(), runs.end(), [](const RunResult& r) { return engine_refused_as_busy(r.summary); });
    // The engine refused the step's run (another run of this process trains): the
    // step did not run, and its check would misread what came back.
    if (refused != runs.end())
        verdict_ = {false, tr("The step could not start: %1").arg(engine_message(refused->summary))};
    else
        verdict_ = step.check(runs);
    set_verdict_colour(verdict_.as_expected ? QColor(0x1b5e20) : QColor(0xb3261e));
    verdict_label_->setText((verdict_.as_expected ? QStringLiteral("✓ ") : QStringLiteral("✗ ")) + verdict_.text);
}

void LessonPanel::fit_fonts() {
    // The title a quarter larger than the text, whatever size the window's font
    // has (presentation mode enlarges it).
    QFont title = PlotLook::scaled(font(), 1.25);
    title.setBold(true);
    title_->setFont(title);
    QFont bold = font();
    bold.setBold(true);
    verdict_label_->setFont(bold);
}

void LessonPanel::set_verdict_colour(const QColor& colour) {
    QPalette p;
    p.setColor(QPalette::WindowText, colour);
    verdict_label_->setPalette(p);
}

void LessonPanel::start(int index) {
    closing_ = false;
    show();
    go_to(index);
}

void LessonPanel::go_to(int index) {
    index = std::clamp(index, 0, step_count() - 1);
    if (is_running()) {
        pending_ = index;
        stop_current();
        return;
    }
    index_ = index;
    show_step();
    run_step();
}

void LessonPanel::set_lesson(std::shared_ptr<const Lesson> lesson) {
    if (!lesson || lesson->steps.empty()) return;
    close_lesson();
    lesson_ = std::move(lesson);
    index_ = -1;
}

MemoryLever LessonPanel::running_lever() const {
    if (!is_running() || index_ < 0) return MemoryLever::Planner;
    return lesson_->steps[static_cast<std::size_t>(index_)].lever;
}

void LessonPanel::run_again() {
    if (index_ < 0) return;
    go_to(index_);
}

void LessonPanel::close_lesson() {
    pending_ = -1;
    closing_ = true;
    if (is_running()) stop_current();
    hide();
    Q_EMIT closed();
}

void LessonPanel::stop_current() {
    if (is_running()) Q_EMIT stop_requested();
}

void LessonPanel::show_step() {
    const auto& step = lesson_->steps[static_cast<std::size_t>(index_)];
    counter_->setText(tr("Step %1 of %2").arg(index_ + 1).arg(step_count()));
    title_->setText(step.title_text());
    text_->setText(step.body_text());
    verdict_label_->clear();
}

void LessonPanel::run_step() {
    const auto& step = lesson_->steps[static_cast<std::size_t>(index_)];
    verdict_ = LessonVerdict{};
    results_.clear();
    set_verdict_colour(QColor(0x555555));
    verdict_label_->setText(tr("Running…"));
    // The window answers before the signal returns: on_run_started() or
    // on_run_refused(). A run the teacher started by hand keeps the engine (and
    // the configuration it runs), so a step may be refused.
    requested_ = step.run == LessonRun::Live ? Waiting::Live : Waiting::Experiment;
    if (step.run == LessonRun::Live)
        Q_EMIT live_run_requested(step.config(), step.focus);
    else
        Q_EMIT experiment_requested(step.config(), step.experiment);
    requested_ = Waiting::Nothing;
    update_buttons();
}

std::vector<std::pair<std::int64_t, std::int64_t>> LessonPanel::requested_shapes() const {
    if (requested_ != Waiting::Experiment) return {};
    return lesson_->steps[static_cast<std::size_t>(index_)].shapes;
}

void LessonPanel::on_run_started() {
    if (requested_ == Waiting::Nothing) return;
    waiting_ = requested_;
    requested_ = Waiting::Nothing;
}

void LessonPanel::on_run_refused(const QString& why) {
    if (requested_ == Waiting::Nothing) return;
    requested_ = Waiting::Nothing;
    verdict_ = {false, tr("The step could not start: %1").arg(why)};
    set_verdict_colour(QColor(0xb3261e));
    verdict_label_->setText(QStringLiteral("✗ ") + verdict_.text);
    update_buttons();
    Q_EMIT step_finished(index_, false);
}

void LessonPanel::on_live_run_finished(const RunResult& run) {
    if (waiting_ != Waiting::Live) return;
    finish({run});
}

void LessonPanel::on_experiment_finished(const std::vector<RunResult>& runs) {
    if (waiting_ != Waiting::Experiment) return;
    finish(runs);
}

void LessonPanel::finish(const std::vector<RunResult>& runs) {
    waiting_ = Waiting::Nothing;
    if (pending_ >= 0 || closing_) {
        // Stopped to move to another step (or to close): that step runs now, once the
        // window has finished with the run that ended.
        const int next = pending_;
        pending_ = -1;
        update_buttons();
        if (next >= 0 && !closing_) QTimer::singleShot(0, this, [this, next] { go_to(next); });
        return;
    }
    results_ = runs;
    show_verdict(runs);
    update_buttons();
    Q_EMIT step_finished(index_, verdict_.as_expected);
}

void LessonPanel::update_buttons() {
    back_->setEnabled(index_ > 0);
    next_->setEnabled(index_ + 1 < step_count());
    again_->setEnabled(!is_running());
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
