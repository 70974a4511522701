#include "accumulation_meter.h"

#include <cmath>

#include <QPainter>
#include <QPainterPath>
#include <algorithm>

namespace studio {

AccumulationMeter::AccumulationMeter(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("accumulation_meter"));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    reset(1);
}

QSize AccumulationMeter::minimumSizeHint() const {
    // Title, slots, a value, a bar of at least 20 px and the footer: five lines and some room.
    const int line = fontMetrics().height();
    return {260, std::max(150, 5 * line + 60)};
}

QSize AccumulationMeter::sizeHint() const { return {360, minimumSizeHint().height() + 20}; }

void AccumulationMeter::reset(int accumulation_steps) {
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
    const QString title = synced_ ? tr("Window full (%1 / %2): update %3 applied, .grad zeroed")
                                        .arg(filled_).arg(window_size_).arg(updates_)
                                  : tr("Window: %1 / %2 micro-batches in .grad")
                                        .arg(filled_).arg(window_size_);
    // Heights follow the font, so presentation mode's larger text keeps its room.
    const double line = fontMetrics().height();
    const QRectF title_rect(area.left(), area.top(), area.width(), line + 4);
    p.setPen(synced_ ? sync_fill.darker(130) : palette().color(QPalette::WindowText));
    p.drawText(title_rect, Qt::AlignLeft | Qt::AlignVCenter, title);
    p.setFont(font());

    const int n = std::max(1, int(norms_.size()));
    const double gap = 6.0;
    const double slot_w = (area.width() - gap * (n - 1)) / n;
    const double bars_top = title_rect.bottom() + 6;
    const double slot_h = line + 8;
    const double bar_area_top = bars_top + slot_h + line + 4; // room for the value above a full bar
    const double bar_area_h = std::max(20.0, area.bottom() - line - 2 - bar_area_top);
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
    p.drawText(QRectF(area.left(), area.bottom() - line, area.width(), line), Qt::AlignLeft | Qt::AlignVCenter,
               tr("bars: ‖.grad‖ after each backward (it adds up)"));
}

} // namespace studio
