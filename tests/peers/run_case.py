"""One case of the peers suite: accum-run's three styles against torch 2.11's
plain loop, Accelerate's Accelerator and Transformers' Trainer, on the same
initial weights (the engine's, loaded into nn.Modules) and the same samples in
the same order (the engine's seeded shuffle, reproduced as a Sampler).

    ACCUM_RUN=build/app/accum-run venv/bin/python tests/peers/run_case.py CASE --work DIR

Where each number comes from:
  engine  metrics.jsonl "step" records (loss, learning_rate, grad_norm, epoch),
          "eval" records, the Trainer's printed dict lines, checkpoint-N folders;
  peers   peer_loops.py: the loss of each window as accum-run records it (the
          mean of its micro-batch means, or its tokens' summed loss over its
          label tokens), the learning rate in the optimizer when it steps, the
          norm clip_grad_norm_ returned, epoch + done / L; for the Trainer its
          training_step returns, on_pre_optimizer_step, _get_grad_norm, its
          on_log dicts and log_history, and the folders it left.
"""
import argparse
import math
import os
import sys
import time

import torch

import peers
import peer_loops

LOSS_TOL = 1e-5      # fp32 losses of the same arithmetic in another order
LR_TOL = 1e-9
EVAL_TOL = 1e-6
NORM_TOL = 1e-5      # relative

BASE = {"dataset": "fashion-mnist", "batch-size": 16, "epochs": 2, "seed": 7, "lr": 0.05, "momentum": 0.9,
        "weight-decay": 0.0, "warmup-steps": 0, "max-grad-norm": 0.0, "eval-strategy": "epoch",
        "logging-steps": 2, "save-strategy": "epoch", "n-train": 200, "n-eval": 100}

# 200 training images in micro-batches of 16: L = 13 per epoch (the last of 8),
# not a multiple of 3 or 4, so each epoch ends with a partial window of one.
CASES = {
    "mlp_sgd_k1_constant": dict(model="mlp", optimizer="sgd", **{"accumulation-steps": 1, "scheduler": "constant",
                                "logging-steps": 5}),
    "mlp_sgd_k3_linear_clip": dict(model="mlp", optimizer="sgd", **{"accumulation-steps": 3, "scheduler": "linear",
                                   "warmup-steps": 2, "max-grad-norm": 1.0, "save-strategy": "steps",
                                   "save-steps": 3, "save-total-limit": 2}),
    "mlp_adamw_k4_constant_warmup": dict(model="mlp", optimizer="adamw", lr=1e-3, **{
        "accumulation-steps": 4, "scheduler": "constant", "warmup-steps": 3, "logging-steps": 3}),
    "cnn_sgd_k4_linear": dict(model="cnn", optimizer="sgd", lr=0.02, **{"accumulation-steps": 4,
                              "scheduler": "linear", "warmup-steps": 1, "save-strategy": "steps", "save-steps": 2,
                              "save-total-limit": 3}),
    "cnn_adamw_k3_clip": dict(model="cnn", optimizer="adamw", lr=1e-3, **{"accumulation-steps": 3,
                              "scheduler": "constant", "max-grad-norm": 0.5}),
}


def engine_options(cfg, mode):
    skip = {"n-train", "n-eval"}
    o = {k: v for k, v in cfg.items() if k not in skip}
    o["mode"] = mode
    if o.get("save-total-limit") is None:
        o.pop("save-total-limit", None)
    return o


def expected_steps(cfg, n_train):
    L = math.ceil(n_train / cfg["batch-size"])
    return math.ceil(L / cfg["accumulation-steps"]) * cfg["epochs"]


def compare_steps(report, name, engine_steps, peer_steps, n, grad_norm=True):
    report.close(name + " loss per step", [s["loss"] for s in engine_steps], [s["loss"] for s in peer_steps],
                 LOSS_TOL, n)
    report.close(name + " learning rate per step", [s["learning_rate"] for s in engine_steps],
                 [s["learning_rate"] for s in peer_steps], LR_TOL, n)
    report.close(name + " epoch per step", [s["epoch"] for s in engine_steps], [s["epoch"] for s in peer_steps],
                 1e-12, n)
    if grad_norm:
        report.close(name + " grad_norm per step", [s["grad_norm"] for s in engine_steps],
                     [s["grad_norm"] for s in peer_steps], NORM_TOL, n, relative=True)


