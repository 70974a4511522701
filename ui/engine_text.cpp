#include "engine_text.h"

#include <QCoreApplication>

namespace studio {

namespace {
class EngineText {
    Q_DECLARE_TR_FUNCTIONS(studio::EngineText)
};
} // namespace

QString run_status_text(accum::RunStatus status) {
    switch (status) {
    case accum::RunStatus::Completed: return EngineText::tr("Completed");
    case accum::RunStatus::Stopped: return EngineText::tr("Stopped");
    case accum::RunStatus::OutOfMemory: return EngineText::tr("Out of memory");
    case accum::RunStatus::Diverged: return EngineText::tr("Diverged");
    case accum::RunStatus::Error: return EngineText::tr("Error");
    }
    return {};
}

QString engine_message(const accum::SummaryRecord& summary) { return QString::fromStdString(summary.message); }

} // namespace studio
