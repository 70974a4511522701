#pragma once
// A style's training loop as a listing for the code panel, and which of its
// lines a micro-batch executes. Listings live in resources/code/*.listing:
// plain source where a line may start with a tag such as "[forward]" or
// "[scale,backward]" naming the roles the line plays. Pure logic (QtCore
// only), so the highlight sequence is tested without a window.

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <vector>

#include "accum/records.h"

namespace studio {

// The lines of an accumulation loop that light up, in execution order.
enum class LineRole { Forward, LossScale, Backward, OptimizerStep, SchedulerStep, ZeroGrad };

QString role_name(LineRole role); // "forward", "scale", "backward", "step", "scheduler", "zero_grad"

// The roles one micro-batch executes: forward, loss / K and backward on every
// micro-batch; optimizer step, scheduler step and zero_grad only when it ends
// the accumulation window (record.sync).
std::vector<LineRole> highlight_roles(const accum::MicroStepRecord& record);

// highlight_roles for each record, in order.
std::vector<std::vector<LineRole>> highlight_sequence(const std::vector<accum::MicroStepRecord>& records);

struct CodeListing {
    QStringList lines;                 // without tags
    QMap<LineRole, QList<int>> lines_of; // role -> 0-based line numbers

    QString text() const { return lines.join(QLatin1Char('\n')); }
    QList<int> lines_for(LineRole role) const { return lines_of.value(role); }
};

// Parses the tagged text of a listing.
CodeListing parse_listing(const QString& tagged_text);

// The listing of a style ("pytorch", "accelerator", "trainer") in "cpp" or
// "py", from the application's resources (:/code/<style>.<language>.listing).
CodeListing load_listing(const QString& style, const QString& language);

} // namespace studio
