#!/usr/bin/env python3
"""Your own model for accum-run and the studio: a small CNN for 28 × 28 grey
images, scripted with torch.jit.script. Its forward takes the images and
returns logits; the engine applies its cross-entropy.

    python3 examples/scripted_cnn.py cnn.pt
    accum-run --model cnn.pt --batch-size 64 --accumulation-steps 4   # Fashion-MNIST, the default data

After training, OUTPUT_DIR/model.torchscript.pt holds the trained module
(torch.jit.load reads it), as does every checkpoint."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class SmallCnn(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 7 * 7, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: images [B, 1, 28, 28] → logits [B, classes]."""
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def build(seed=0, classes=10):
    torch.manual_seed(seed)
    return torch.jit.script(SmallCnn(classes))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", help="the TorchScript file to write, e.g. cnn.pt")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    module = build(args.seed)
    module.save(args.output)
    print("wrote %s: SmallCnn, %d parameters, forward(x) → logits" %
          (args.output, sum(p.numel() for p in module.parameters())))
# SPDX-License-Identifier: GPL-3.0-or-later
