#pragma once
// The measured curve of the lab's "no_sync vs sync each" demo: how much faster
// no_sync trains than syncing every micro-batch, against the link's rate, for
// two hosts — what the benchmark measured (bench/two_hosts_bench.py writes
// bench/TWO_HOSTS_RESULTS.md and resources/lab/two_hosts_speedup.json, compiled
// in as :/lab/two_hosts_speedup.json). Nothing here is made up: no resource,
// no curve. Reading it is a plain function, tested alone.

#include <QByteArray>
#include <QString>
#include <optional>
#include <vector>

class QCustomPlot;
class QFont;

namespace studio {

struct LinkPoint {
    double tbf_mbit = 0;      // the rate the link was shaped to; 0: unshaped
    double measured_mbit = 0; // what one TCP stream reached on it
    double engine = 0;        // accum-run: no_sync samples/s / sync-each samples/s
    double eager = 0;         // eager PyTorch DDP, the same ratio (0: not measured)
    double predicted = 0;     // 1 + (K − 1)·S/T from the no_sync run's own figures
};

struct LinkSeries {
    QString model; // "cnn", "mlp"
    std::vector<LinkPoint> points; // slowest link first
};

struct LinkCurve {
    QString measured; // when and by what
    QString link;     // what the link was
    QString machine;
    std::vector<LinkSeries> series;
};

// The benchmark's JSON; nullopt (and `error`) when it is not one, or a ratio is
// not a positive finite number.
std::optional<LinkCurve> parse_link_curve(const QByteArray& json, QString* error = nullptr);
// The one compiled into the studio.
std::optional<LinkCurve> measured_link_curve();
// "100 Mbit/s", "1 Gbit/s", "unshaped".
QString link_rate_text(const LinkPoint& point);
// One sentence with the CNN's figures (the lesson's no_sync step); empty without them.
QString link_curve_sentence(const LinkCurve& curve);
// Draws the curve into `plot` (cleared first): speed-up against link rate, a
// series per model for the engine (solid, its value at each point) and for
// eager DDP (dashed), a line at 1 ×, and a title saying it was measured and where.
void draw_link_curve(QCustomPlot* plot, const LinkCurve& curve, const QFont& font);

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
