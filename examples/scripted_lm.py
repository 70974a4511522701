#!/usr/bin/env python3
"""Your own language model: a one-block causal transformer, scripted with
torch.jit.script. Its forward takes input_ids, attention_mask and labels (the
next token at each position, -100 where none counts) and returns
(loss, logits), computing its own token-mean cross-entropy as a Transformers
model does.

    python3 examples/scripted_lm.py lm.pt
    accum-run --model lm.pt --dataset synthetic-lm --batch-size 16 --accumulation-steps 4 \\
              --loss-normalization tokens

--vocab must cover the data's token ids (synthetic-lm's are below 64)."""
import argparse
import math
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyCausalLm(nn.Module):
    def __init__(self, vocab: int = 64, width: int = 64, max_length: int = 64):
        super().__init__()
        self.width = width
        self.embed = nn.Embedding(vocab, width)
        self.position = nn.Embedding(max_length, width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm1 = nn.LayerNorm(width)
        self.ff = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))
        self.norm2 = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                labels: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        t = input_ids.size(1)
        positions = torch.arange(t, device=input_ids.device)
        h = self.embed(input_ids) + self.position(positions)
        q, k, v = self.qkv(self.norm1(h)).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(self.width)
        causal = torch.ones(t, t, dtype=torch.bool, device=input_ids.device).tril()
        allowed = causal.unsqueeze(0) & attention_mask.ne(0).unsqueeze(1)
        scores = scores.masked_fill(~allowed, -1e9)
        h = h + self.proj(F.softmax(scores, dim=-1) @ v)
        h = h + self.ff(self.norm2(h))
        logits = self.head(h)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100)
        return loss, logits


def build(seed=0, vocab=64, max_length=64):
    torch.manual_seed(seed)
    return torch.jit.script(TinyCausalLm(vocab, 64, max_length))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", help="the TorchScript file to write, e.g. lm.pt")
    parser.add_argument("--vocab", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    module = build(args.seed, args.vocab, args.max_length)
    module.save(args.output)
    print("wrote %s: TinyCausalLm, %d parameters, forward(input_ids, attention_mask, labels) → (loss, logits)" %
          (args.output, sum(p.numel() for p in module.parameters())))
# SPDX-License-Identifier: GPL-3.0-or-later
