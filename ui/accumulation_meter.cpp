#include "accumulation_meter.h"

#include <cmath>

#include <QEvent>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>

namespace studio {

AccumulationMeter::AccumulationMeter(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("accumulation_meter"));
    QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Maximum); // down to its minimum where room is short
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
    setToolTip(footer());
    reset(1);
}

QSize AccumulationMeter::minimumSizeHint() const {
    // Title, slots, a value, a bar of at least 12 px and the footer: five lines and a
    // little room (at 720 lines the window's height is what the lesson's bar, the
    // banner and the plots share).
    const int line = fontMetrics().height();
    return {260, 5 * line + 40};
}

QSize AccumulationMeter::sizeHint() const { return {360, std::max(minimumSizeHint().height() + 20, heightForWidth(360))}; }

QString AccumulationMeter::title() const {
    return synced_ ? tr("Window full (%1 / %2): update %3 applied, .grad zeroed").arg(filled_).arg(window_size_).arg(updates_)
                   : tr("Window: %1 / %2 micro-batches in .grad").arg(filled_).arg(window_size_);
}

void AccumulationMeter::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::LanguageChange) setToolTip(footer()); // the rest is painted in it
}

QString AccumulationMeter::footer() { return tr("bars: ‖.grad‖ after each backward (it adds up)"); }

int AccumulationMeter::wrapped_height(const QString& text, const QFont& font, int width) const {
    return QFontMetrics(font).boundingRect(QRect(0, 0, std::max(width, 1), 10000), Qt::TextWordWrap, text).height();
}

int AccumulationMeter::heightForWidth(int width) const {
    // The title (bold, wrapped), the slots, a value, a bar of at least 20 px and the footer (wrapped).
    QFont bold = font();
    bold.setBold(true);
    const int inner = width - 12;
    const int line = fontMetrics().height();
    const int title_h = std::max(wrapped_height(title(), bold, inner),
                                 wrapped_height(tr("Window full (%1 / %2): update %3 applied, .grad zeroed")
                                                    .arg(window_size_).arg(window_size_).arg(updates_ + 1),
                                                bold, inner));
    const int footer_h = wrapped_height(footer(), font(), inner);
    return std::max(minimumSizeHint().height(), 4 + title_h + 4 + 6 + (line + 8) + line + 4 + 12 + footer_h + 2 + 4);
}

void AccumulationMeter::reset(int accumulation_steps) {
    updateGeometry(); // the title's wrapped height follows K
    window_size_ = std::max(1, accumulation_steps);
    filled_ = 0;
    synced_ = false;
    updates_ = 0;
    norms_.assign(static_cast<std::size_t>(window_size_), 0.0);
    scale_ = 0.0;
    update();
}

void AccumulationMeter::show_record(const accum::MicroStepRecord& r) {
    const int k = std::max(1, r.window_size > 0 ? r.window_size : window_size_);
    if (k != int(norms_.size()) || r.window_index <= 1) norms_.assign(static_cast<std::size_t>(std::max(k, window_size_)), 0.0);
    window_size_ = std::max(window_size_, k);
    filled_ = std::clamp(r.window_index, 0, int(norms_.size()));
    // The engine measures the norm only at teaching pace; at full speed there are no bars.
    const double norm = std::isfinite(r.grad_norm) ? r.grad_norm : 0.0;
    if (filled_ > 0) norms_[static_cast<std::size_t>(filled_ - 1)] = norm;
    for (int i = filled_; i < int(norms_.size()); ++i) norms_[static_cast<std::size_t>(i)] = 0.0;
    scale_ = std::max(scale_, norm);
    synced_ = r.sync;
    updates_ = r.step + (r.sync ? 1 : 0);
    update();
}

void AccumulationMeter::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QRectF area = rect().adjusted(6, 4, -6, -4);
    const QColor fill(0x2a, 0x6f, 0xdb), sync_fill(0x2e, 0x9e, 0x4f), empty(0xe6, 0xe9, 0xef);

    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    // Heights follow the font, so presentation mode's larger text keeps its room;
    // the title and the footer wrap in a narrow meter.
    const double line = fontMetrics().height();
    const QString heading = title();
    const int inner = static_cast<int>(area.width());
    const QRectF title_rect(area.left(), area.top(), area.width(), wrapped_height(heading, bold, inner) + 4);
    p.setPen(synced_ ? sync_fill.darker(130) : palette().color(QPalette::WindowText));
    p.drawText(title_rect, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, heading);
    p.setFont(font());

    const int n = std::max(1, int(norms_.size()));
    const double gap = 6.0;
    const double slot_w = (area.width() - gap * (n - 1)) / n;
    const double bars_top = title_rect.bottom() + 6;
    const double slot_h = line + 8;
    const double bar_area_top = bars_top + slot_h + line + 4; // room for the value above a full bar
    // The footer only where it has room under the bars (its words are the tooltip too).
    const double bar_area_top_guess = title_rect.bottom() + 6 + line + 8 + line + 4;
    const double footer_h =
        area.bottom() - bar_area_top_guess - 12 >= wrapped_height(footer(), font(), inner) + 2
            ? wrapped_height(footer(), font(), inner)
            : 0.0;
    const double bar_area_h = std::max(12.0, area.bottom() - footer_h - 2 - bar_area_top);
    for (int i = 0; i < n; ++i) {
        const QRectF slot(area.left() + i * (slot_w + gap), bars_top, slot_w, slot_h);
        const bool on = i < filled_;
        p.setPen(Qt::NoPen);
        p.setBrush(on ? (synced_ ? sync_fill : fill) : empty);
        p.drawRoundedRect(slot, 4, 4);
        p.setPen(on ? Qt::white : palette().color(QPalette::PlaceholderText));
        p.drawText(slot, Qt::AlignCenter, QString::number(i + 1));
        // The accumulated gradient's norm after this micro-batch's backward.
        const double v = i < int(norms_.size()) ? norms_[static_cast<std::size_t>(i)] : 0.0;
        if (on && scale_ > 0) {
            const double h = bar_area_h * std::clamp(v / scale_, 0.0, 1.0);
            const QRectF bar(slot.left() + slot_w * 0.25, bar_area_top + bar_area_h - h, slot_w * 0.5, h);
            p.setPen(Qt::NoPen);
            p.setBrush((synced_ ? sync_fill : fill).lighter(135));
            p.drawRect(bar);
            p.setPen(palette().color(QPalette::WindowText));
            p.drawText(QRectF(slot.left(), bar.top() - line, slot_w, line), Qt::AlignCenter, QString::number(v, 'f', 3));
        }
    }
    p.setPen(palette().color(QPalette::PlaceholderText));
    if (footer_h > 0)
        p.drawText(QRectF(area.left(), area.bottom() - footer_h, area.width(), footer_h),
                   Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, footer());
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
