// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed/failures.h"

#include <sstream>

#include <c10/util/Exception.h>
#ifdef ACCUM_WITH_GLOO
#include <gloo/common/error.h>
#endif

#include "torch_compat.h"

namespace accum::dist {

using Kind = DistributedError::Kind;

const char* failure_kind_name(Kind kind) {
    switch (kind) {
    case Kind::PeerLost: return "peer-lost";
    case Kind::Timeout: return "timeout";
    case Kind::AddressInUse: return "address-in-use";
    case Kind::Unreachable: return "unreachable";
    case Kind::PeerFailed: return "peer-failed";
    case Kind::Failed: return "failed";
    }
    return "failed";
}

std::string seconds_text(std::chrono::milliseconds t) {
    std::ostringstream s;
    s << static_cast<double>(t.count()) / 1000.0 << " s";
    return s.str();
}

Kind classify_failure(const std::exception& e, bool waited_out) {
    // A question's failure; meet() turns a store not reached or served into its own error.
    if (const auto* store = dynamic_cast<const StoreError*>(&e))
        return store->kind() == StoreError::Kind::Timeout ? Kind::Timeout : Kind::PeerLost;
    switch (compat::c10d_error_type(e)) {
    case compat::C10dErrorType::Timeout:
    case compat::C10dErrorType::Store: return Kind::Timeout;
    case compat::C10dErrorType::Network: return Kind::PeerLost;
    // NCCL's collective failed: past its timeout it is one, else the peer's end.
    case compat::C10dErrorType::Backend: return waited_out ? Kind::Timeout : Kind::PeerLost;
    case compat::C10dErrorType::Unknown: break;
    }
#ifdef ACCUM_WITH_GLOO
    // Gloo says "timed out" and "connection closed" with the same type: a
    // socket that failed before the timeout was over is a peer lost.
    if (dynamic_cast<const gloo::IoException*>(&e)) return waited_out ? Kind::Timeout : Kind::PeerLost;
#endif
    return Kind::Failed;
}

} // namespace accum::dist
