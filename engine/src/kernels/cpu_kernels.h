// The hand-written CPU kernels (attention_kernels.h, dense_kernels.h, loss_kernels.h) run an
// AVX2+FMA build where the processor has one, a portable build otherwise.
#pragma once

namespace accum {

// For tests: run the portable kernels even where AVX2+FMA is available.
void use_portable_kernels(bool portable);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
