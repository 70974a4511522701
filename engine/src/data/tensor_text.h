#pragma once
// A tensor's shape and dtype as the messages about a user's files write them,
// in Python's words: "[8, 4]", "int64", "float32" (the tensors file's checks,
// the TorchScript module's probe).

#include <string>

#include <torch/types.h>

namespace accum {

inline std::string shape_text(const torch::Tensor& t) {
    std::string out = "[";
    for (std::int64_t d = 0; d < t.dim(); ++d) out += (d ? ", " : "") + std::to_string(t.size(d));
    return out + "]";
}

inline std::string dtype_text(const torch::Tensor& t) {
    switch (t.scalar_type()) {
    case torch::kInt64: return "int64";
    case torch::kInt32: return "int32";
    case torch::kInt16: return "int16";
    case torch::kInt8: return "int8";
    case torch::kUInt8: return "uint8";
    case torch::kBool: return "bool";
    case torch::kFloat32: return "float32";
    case torch::kFloat64: return "float64";
    case torch::kFloat16: return "float16";
    case torch::kBFloat16: return "bfloat16";
    default: return c10::toString(t.scalar_type());
    }
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
