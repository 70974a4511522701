// ReLU followed by a 2 × 2 max-pool (stride 2), as one autograd node on the CPU,
// keeping for backward only what backward needs.
//
// LibTorch runs it as two operators: the ReLU saves its output (the size of the
// convolution's: 100 KB per 28 × 28 image for the CNN's first block) and the
// max-pool saves its input's argmax as int64 indices (half that again). ReLU and
// max commute, and the gradient of max(relu(x)) goes to the window's argmax when
// the pooled value is positive and nowhere otherwise: so this node saves the
// pooled output (a quarter of the input) and the argmax within each window as one
// byte. For the CNN that is 31 KB per image instead of 150 KB, with and without
// gradient checkpointing, and one pass over the input instead of three.
#pragma once

#include <ATen/core/Tensor.h>

namespace accum {

// Whether relu_max_pool2x2 can serve this call: a 4-D float32 tensor [N, C, H, W]
// on the CPU with H, W ≥ 2.
bool relu_max_pool_available(const at::Tensor& input);

// max_pool2d(relu(input), kernel 2, stride 2) → [N, C, H / 2, W / 2] (odd rows and
// columns at the end dropped, as MaxPool2d(2)). The first maximum of a window
// wins, as in LibTorch's max-pool, and a NaN counts as the maximum.
at::Tensor relu_max_pool2x2(const at::Tensor& input);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
