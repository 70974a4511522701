#include "oom_banner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

namespace studio {

OomBanner::OomBanner(QWidget* parent) : QFrame(parent) {
    setObjectName(QStringLiteral("oom_banner"));
    setStyleSheet(QStringLiteral("#oom_banner { background: #fdecea; border: 2px solid #c62828; border-radius: 6px; }"
                                 "#oom_banner QLabel { color: #7f1d1d; font-size: 11pt; }"));
    text_ = new QLabel;
    text_->setWordWrap(true);
    text_->setTextFormat(Qt::RichText);
    apply_ = new QPushButton(tr("Apply suggestion"));
    apply_->setObjectName(QStringLiteral("apply_suggestion"));
    dismiss_ = new QPushButton(tr("Dismiss"));
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(text_, 1);
    layout->addWidget(apply_);
    layout->addWidget(dismiss_);
    connect(apply_, &QPushButton::clicked, this, [this] {
        hide();
        Q_EMIT apply_requested(batch_size_, accumulation_steps_);
    });
    connect(dismiss_, &QPushButton::clicked, this, &QWidget::hide);
    hide();
}

void OomBanner::show_for(const QString& message, std::int64_t batch_size, std::int64_t accumulation_steps,
                         std::int64_t suggested_batch_size, std::int64_t suggested_accumulation_steps) {
    batch_size_ = suggested_batch_size;
    accumulation_steps_ = suggested_accumulation_steps;
    const bool has_suggestion = suggested_batch_size > 0 && suggested_accumulation_steps > 0;
    // What a class reads first: what ran out, then what to do; the engine's whole
    // message (the peak, the measured suggestion, LibTorch's line) in small print.
    QString html = tr("<b>Out of memory</b> at micro-batch %1 × %2 accumulation steps.")
                       .arg(batch_size)
                       .arg(accumulation_steps);
    if (has_suggestion)
        html += tr("<br>Suggestion: micro-batch <b>%1</b> × <b>%2</b> accumulation steps — the same effective batch "
                   "(%3), less memory per pass.")
                    .arg(suggested_batch_size)
                    .arg(suggested_accumulation_steps)
                    .arg(suggested_batch_size * suggested_accumulation_steps);
    html += QStringLiteral("<br><small>%1</small>").arg(message.toHtmlEscaped());
    text_->setText(html);
    apply_->setVisible(has_suggestion);
    show();
}

} // namespace studio
