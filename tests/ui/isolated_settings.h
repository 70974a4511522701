// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A test's studio keeps its settings and its saved runs in a folder of the
// test's own: never the user's configuration or ~/runs.

#include <QByteArray>
#include <QSettings>
#include <QStandardPaths>
#include <QString>

inline void isolate_settings(const QString& dir) {
    qputenv("XDG_CONFIG_HOME", dir.toUtf8());
    qputenv("HOME", dir.toUtf8()); // the runs the studio saves go here too
    QStandardPaths::setTestModeEnabled(true);
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir);
}
