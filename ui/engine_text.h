#pragma once
// The engine's words in the interface's language. Every sentence the studio shows
// about a run's outcome goes through here. The engine reports its messages as a
// code with arguments beside the English text (accum/engine_messages.h: the table
// of codes); each code is rendered here through tr() with its arguments. A code
// the studio does not know (or none: a summary from an older run directory) shows
// the engine's English text as it is.

#include <QString>
#include <optional>
#include <string>

#include "accum/records.h"

namespace studio {

// "Completed", "Out of memory", … translated.
QString run_status_text(accum::RunStatus status);

// `message` in the interface's language; `english` (the engine's own text) for a
// code the studio does not know.
QString engine_message(const accum::EngineMessage& message, const QString& english);

// The summary's message in the interface's language.
QString engine_message(const accum::SummaryRecord& summary);

// The status row's speed, "1683 samples/s": digits enough that a slow run (a
// half-billion-parameter model on the CPU: a sample every few seconds) reads
// "0.27 samples/s", never "0 samples/s".
QString samples_rate_text(double samples_per_second);

// Whether a measured ratio's spread, "low–high" (an en dash or a hyphen),
// includes 1: the measurement tells no difference apart, and the studio says so
// instead of "× faster". False for text that is not such a range.
bool spread_includes_one(const QString& spread);

// Whether the studio renders `code` itself (every code of the engine's table must be).
bool knows_engine_message(const std::string& code);

// The out-of-memory banner's sentences, rich text built from the message's
// arguments: what ran out and why (the micro-batch, K, the budget, what was
// asked for or the peak), and the suggestion (bold micro-batch and K). `brief`:
// the few words the status bar shows after "Out of memory" (micro-batch × K and
// the budget: short enough for a projector's status bar). Nothing when the
// summary's message is not an out-of-memory code.
struct OutOfMemoryText {
    QString what;
    QString suggestion; // empty when there is none (auto_find_batch_size retrying)
    QString brief;
};
std::optional<OutOfMemoryText> out_of_memory_text(const accum::SummaryRecord& summary);

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