def compare_evals(report, name, engine_evals, peer_evals, n):
    for key in ("eval_loss", "eval_accuracy", "eval_f1"):
        report.close("%s %s" % (name, key), [e[key] for e in engine_evals], [e[key] for e in peer_evals],
                     EVAL_TOL, n)
    report.close(name + " eval epoch", [e["epoch"] for e in engine_evals], [e["epoch"] for e in peer_evals],
                 1e-12, n)


def kinds(logs):
    """The Trainer's log lines by kind, with their keys in order."""
    out = []
    for l in logs:
        keys = [k for k in l if k != "step"]
        out.append(tuple(keys))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=sorted(CASES))
    parser.add_argument("--work", required=True)
    a = parser.parse_args()
    torch.set_num_threads(1)
    started = time.time()
    cfg = dict(BASE, **CASES[a.case])
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    report = peers.Report(a.case)
    data_dir = peers.write_fashion_subset(os.path.join(work, "fashion-mnist"), cfg["n-train"], cfg["n-eval"])
    cfg["data"] = data_dir
    data = peers.load_fashion(data_dir)
    n = expected_steps(cfg, cfg["n-train"])
    init = peers.initial_weights(work, cfg)

    engine = {mode: peers.run_engine(os.path.join(work, "engine-" + mode), engine_options(cfg, mode))
              for mode in ("pytorch", "accelerator", "trainer")}
    for mode, run in engine.items():
        report.count("engine %s summary" % mode, [run.summary] if run.summary else [], 1)

    plain = peer_loops.plain_loop(cfg, data, init)
    compare_steps(report, "plain loop (torch %s)" % torch.__version__, engine["pytorch"].steps, plain["steps"], n)
    compare_evals(report, "plain loop", engine["pytorch"].evals, plain["evals"], cfg["epochs"])

    import accelerate
    acc = peer_loops.accelerate_loop(cfg, data, init)
    compare_steps(report, "Accelerator (accelerate %s)" % accelerate.__version__, engine["accelerator"].steps,
                  acc["steps"], n)
    compare_evals(report, "Accelerator", engine["accelerator"].evals, acc["evals"], cfg["epochs"])

    import transformers
    tr = peer_loops.trainer_run(cfg, data, init, os.path.join(work, "hf-trainer"))
    name = "Trainer (transformers %s)" % transformers.__version__
    compare_steps(report, name, engine["trainer"].steps, tr["steps"], n)
    compare_evals(report, "Trainer", engine["trainer"].evals, tr["evals"], cfg["epochs"])
    # The log lines: the same kinds, keys and order, at the same epochs.
    e_lines, p_lines = engine["trainer"].dict_lines, tr["logs"]
    if report.count("Trainer log lines (engine)", e_lines, len(p_lines)):
        report.equal("Trainer log lines' keys", kinds(e_lines), kinds(p_lines))
        report.close("Trainer log lines' epochs", [l["epoch"] for l in e_lines], [l["epoch"] for l in p_lines],
                     1e-12, len(p_lines))
        loss_lines = [(e, p) for e, p in zip(e_lines, p_lines) if "loss" in p and "loss" in e]
        report.close("Trainer logged loss", [e["loss"] for e, _ in loss_lines], [p["loss"] for _, p in loss_lines],
                     LOSS_TOL, len(loss_lines))
    report.equal("checkpoint folders kept (save_total_limit %s)" % cfg.get("save-total-limit"),
                 engine["trainer"].checkpoints(), tr["checkpoints"])
    print("case %s: %.1f s" % (a.case, time.time() - started))
    report.finish(work)


if __name__ == "__main__":
    main()
