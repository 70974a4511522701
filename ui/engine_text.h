#pragma once
// The engine's words in the interface's language. Every sentence the studio shows
// about a run's outcome goes through here. Today the engine reports a status and an
// English message, shown as it is; when the engine reports a message code with its
// arguments (out of memory with B, K, budget, peak and suggestion; diverged at step
// N; data missing at PATH…), engine_message() renders the code through tr() and
// keeps the English text for codes it does not know.

#include <QString>

#include "accum/records.h"

namespace studio {

// "Completed", "Out of memory", … translated.
QString run_status_text(accum::RunStatus status);

// The summary's message in the interface's language (the English text for now).
QString engine_message(const accum::SummaryRecord& summary);

} // namespace studio
