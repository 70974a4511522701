#pragma once
// A style's training loop as a listing for the code panel, and which of its
// lines a micro-batch executes. The C++ listings are the region between
// "// listing:begin" and "// listing:end" of each style's own source
// (engine/src/styles/), the Python listings that of a script that runs with the
// real library (resources/code/pytorch_loop.py, accelerator.py, trainer.py); a
// trailing "//@forward" or "#@scale,backward" names the roles a line plays and is
// not shown. A tagged listing (parse_listing), where a line may start with
// "[forward]", is read where no source is compiled in. Pure logic (QtCore only),
// so the highlight sequence is tested without a window.

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <vector>

#include "accum/records.h"

namespace studio {

// The lines of an accumulation loop that light up, in execution order. Autocast
// (the scope around the forward) and the loss scaler's Unscale and ScalerUpdate
// light only in runs that use them; with several processes, NoSync is the line
// that enters model.no_sync() and AllReduce the backward that ends with the
// gradients' all-reduce.
enum class LineRole {
    Autocast, Forward, LossScale, Backward, Unscale, OptimizerStep, SchedulerStep, ScalerUpdate, ZeroGrad, NoSync,
    AllReduce
};

// "autocast", "forward", "scale", "backward", "unscale", "step", "scheduler",
// "update", "zero_grad", "no_sync", "all_reduce"
QString role_name(LineRole role);

// The roles one micro-batch executes: autocast (with mixed precision), forward,
// loss / K and backward on every micro-batch; when it ends the accumulation
// window (record.sync), the scaler's unscale_ (with a loss scaler), optimizer
// step, the scaler's update (with a loss scaler), scheduler step and zero_grad:
// the order of every style's engine code and script, so the lit line only moves down.
// In a run of `world_size` > 1 processes, a micro-batch without an all-reduce
// first enters no_sync(), and one with an all-reduce (record.grad_allreduces)
// has it after its backward.
std::vector<LineRole> highlight_roles(const accum::MicroStepRecord& record, int world_size = 1);

// highlight_roles for each record, in order.
std::vector<std::vector<LineRole>> highlight_sequence(const std::vector<accum::MicroStepRecord>& records,
                                                      int world_size = 1);

struct CodeListing {
    QStringList lines;                 // without tags
    QMap<LineRole, QList<int>> lines_of; // role -> 0-based line numbers

    QString text() const { return lines.join(QLatin1Char('\n')); }
    QList<int> lines_for(LineRole role) const { return lines_of.value(role); }
};

// Parses the tagged text of a listing.
CodeListing parse_listing(const QString& tagged_text);

// The marked region of a source file whose comments start with `comment`
// ("//" or "#"), its common indentation removed and its role tags taken out;
// `title` (may be empty) goes first, as a comment. Empty when the source has no
// complete region.
CodeListing listing_from_source(const QString& source, const QString& comment, const QString& title = {});

// The listing of a style ("pytorch", "accelerator", "trainer") in "cpp" or
// "py", from the application's resources (:/code/<style>.<language>.source, or
// .listing for the tagged ones).
CodeListing load_listing(const QString& style, const QString& language);

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
