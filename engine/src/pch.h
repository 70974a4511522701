#pragma once
// Precompiled header for the engine's torch-heavy translation units.
#include <torch/nn.h>
#include <torch/optim.h>
#include <torch/serialize.h>
#include <torch/utils.h>
#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>
// SPDX-License-Identifier: GPL-3.0-or-later
