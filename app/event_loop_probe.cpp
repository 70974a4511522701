// SPDX-License-Identifier: GPL-3.0-or-later
#include "event_loop_probe.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstdio>

namespace {
constexpr int kIntervalMs = 10;
}

EventLoopProbe::EventLoopProbe(QString file, QObject* parent) : QObject(parent), file_(std::move(file)) {
    timer_.setTimerType(Qt::PreciseTimer);
    timer_.setInterval(kIntervalMs);
    connect(&timer_, &QTimer::timeout, this, [this] {
        const qint64 now = clock_.elapsed();
        if (last_ >= 0) ticks_.emplace_back(now, now - last_);
        last_ = now;
    });
    clock_.start();
    timer_.start();
}

void EventLoopProbe::mark(const QString& name) { marks_.emplace_back(name, clock_.elapsed()); }

bool EventLoopProbe::has_mark(const QString& name) const {
    for (const auto& m : marks_)
        if (m.first == name) return true;
    return false;
}

bool EventLoopProbe::write() const {
    QJsonArray ticks;
    for (const auto& [t, gap] : ticks_) ticks.append(QJsonArray{t, gap});
    QJsonObject marks;
    for (const auto& [name, t] : marks_) marks.insert(name, t);
    const QJsonObject root{{QStringLiteral("interval_ms"), kIntervalMs}, {QStringLiteral("ticks"), ticks},
                           {QStringLiteral("marks"), marks}};
    QFile out(file_);
    const auto bytes = QJsonDocument(root).toJson(QJsonDocument::Compact);
    if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate) || out.write(bytes) != bytes.size() || !out.flush()) {
        std::fprintf(stderr, "accum-studio: --event-loop-probe: cannot write %s: %s\n", qPrintable(file_),
                     qPrintable(out.errorString()));
        return false;
    }
    return true;
}
