"""Modules accum-run must refuse (run_models.py's bad_files case), one class each."""
from typing import Tuple

import torch
import torch.nn as nn


class WithLinear(nn.Module):
    """A Linear(4, 10) to hold parameters; each module below adds its forward."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 10)


class Frozen(WithLinear):
    """Every parameter has requires_grad False: nothing to train."""

    def __init__(self):
        super().__init__()
        for p in self.parameters():
            p.requires_grad_(False)

    def forward(self, x):
        return self.l(x)


class WrongNames(WithLinear):
    """forward(a, b): no argument the batch's inputs go to."""

    def forward(self, a, b):
        return self.l(a) + b


class WrongShape(WithLinear):
    """Features of 4 where the data holds 28 × 28 images: forward fails."""

    def forward(self, x):
        return self.l(x)


class ReturnsInt(WithLinear):
    def forward(self, x) -> int:
        return 3


class LossWithoutLabels(WithLinear):
    """A 0-dimensional result but no labels argument: nothing to train against."""

    def forward(self, x):
        return self.l(x.flatten(1)[:, :4]).sum()


class BadLogits(WithLinear):
    """Logits [B, 2, 5] against labels [B]."""

    def forward(self, x):
        return self.l(x.flatten(1)[:, :4]).reshape(-1, 2, 5)


class CustomLoss(nn.Module):
    """Its own loss is no cross-entropy over its logits: tokens cannot be counted."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 64)

    def forward(self, input_ids, labels) -> Tuple[torch.Tensor, torch.Tensor]:
        logits = self.l(input_ids.float().unsqueeze(-1).expand(-1, -1, 4))
        return (logits ** 2).mean(), logits
# SPDX-License-Identifier: GPL-3.0-or-later
