#pragma once
// Where the window goes on a screen: its first size comes from the screen's
// available area (a projector of 1024 × 768 or 1280 × 720 as well as a desk
// monitor), and a saved geometry is moved and shrunk into the screen it is
// restored on. Plain functions of rectangles, tested without a window.

#include <QRect>
#include <QSize>

namespace studio {

// The size the studio is designed at, used where the screen has room for it.
inline constexpr QSize kDeskWindowSize{1500, 950};

// The first size of a window whose frame adds `frame` (left + right, top + bottom)
// around its contents, on a screen with `available` room: the desk size where it
// fits, else what the screen has (less a small margin, so the frame stays in view),
// never smaller than `minimum` unless the screen itself is smaller.
QSize first_window_size(const QSize& available, const QSize& minimum, const QSize& frame);

// `frame` moved, and shrunk where it is larger, so that it lies inside `available`.
QRect clamp_to_screen(const QRect& frame, const QRect& available);

// Presentation mode's enlargement of text and lines: at least kMinPresentationScale,
// and enough for text `screen_height / 40` pixels high (legible from the back of a
// room: 18 px on a 1280 × 720 projector, 27 px at 1080 lines), at most 2.5.
inline constexpr double kMinPresentationScale = 1.5;
inline constexpr double kPresentationTextFraction = 40.0; // text at least screen height / 40
double presentation_scale(int screen_height, double desk_font_pixels);

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
