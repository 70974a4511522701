#pragma once
// Stand-in (see cuda_runtime_api.h): the driver API is not used by our code.
// SPDX-License-Identifier: GPL-3.0-or-later
