"""Modules accum-run must refuse (run_models.py's bad_files case), one class each."""
from typing import Tuple

import torch
import torch.nn as nn


class Frozen(nn.Module):
    """Every parameter has requires_grad False: nothing to train."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 10)
        for p in self.parameters():
            p.requires_grad_(False)

    def forward(self, x):
        return self.l(x)


class WrongNames(nn.Module):
    """forward(a, b): no argument the batch's inputs go to."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 10)

    def forward(self, a, b):
        return self.l(a) + b


class WrongShape(nn.Module):
    """Features of 4 where the data holds 28 × 28 images: forward fails."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 10)

    def forward(self, x):
        return self.l(x)


class ReturnsInt(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 10)

    def forward(self, x) -> int:
        return 3


class LossWithoutLabels(nn.Module):
    """A 0-dimensional result but no labels argument: nothing to train against."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 10)

    def forward(self, x):
        return self.l(x.flatten(1)[:, :4]).sum()


class BadLogits(nn.Module):
    """Logits [B, 2, 5] against labels [B]."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 10)

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
