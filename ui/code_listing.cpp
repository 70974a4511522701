#include "code_listing.h"

#include <QFile>
#include <QRegularExpression>

namespace studio {

namespace {

const QMap<QString, LineRole>& roles_by_name() {
    static const QMap<QString, LineRole> map = {
        {QStringLiteral("forward"), LineRole::Forward},         {QStringLiteral("scale"), LineRole::LossScale},
        {QStringLiteral("backward"), LineRole::Backward},       {QStringLiteral("step"), LineRole::OptimizerStep},
        {QStringLiteral("scheduler"), LineRole::SchedulerStep}, {QStringLiteral("zero_grad"), LineRole::ZeroGrad},
    };
    return map;
}

} // namespace

QString role_name(LineRole role) { return roles_by_name().key(role); }

std::vector<LineRole> highlight_roles(const accum::MicroStepRecord& record) {
    std::vector<LineRole> roles = {LineRole::Forward, LineRole::LossScale, LineRole::Backward};
    if (record.sync) {
        roles.push_back(LineRole::OptimizerStep);
        roles.push_back(LineRole::SchedulerStep);
        roles.push_back(LineRole::ZeroGrad);
    }
    return roles;
}

std::vector<std::vector<LineRole>> highlight_sequence(const std::vector<accum::MicroStepRecord>& records) {
    std::vector<std::vector<LineRole>> sequence;
    sequence.reserve(records.size());
    for (const auto& r : records) sequence.push_back(highlight_roles(r));
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

CodeListing load_listing(const QString& style, const QString& language) {
    QFile file(QStringLiteral(":/code/%1.%2.listing").arg(style, language));
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) return {};
    return parse_listing(QString::fromUtf8(file.readAll()));
}

} // namespace studio
