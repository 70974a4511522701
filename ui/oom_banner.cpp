#include "oom_banner.h"

#include <QApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <optional>

#include "accum/engine_messages.h"
#include "engine_text.h"
#include "lesson.h"

namespace studio {

namespace {

// The planner's other measured lever, when the lesson's lever is that one: the
// engine measured both (plan_faster) and picked the lever the lesson does not teach.
struct OtherLever {
    std::int64_t batch_size = 0;
    std::int64_t accumulation_steps = 0;
};

std::optional<OtherLever> lesson_lever_measured(const accum::SummaryRecord& summary, MemoryLever lever) {
    if (lever == MemoryLever::Planner || summary.detail.code != accum::message_code::out_of_memory) return std::nullopt;
    const auto& args = summary.detail.args;
    const auto arg = [&args](const char* key) {
        const auto it = args.find(key);
        return it == args.end() ? std::string() : it->second;
    };
    if (arg("suggestion") != accum::message_code::suggest_measured || arg("why") != accum::message_code::plan_faster)
        return std::nullopt;
    if (summary.suggested_gradient_checkpointing == (lever == MemoryLever::Checkpointing)) return std::nullopt;
    bool batch_ok = false, steps_ok = false;
    const OtherLever other{QString::fromStdString(arg("slower_batch")).toLongLong(&batch_ok),
                           QString::fromStdString(arg("slower_steps")).toLongLong(&steps_ok)};
    if (!batch_ok || !steps_ok || other.batch_size <= 0 || other.accumulation_steps <= 0) return std::nullopt;
    return other;
}

} // namespace

OomBanner::OomBanner(QWidget* parent) : QFrame(parent) {
    setObjectName(QStringLiteral("oom_banner"));
    text_ = new QLabel;
    text_->setWordWrap(true);
    text_->setTextFormat(Qt::RichText);
    apply_ = new QPushButton;
    apply_->setObjectName(QStringLiteral("apply_suggestion"));
    dismiss_ = new QPushButton;
    retranslate();
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(text_, 1);
    layout->addWidget(apply_);
    layout->addWidget(dismiss_);
    connect(apply_, &QPushButton::clicked, this, [this] {
        hide();
        Q_EMIT apply_requested(batch_size_, accumulation_steps_, checkpointing_);
    });
    connect(dismiss_, &QPushButton::clicked, this, &QWidget::hide);
    set_presentation_scale(1.0);
    hide();
}

void OomBanner::set_presentation_scale(double scale) {
    // A style sheet gives the banner its colours, and with them its own fonts: the
    // label and the buttons are sized here, not by the window's font.
    const double desk_pt = QApplication::font().pointSizeF() > 0 ? QApplication::font().pointSizeF() : 9.0;
    setStyleSheet(QStringLiteral("#oom_banner { background: #fdecea; border: 2px solid #c62828; border-radius: 6px; }"
                                 "#oom_banner QLabel { color: #7f1d1d; font-size: %1pt; }"
                                 "#oom_banner QPushButton { font-size: %2pt; }")
                      .arg(11.0 * scale, 0, 'f', 1)
                      .arg(desk_pt * scale, 0, 'f', 1));
    // In front of a class the headline and the suggestion; the engine's whole
    // message stays in the tooltip.
    compact_ = scale > 1.0;
    render();
}

void OomBanner::show_for(const accum::SummaryRecord& summary, std::int64_t batch_size,
                         std::int64_t accumulation_steps) {
    summary_ = summary;
    failed_batch_size_ = batch_size;
    failed_accumulation_steps_ = accumulation_steps;
    batch_size_ = summary.suggested_batch_size;
    accumulation_steps_ = summary.suggested_accumulation_steps;
    checkpointing_ = summary.suggested_gradient_checkpointing;
    lesson_first_ = false;
    render();
    show();
}

void OomBanner::show_for(const accum::SummaryRecord& summary, std::int64_t batch_size,
                         std::int64_t accumulation_steps, MemoryLever lever) {
    const auto other = lesson_lever_measured(summary, lever);
    show_for(summary, batch_size, accumulation_steps);
    if (!other) return;
    batch_size_ = other->batch_size;
    accumulation_steps_ = other->accumulation_steps;
    checkpointing_ = !summary.suggested_gradient_checkpointing;
    lesson_first_ = true;
    render();
}

QString OomBanner::text() const { return text_->text(); }

void OomBanner::changeEvent(QEvent* event) {
    QFrame::changeEvent(event);
    if (event->type() == QEvent::LanguageChange) retranslate();
}

void OomBanner::retranslate() {
    apply_->setText(tr("Apply suggestion"));
    dismiss_->setText(tr("Dismiss"));
    render();
}

void OomBanner::render() {
    const bool has_suggestion = batch_size_ > 0 && accumulation_steps_ > 0;
    const QString message = engine_message(summary_);
    text_->setToolTip(message);
    apply_->setVisible(has_suggestion);
    // What a class reads first: what ran out and why (the budget, what was asked
    // for), then what to do — the engine's message, said in the interface's
    // language. In front of a class one paragraph that wraps where it must.
    if (const auto oom = out_of_memory_text(summary_)) {
        QString html = oom->what;
        const QString gap = compact_ ? QStringLiteral(" ") : QStringLiteral("<br>");
        if (lesson_first_)
            html += gap + lesson_suggestion();
        else if (!oom->suggestion.isEmpty())
            html += gap + oom->suggestion;
        text_->setText(html);
        return;
    }
    // A message without its code (a summary from an older run directory): the
    // headline from the configuration, the engine's English in small print.
    QString html = tr("<b>Out of memory</b> at micro-batch %1 × %2 accumulation steps.")
                       .arg(failed_batch_size_)
                       .arg(failed_accumulation_steps_);
    if (has_suggestion) {
        QString suggestion =
            checkpointing_ ? tr("<br>Suggestion: micro-batch <b>%1</b> × <b>%2</b> accumulation steps with <b>gradient "
                                "checkpointing</b> — the same effective batch (%3), less memory per pass.")
                                 .arg(batch_size_)
                                 .arg(accumulation_steps_)
                                 .arg(batch_size_ * accumulation_steps_)
                           : tr("<br>Suggestion: micro-batch <b>%1</b> × <b>%2</b> accumulation steps — the same "
                                "effective batch (%3), less memory per pass.")
                                 .arg(batch_size_)
                                 .arg(accumulation_steps_)
                                 .arg(batch_size_ * accumulation_steps_);
        // One paragraph in front of a class: it wraps where the banner needs it.
        if (compact_) suggestion.replace(QLatin1String("<br>"), QLatin1String(" "));
        html += suggestion;
    }
    if (!compact_) html += QStringLiteral("<br><small>%1</small>").arg(message.toHtmlEscaped());
    text_->setText(html);
}

QString OomBanner::lesson_suggestion() const {
    const auto effective = batch_size_ * accumulation_steps_;
    QString first = checkpointing_
                        ? tr("For this lesson: micro-batch <b>%1</b> × <b>%2</b> accumulation steps with <b>gradient "
                             "checkpointing</b> — the same effective batch (%3), less memory per pass.")
                        : tr("For this lesson: micro-batch <b>%1</b> × <b>%2</b> accumulation steps — the same "
                             "effective batch (%3), less memory per pass.");
    first = first.arg(batch_size_).arg(accumulation_steps_).arg(effective);
    const auto& args = summary_.detail.args;
    const auto same = args.find("same");
    const auto ratio = args.find("ratio");
    const QString speed = same != args.end() && same->second == "yes"
                              ? tr("at the same speed")
                              : tr("%1 × faster").arg(ratio == args.end() ? QStringLiteral("?")
                                                                          : QString::fromStdString(ratio->second));
    // The planner's pick: the other lever.
    const QString second = (summary_.suggested_gradient_checkpointing
                                ? tr("Also measured to fit: %1 × %2 with gradient checkpointing, %3.")
                                : tr("Also measured to fit: %1 × %2 without checkpointing, %3."))
                               .arg(summary_.suggested_batch_size)
                               .arg(summary_.suggested_accumulation_steps)
                               .arg(speed);
    return first + QLatin1Char(' ') + second;
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
