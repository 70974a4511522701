// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: a lesson file (docs/lessons.md) must load or be refused as
// "FILE, line N: FIELD: reason" with a line inside the file, never crash. The
// reader is built as the studio builds it (ui/lesson_file.cpp, no widget); the
// check kinds come as a vocabulary of the studio's names, whose checks the
// reader never calls.
#include <QByteArray>
#include <QRegularExpression>
#include <QString>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "lesson_reader.h"

namespace {

studio::LessonVerdict no_verdict(const std::vector<studio::RunResult>&, const studio::CheckParameters&) { return {}; }
QString no_sentence() { return {}; }

const std::vector<studio::CheckKind>& kinds() {
    static const std::vector<studio::CheckKind> k = {
        {"out-of-memory", {}, no_verdict},
        {"accumulates", {}, no_verdict},
        {"same-loss-less-memory", {{"tolerance", 1e-5}}, no_verdict},
        {"same-loss", {{"tolerance", 1e-5}}, no_verdict},
        {"token-loss-visible", {{"visible", 1e-2}, {"tolerance", 1e-5}}, no_verdict},
        {"batchnorm-visible", {{"visible", 1e-3}}, no_verdict},
        {"scheduler-per-micro-batch", {}, no_verdict},
        {"memory-levers", {{"tolerance", 1e-5}}, no_verdict},
        {"loss-scale-per-micro-batch", {{"visible", 1e-2}}, no_verdict},
        {"no-sync", {{"tolerance", 1e-5}}, no_verdict},
        {"eval-log", {{"evaluations", 1.0}}, no_verdict},
    };
    return k;
}

const std::vector<std::pair<const char*, QString (*)()>>& measured() {
    static const std::vector<std::pair<const char*, QString (*)()>> m = {{"two-hosts-link-curve", no_sentence}};
    return m;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const QByteArray text(reinterpret_cast<const char*>(data), qsizetype(size));
    QString error;
    const auto lesson = studio::parse_lesson_with(text, QStringLiteral("fuzz.json"), {kinds(), measured()}, &error);
    if (lesson) {
        if (lesson->steps.empty() || lesson->languages.isEmpty()) __builtin_trap();
        for (const auto& step : lesson->steps) (void)step.config();
        return 0;
    }
    // A refusal names the file, a line of it and a field, then the reason.
    // (A field names a key of the file, which may hold any character.)
    static const QRegularExpression form(QStringLiteral("^fuzz\\.json, line (\\d+): .+: .+$"),
                                         QRegularExpression::DotMatchesEverythingOption);
    const auto match = form.match(error);
    const int line = match.hasMatch() ? match.captured(1).toInt() : 0;
    if (line < 1 || line > text.count('\n') + 1) {
        std::fprintf(stderr, "not a refusal with a line of the file: %s\n", qPrintable(error));
        __builtin_trap();
    }
    return 0;
}
