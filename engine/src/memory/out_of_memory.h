#pragma once
// Recognising out-of-memory errors (LibTorch's OutOfMemoryError, from our CPU
// budget or the CUDA caching allocator) and Accelerate's retry-smaller loop.

#include <cstdint>
#include <exception>
#include <functional>
#include <string>

namespace accum {

bool is_out_of_memory_error(const std::exception& e);

// Accelerate's find_executable_batch_size: calls fn(batch_size); on an
// out-of-memory error retries with int(batch_size * 0.9). Throws
// std::runtime_error("No executable batch size found, reached zero.") at zero.
// `on_retry` is told each new size (above zero) before it is tried.
void find_executable_batch_size(const std::function<void(std::int64_t)>& fn, std::int64_t starting_batch_size,
                                const std::function<void(std::int64_t, const std::string&)>& on_retry = {});

} // namespace accum
