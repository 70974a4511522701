#include "link_curve.h"

#include <QCoreApplication>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cmath>
#include <qcustomplot.h>

#include "plot_look.h"

namespace studio {

namespace {

QString model_name(const QString& key) { return key == QLatin1String("cnn") ? QStringLiteral("CNN") : key.toUpper(); }

} // namespace

std::optional<LinkCurve> parse_link_curve(const QByteArray& json, QString* error) {
    auto fail = [&](const QString& why) -> std::optional<LinkCurve> {
        if (error) *error = why;
        return std::nullopt;
    };
    QJsonParseError parse{};
    const auto doc = QJsonDocument::fromJson(json, &parse);
    if (!doc.isObject()) return fail(QStringLiteral("not a JSON object: %1").arg(parse.errorString()));
    const auto root = doc.object();
    LinkCurve curve;
    curve.measured = root.value(QStringLiteral("measured")).toString();
    curve.link = root.value(QStringLiteral("link")).toString();
    curve.machine = root.value(QStringLiteral("machine")).toString();
    const auto models = root.value(QStringLiteral("models")).toObject();
    for (auto it = models.begin(); it != models.end(); ++it) {
        LinkSeries series{it.key(), {}};
        for (const auto& value : it.value().toArray()) {
            const auto o = value.toObject();
            LinkPoint p;
            p.tbf_mbit = o.value(QStringLiteral("tbf_mbit")).toDouble(0.0); // null: unshaped
            p.measured_mbit = o.value(QStringLiteral("measured_mbit")).toDouble(0.0);
            p.engine = o.value(QStringLiteral("engine")).toDouble(0.0);
            p.eager = o.value(QStringLiteral("eager")).toDouble(0.0);
            p.predicted = o.value(QStringLiteral("predicted")).toDouble(0.0);
            if (!std::isfinite(p.engine) || p.engine <= 0)
                return fail(QStringLiteral("%1: a point without a positive engine ratio").arg(it.key()));
            series.points.push_back(p);
        }
        if (series.points.empty()) return fail(QStringLiteral("%1: no points").arg(it.key()));
        curve.series.push_back(std::move(series));
    }
    if (curve.series.empty()) return fail(QStringLiteral("no models"));
    return curve;
}

std::optional<LinkCurve> measured_link_curve() {
    QFile f(QStringLiteral(":/lab/two_hosts_speedup.json"));
    if (!f.open(QIODevice::ReadOnly)) return std::nullopt;
    return parse_link_curve(f.readAll());
}

QString link_rate_text(const LinkPoint& point) {
    if (point.tbf_mbit <= 0) return QCoreApplication::translate("studio::LinkCurve", "unshaped");
    if (point.tbf_mbit >= 1000) return QStringLiteral("%1 Gbit/s").arg(point.tbf_mbit / 1000.0, 0, 'g', 3);
    return QStringLiteral("%1 Mbit/s").arg(point.tbf_mbit, 0, 'g', 3);
}

QString link_curve_sentence(const LinkCurve& curve) {
    const LinkSeries* cnn = nullptr;
    for (const auto& s : curve.series)
        if (s.model == QLatin1String("cnn")) cnn = &s;
    if (!cnn || cnn->points.size() < 2) return {};
    QStringList figures;
    for (const auto& p : cnn->points)
        figures << QCoreApplication::translate("studio::LinkCurve", "%1 × at %2").arg(p.engine, 0, 'f', 1).arg(link_rate_text(p));
    return QCoreApplication::translate("studio::LinkCurve", "Measured between two hosts, no_sync trains the CNN %1 as fast as syncing every micro-batch: the "
              "slower the network, the more the skipped all-reduces save.")
        .arg(figures.join(QStringLiteral(", ")));
}

void draw_link_curve(QCustomPlot* plot, const LinkCurve& curve, const QFont& font) {
    plot->clearPlottables();
    plot->clearItems();
    // The rates along x, evenly (they are decades apart), named under each point.
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    std::size_t most = 0;
    for (const auto& s : curve.series) {
        for (std::size_t i = 0; i < s.points.size(); ++i) {
            const auto& p = s.points[i];
            QString label = link_rate_text(p);
            if (p.measured_mbit > 0) // what a TCP stream reached on it (the axis says so)
                label += p.measured_mbit >= 1000 ? QStringLiteral("\n(%1 G)").arg(p.measured_mbit / 1000.0, 0, 'f', 1)
                                                 : QStringLiteral("\n(%1 M)").arg(p.measured_mbit, 0, 'f', 0);
            if (i >= most) ticks->addTick(static_cast<double>(i), label);
        }
        most = std::max(most, s.points.size());
    }
    double top = 1.2;
    int c = 0;
    for (const auto& s : curve.series) {
        const QColor colour = run_colour(c++);
        QVector<double> x, engine, eager;
        for (std::size_t i = 0; i < s.points.size(); ++i) {
            x << static_cast<double>(i);
            engine << s.points[i].engine;
            eager << (s.points[i].eager > 0 ? s.points[i].eager : std::nan(""));
            top = std::max({top, s.points[i].engine, s.points[i].eager});
            auto* value = new QCPItemText(plot);
            value->position->setCoords(static_cast<double>(i), s.points[i].engine);
            value->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
            value->setText(QStringLiteral("%1×").arg(s.points[i].engine, 0, 'f', 2));
            value->setColor(colour.darker(130));
            value->setFont(font);
        }
        auto* g = plot->addGraph();
        g->setName(QCoreApplication::translate("studio::LinkCurve", "%1, accum-run").arg(model_name(s.model)));
        g->setPen(QPen(colour, 2.5));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 7));
        g->setData(x, engine, true);
        auto* e = plot->addGraph();
        e->setName(QCoreApplication::translate("studio::LinkCurve", "%1, eager DDP").arg(model_name(s.model)));
        e->setPen(QPen(colour.lighter(130), 1.5, Qt::DashLine));
        e->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, 5));
        e->setData(x, eager, true);
    }
    auto* one = new QCPItemStraightLine(plot);
    one->point1->setCoords(0, 1.0);
    one->point2->setCoords(1, 1.0);
    one->setPen(QPen(QColor(120, 120, 120), 1, Qt::DotLine));
    plot->xAxis->setTicker(ticks);
    plot->xAxis->setRange(-0.5, static_cast<double>(std::max<std::size_t>(most, 1)) - 0.4);
    plot->xAxis->setLabel(
        QCoreApplication::translate("studio::LinkCurve", "link between the two hosts (in brackets: its rate as measured)"));
    plot->yAxis->setRange(0.8, top * 1.5); // room for the legend above the curves' right end
    plot->yAxis->setLabel(QCoreApplication::translate("studio::LinkCurve", "no_sync ÷ sync each (samples/s)"));
    plot->replot();
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
