#include "code_listing.h"

#include <QFile>
#include <QRegularExpression>
#include <algorithm>
#include <limits>

namespace studio {

namespace {

const QMap<QString, LineRole>& roles_by_name() {
    static const QMap<QString, LineRole> map = {
        {QStringLiteral("autocast"), LineRole::Autocast},       {QStringLiteral("forward"), LineRole::Forward},
        {QStringLiteral("scale"), LineRole::LossScale},         {QStringLiteral("backward"), LineRole::Backward},
        {QStringLiteral("unscale"), LineRole::Unscale},         {QStringLiteral("step"), LineRole::OptimizerStep},
        {QStringLiteral("scheduler"), LineRole::SchedulerStep}, {QStringLiteral("update"), LineRole::ScalerUpdate},
        {QStringLiteral("zero_grad"), LineRole::ZeroGrad},
        {QStringLiteral("no_sync"), LineRole::NoSync},          {QStringLiteral("all_reduce"), LineRole::AllReduce},
    };
    return map;
}

} // namespace

QString role_name(LineRole role) { return roles_by_name().key(role); }

std::vector<LineRole> highlight_roles(const accum::MicroStepRecord& record, int world_size) {
    const bool data_parallel = world_size > 1;
    const bool scaling = record.loss_scale > 0;
    std::vector<LineRole> roles;
    roles.reserve(11); // every role at most once
    if (data_parallel && record.grad_allreduces == 0) roles.push_back(LineRole::NoSync);
    if (record.autocast) roles.push_back(LineRole::Autocast);
    for (const auto role : {LineRole::Forward, LineRole::LossScale, LineRole::Backward}) roles.push_back(role);
    if (data_parallel && record.grad_allreduces > 0) roles.push_back(LineRole::AllReduce);
    if (record.sync) {
        if (scaling) roles.push_back(LineRole::Unscale);
        roles.push_back(LineRole::OptimizerStep);
        if (scaling) roles.push_back(LineRole::ScalerUpdate);
        roles.push_back(LineRole::SchedulerStep);
        roles.push_back(LineRole::ZeroGrad);
    }
    return roles;
}

std::vector<std::vector<LineRole>> highlight_sequence(const std::vector<accum::MicroStepRecord>& records,
                                                      int world_size) {
    std::vector<std::vector<LineRole>> sequence;
    sequence.reserve(records.size());
    for (const auto& r : records) sequence.push_back(highlight_roles(r, world_size));
    return sequence;
}

CodeListing parse_listing(const QString& tagged_text) {
    static const QRegularExpression tag(QStringLiteral("^\\[([a-z_,]+)\\]"));
    CodeListing listing;
    QString text = tagged_text;
    if (text.endsWith(QLatin1Char('\n'))) text.chop(1);
    const auto lines = text.split(QLatin1Char('\n'));
    for (const auto& raw : lines) {
        QString line = raw;
        const auto match = tag.match(line);
        if (match.hasMatch()) {
            for (const auto& name : match.captured(1).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
                const auto it = roles_by_name().constFind(name);
                if (it != roles_by_name().constEnd()) listing.lines_of[it.value()].append(int(listing.lines.size()));
            }
            line = line.mid(match.capturedLength());
        }
        listing.lines << line;
    }
    return listing;
}

CodeListing listing_from_source(const QString& source, const QString& comment, const QString& title) {
    const auto lines = source.split(QLatin1Char('\n'));
    const QString begin = comment + QStringLiteral(" listing:begin"), end = comment + QStringLiteral(" listing:end");
    qsizetype first = -1, last = -1;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        if (first < 0 && lines[i].trimmed() == begin) first = i + 1;
        else if (first >= 0 && lines[i].trimmed() == end) {
            last = i;
            break;
        }
    }
    if (first < 0 || last < 0) return {};
    const QRegularExpression tag(QStringLiteral("\\s*%1@([a-z_,]+)\\s*$").arg(QRegularExpression::escape(comment)));
    qsizetype indent = std::numeric_limits<qsizetype>::max();
    for (qsizetype i = first; i < last; ++i) {
        const auto& line = lines[i];
        if (line.trimmed().isEmpty()) continue;
        qsizetype spaces = 0;
        while (spaces < line.size() && line[spaces] == QLatin1Char(' ')) ++spaces;
        indent = std::min(indent, spaces);
    }
    if (indent == std::numeric_limits<qsizetype>::max()) indent = 0;
    CodeListing listing;
    if (!title.isEmpty()) listing.lines << comment + QLatin1Char(' ') + title;
    for (qsizetype i = first; i < last; ++i) {
        QString line = lines[i].mid(indent);
        const auto match = tag.match(line);
        if (match.hasMatch()) {
            for (const auto& name : match.captured(1).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
                const auto it = roles_by_name().constFind(name);
                if (it != roles_by_name().constEnd()) listing.lines_of[it.value()].append(int(listing.lines.size()));
            }
            line.truncate(match.capturedStart());
        }
        while (line.endsWith(QLatin1Char(' '))) line.chop(1);
        listing.lines << line;
    }
    return listing;
}

CodeListing load_listing(const QString& style, const QString& language) {
    QFile source(QStringLiteral(":/code/%1.%2.source").arg(style, language));
    if (source.open(QIODevice::ReadOnly | QIODevice::Text)) {
        const bool cpp = language == QLatin1String("cpp");
        const QString title = cpp ? QStringLiteral("engine/src/styles/%1.cpp — the loop that runs")
                                        .arg(style == QLatin1String("pytorch") ? QStringLiteral("pytorch_loop") : style)
                                  : QStringLiteral("resources/code/%1.py — a script that runs")
                                        .arg(style == QLatin1String("pytorch") ? QStringLiteral("pytorch_loop") : style);
        return listing_from_source(QString::fromUtf8(source.readAll()), cpp ? QStringLiteral("//") : QStringLiteral("#"),
                                   title);
    }
    QFile file(QStringLiteral(":/code/%1.%2.listing").arg(style, language));
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) return {};
    return parse_listing(QString::fromUtf8(file.readAll()));
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
