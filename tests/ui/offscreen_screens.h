#pragma once
// Screens made for the offscreen platform (its config file), so that the UI tests
// that check layouts at projector sizes run without an X server: side by side,
// the first one primary, 96 dpi.

#include <QByteArray>
#include <QFile>
#include <QGuiApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QScreen>
#include <QSize>
#include <QString>
#include <initializer_list>

namespace test_screens {

struct Screen {
    const char* name;
    QSize size;
};

// Writes the screens' config to `path` and points QT_QPA_PLATFORM at it. Call it
// before the QApplication is made; false when the file cannot be written.
inline bool use_offscreen_screens(const QString& path, std::initializer_list<Screen> screens) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return false;
    QJsonArray list;
    int x = 0;
    for (const auto& s : screens) {
        list.append(QJsonObject{{"name", s.name}, {"x", x}, {"y", 0}, {"width", s.size.width()},
                                {"height", s.size.height()}, {"logicalDpi", 96}, {"logicalBaseDpi", 96},
                                {"dpr", 1.0}});
        x += s.size.width();
    }
    file.write(QJsonDocument(QJsonObject{{"screens", list}}).toJson());
    file.close();
    qputenv("QT_QPA_PLATFORM", ("offscreen:configfile=" + path).toUtf8());
    return true;
}

inline QScreen* screen_of_size(int width, int height) {
    for (auto* s : QGuiApplication::screens())
        if (s->geometry().size() == QSize(width, height)) return s;
    return nullptr;
}

} // namespace test_screens
// SPDX-License-Identifier: GPL-3.0-or-later
