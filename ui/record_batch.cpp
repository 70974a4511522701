#include "record_batch.h"

namespace studio {

void register_record_types() {
    qRegisterMetaType<studio::RecordBatch>("studio::RecordBatch");
    qRegisterMetaType<accum::SummaryRecord>("accum::SummaryRecord");
    qRegisterMetaType<accum::RunConfig>("accum::RunConfig");
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
