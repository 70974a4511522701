"""One rank of the two-process peers (started by torchrun, Gloo on the CPU):
the real Accelerator or the real Trainer on the engine's initial weights and
data, each rank fed by Accelerate's own sharding of the engine's order
(BatchSamplerShard: rank r takes batches r, r + N, … of it). Per micro-batch
index the ranks together hold the same samples as accum-run's ranks
(DistributedSampler's positions r, r + N, …): both split positions
[i·B·N, (i+1)·B·N) of the epoch's order, so every window averages the same
gradients and counts the same label tokens.

    torchrun --nproc-per-node 2 ddp_peer.py accelerate|trainer --config cfg.json --init DIR --out result.json

Rank 0 writes the result: per step the window's loss over both ranks, the
learning rate, the grad norm, the epoch; the evaluations; the Trainer's log
lines and checkpoint folders.
"""
import argparse
import json
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402
import peer_loops  # noqa: E402


def mean_over_ranks(values):
    t = torch.tensor(values, dtype=torch.float64)
    dist.all_reduce(t)
    return (t / dist.get_world_size()).tolist()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("peer", choices=["accelerate", "trainer"])
    parser.add_argument("--config", required=True)
    parser.add_argument("--init", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--work", required=True)
    a = parser.parse_args()
    torch.set_num_threads(1)
    cfg = json.load(open(a.config))
    data = peers.synthetic_lm(cfg["seed"]) if cfg["dataset"] == "synthetic-lm" else peers.load_fashion(cfg["data"])
    vocab = 64 if cfg["dataset"] == "synthetic-lm" else 0
    if a.peer == "accelerate":
        result = peer_loops.accelerate_loop(cfg, data, a.init, vocab, scheduler_steps_per_update=int(
            os.environ["WORLD_SIZE"]))
    else:
        result = peer_loops.trainer_run(cfg, data, a.init, os.path.join(a.work, "hf-trainer"), vocab,
                                        accepts_loss_kwargs=True if vocab else None)
        result = {k: result[k] for k in ("steps", "evals", "logs", "checkpoints")}
    # The window's loss over both ranks: the mean of their micro-batch means, or
    # with the token loss their token-loss sums over their label tokens.
    if result["steps"] and "loss_sum" in result["steps"][0]:
        sums = mean_over_ranks([s["loss_sum"] for s in result["steps"]])
        items = mean_over_ranks([s["items"] for s in result["steps"]])
        losses = [a / b for a, b in zip(sums, items)]
    else:
        losses = mean_over_ranks([s["loss"] for s in result["steps"]])
    for s, loss in zip(result["steps"], losses):
        s["loss"] = loss
    result["world_size"] = dist.get_world_size()
    if dist.get_rank() == 0:
        with open(a.out, "w") as f:
            json.dump(result, f, default=float)
    dist.barrier()


if __name__ == "__main__":
    main()
    # Both ranks are past the barrier, the result is written and closed: end
    # here. The libraries' teardown at interpreter exit sometimes aborts a rank
    # ("terminate called without an active exception", a thread of the process
    # group still joinable), twice in a row under a loaded test run, and that
    # teardown is not what the peers compare.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
# SPDX-License-Identifier: GPL-3.0-or-later
