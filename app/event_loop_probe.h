// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The studio's hidden --event-loop-probe FILE: how late the window's event loop
// serves a 10 ms timer, for bench/ (a busy loop shows as late ticks). Each tick's
// time since the probe started and the gap since the tick before it, in ms, and
// named marks (the run's start and end, a screenshot) are written to FILE as JSON
// {"interval_ms", "ticks": [[t, gap], ...], "marks": {name: t}} when the studio quits.

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>
#include <utility>
#include <vector>

class EventLoopProbe : public QObject {
public:
    EventLoopProbe(QString file, QObject* parent);
    void mark(const QString& name);
    bool has_mark(const QString& name) const;
    // Writes FILE; false (with the reason on stderr) when it cannot.
    bool write() const;

private:
    QString file_;
    QTimer timer_;
    QElapsedTimer clock_;
    qint64 last_ = -1;
    std::vector<std::pair<qint64, qint64>> ticks_;
    std::vector<std::pair<QString, qint64>> marks_;
};
