#include "memory/out_of_memory.h"

#include <stdexcept>

#include <c10/util/Exception.h>

namespace accum {

bool is_out_of_memory_error(const std::exception& e) {
    if (dynamic_cast<const c10::OutOfMemoryError*>(&e)) return true;
    // Older CUDA builds report "CUDA out of memory" as a plain c10::Error.
    return std::string(e.what()).find("out of memory") != std::string::npos;
}

void find_executable_batch_size(const std::function<void(std::int64_t)>& fn, std::int64_t batch_size,
                                const std::function<void(std::int64_t, const std::string&)>& on_retry) {
    while (true) {
        if (batch_size == 0) throw std::runtime_error("No executable batch size found, reached zero.");
        try {
            fn(batch_size);
            return;
        } catch (const std::exception& e) {
            if (!is_out_of_memory_error(e)) throw;
            batch_size = static_cast<std::int64_t>(static_cast<double>(batch_size) * 0.9);
            if (on_retry && batch_size > 0) on_retry(batch_size, e.what());
        }
    }
}

} // namespace accum
