#!/usr/bin/python3
"""The machine's measured FP32 peak on one core: a large square GEMM through
LibTorch (the same BLAS the engine uses). Prints GFLOP/s (best of several)."""
import sys
import time

import torch

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
n = 1024
a, b = torch.randn(n, n), torch.randn(n, n)
best = 0.0
for _ in range(12):
    t = time.perf_counter()
    for _ in range(5):
        torch.mm(a, b)
    dt = (time.perf_counter() - t) / 5
    best = max(best, 2 * n ** 3 / dt / 1e9)
print(f"{best:.2f}")
