#pragma once
// Stand-in: generated when LibTorch is built, missing from a CPU-only install.
#define C10_CUDA_BUILD_SHARED_LIBS
// SPDX-License-Identifier: GPL-3.0-or-later
