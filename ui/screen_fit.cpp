#include "screen_fit.h"

#include <algorithm>

namespace studio {

QSize first_window_size(const QSize& available, const QSize& minimum, const QSize& frame) {
    // Room for the contents: the screen less the frame and a margin of 2 % a side
    // (none on a screen too small for it).
    const int room_w = available.width() - frame.width();
    const int room_h = available.height() - frame.height();
    const int margin_w = room_w >= kDeskWindowSize.width() ? 0 : available.width() / 25;
    const int margin_h = room_h >= kDeskWindowSize.height() ? 0 : available.height() / 25;
    int w = std::min(kDeskWindowSize.width(), room_w - margin_w);
    int h = std::min(kDeskWindowSize.height(), room_h - margin_h);
    // The minimum wins over the margin, the screen over the minimum.
    w = std::min(std::max(w, minimum.width()), room_w);
    h = std::min(std::max(h, minimum.height()), room_h);
    return {std::max(w, 1), std::max(h, 1)};
}

QRect clamp_to_screen(const QRect& frame, const QRect& available) {
    QRect r = frame;
    r.setWidth(std::min(r.width(), available.width()));
    r.setHeight(std::min(r.height(), available.height()));
    if (r.right() > available.right()) r.moveRight(available.right());
    if (r.bottom() > available.bottom()) r.moveBottom(available.bottom());
    if (r.left() < available.left()) r.moveLeft(available.left());
    if (r.top() < available.top()) r.moveTop(available.top());
    return r;
}

double presentation_scale(int screen_height, double desk_font_pixels) {
    if (desk_font_pixels <= 0) return kMinPresentationScale;
    const double wanted = (screen_height / 40.0) / desk_font_pixels;
    return std::clamp(wanted, kMinPresentationScale, 2.5);
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
