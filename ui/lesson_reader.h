// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The lesson file's reader as plain functions of Qt Core, the engine's torch-free
// API and the experiments' table: no widget, so that tests/fuzz builds it as it
// is. The check kinds and measured sentences a file may name come in as a
// vocabulary; the studio's own (check_kinds(), measured_kinds()) is what
// parse_lesson() and read_lesson_file() in lesson.h pass.

#include <QByteArray>
#include <QString>
#include <optional>
#include <utility>
#include <vector>

#include "lesson.h"

namespace studio {

struct LessonVocabulary {
    const std::vector<CheckKind>& checks;
    const std::vector<std::pair<const char*, QString (*)()>>& measured;
};

// parse_lesson() with the kinds of `vocabulary`.
std::optional<Lesson> parse_lesson_with(const QByteArray& text, const QString& name,
                                        const LessonVocabulary& vocabulary, QString* error);

} // namespace studio
