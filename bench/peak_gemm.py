#!/usr/bin/python3
"""The machine's measured GEMM peak: a large square matrix product through the
running torch's BLAS (Debian's LibTorch 1.13: OpenBLAS for float32; torch 2.11:
MKL for float32, oneDNN for bfloat16), on the threads given (default one).
Prints GFLOP/s, the best of several.

    peak_gemm.py [threads] [float32|bfloat16]
"""
import sys
import time

import torch

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
dtype = getattr(torch, sys.argv[2]) if len(sys.argv) > 2 else torch.float32
n = 1024
a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
best = 0.0
for _ in range(12):
    t = time.perf_counter()
    for _ in range(5):
        torch.mm(a, b)
    dt = (time.perf_counter() - t) / 5
    best = max(best, 2 * n ** 3 / dt / 1e9)
print(f"{best:.2f}")
# SPDX-License-Identifier: GPL-3.0-or-later
