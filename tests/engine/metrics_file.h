#pragma once
// Reading a run's metrics.jsonl back: the one reader the tests use. A line that
// does not parse fails the test that reads it (QTest::qFail at the caller's
// line), naming the file, the line number and the parser's error; it is never
// skipped, so a test cannot pass on the records that happened to parse.
// Qt and the engine's records only (no torch headers).

#include <QFile>
#include <QString>
#include <QtTest/QTest>

#include <source_location>
#include <variant>
#include <vector>

#include "accum/metrics_io.h"

namespace accum::testing {

// What the file is: a finished run's (every line must be a record) or one that
// may still be written or was cut by a kill (a missing file is empty, and a
// last line without its newline is not read yet).
enum class FileState { Finished, MayBeCut };

namespace detail {

inline void fail_reading(const QString& what, const std::source_location& where) {
    QTest::qFail(qPrintable(what), where.file_name(), static_cast<int>(where.line()));
}

} // namespace detail

// Every record of a metrics file, in order. On a file that cannot be read or a
// line that is not a record, the test fails there and the result is empty.
inline std::vector<AnyRecord> read_records(const QString& path, FileState state = FileState::Finished,
                                           std::source_location where = std::source_location::current()) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        if (state == FileState::MayBeCut && !f.exists()) return {};
        detail::fail_reading(path + " cannot be read: " + f.errorString(), where);
        return {};
    }
    QList<QByteArray> lines = f.readAll().split('\n');
    // After the last newline: nothing in a finished file, or a line still being written.
    if (state == FileState::MayBeCut || lines.last().isEmpty()) lines.removeLast();
    std::vector<AnyRecord> records;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        std::string error;
        auto record = parse_json_line(lines[i].toStdString(), error);
        if (!record) {
            detail::fail_reading(QStringLiteral("%1, line %2 is not a record: %3: %4")
                                     .arg(path)
                                     .arg(i + 1)
                                     .arg(QString::fromStdString(error), QString::fromUtf8(lines[i].left(200))),
                                 where);
            return {};
        }
        records.push_back(std::move(*record));
    }
    return records;
}

// The records of one kind, in order.
template <typename R>
std::vector<R> records_of(const std::vector<AnyRecord>& all) {
    std::vector<R> out;
    for (const auto& r : all)
        if (const auto* x = std::get_if<R>(&r)) out.push_back(*x);
    return out;
}

// The step records of a metrics file (read_records, with its failures).
inline std::vector<StepRecord> read_steps(const QString& path, FileState state = FileState::Finished,
                                          std::source_location where = std::source_location::current()) {
    return records_of<StepRecord>(read_records(path, state, where));
}

} // namespace accum::testing
// SPDX-License-Identifier: GPL-3.0-or-later
