"""One case of the peers suite: accum-run's three styles against torch 2.11's
plain loop, Accelerate's Accelerator and Transformers' Trainer, on the same
initial weights (the engine's, loaded into nn.Modules) and the same samples in
the same order (the engine's seeded shuffle, reproduced as a Sampler).

    ACCUM_RUN=build/app/accum-run venv/bin/python tests/peers/run_case.py CASE --work DIR

Not compared, and why: dropout (the engine's random generator is LibTorch's, not
reproduced here: the cases run without it), bf16 and the loss scaler (fp32 only),
the Trainer's speed figures (timings). Where the engine cannot load the other
side's state (a Trainer checkpoint), each side resumes from its own checkpoint of
the same step.

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
import json
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
    # Weight decay: torch.optim decays every parameter given model.parameters()
    # (the plain loop, Accelerate); the Trainer all but biases and LayerNorm's.
    "mlp_adamw_k4_constant_warmup": dict(model="mlp", optimizer="adamw", lr=1e-3, **{
        "accumulation-steps": 4, "scheduler": "constant", "warmup-steps": 3, "logging-steps": 3,
        "weight-decay": 0.05}),
    "cnn_sgd_k4_linear": dict(model="cnn", optimizer="sgd", lr=0.02, **{"accumulation-steps": 4, "weight-decay": 0.01,
                              "scheduler": "linear", "warmup-steps": 1, "save-strategy": "steps", "save-steps": 2,
                              "save-total-limit": 3}),
    "cnn_adamw_k3_clip": dict(model="cnn", optimizer="adamw", lr=1e-3, **{"accumulation-steps": 3,
                              "scheduler": "constant", "max-grad-norm": 0.5}),
    # checkpoint-3 lies inside the first epoch (after micro-batch 9 of 13).
    "resume_mid_epoch_k3": dict(kind="resume", model="mlp", optimizer="sgd", **{"accumulation-steps": 3,
                                "scheduler": "linear", "warmup-steps": 2, "max-grad-norm": 1.0,
                                "save-strategy": "steps", "save-steps": 3, "resume-at": 3}),
    # Each style's Python tab continues its accum-run's checkpoint-4 (inside the first epoch).
    "python_tabs": dict(kind="tabs", **{"accumulation-steps": 3, "scheduler": "linear", "warmup-steps": 2,
                        "save-strategy": "steps", "save-steps": 4, "resume-at": 4, "epochs": 2}),
    # Two processes × micro-batch 8 (208 images: 13 per process and epoch, every
    # batch full), K = 3, the linear schedule with warmup.
    "ddp2_mlp_k3_linear": dict(kind="ddp", model="mlp", optimizer="sgd", **{"batch-size": 8, "n-train": 208,
                               "n-eval": 96, "accumulation-steps": 3, "scheduler": "linear", "warmup-steps": 2,
                               "max-grad-norm": 1.0, "save-strategy": "steps", "save-steps": 4,
                               "save-total-limit": 2}),
    # Two processes × 4 sequences of the synthetic LM, K = 4, the token loss.
    "ddp2_lm_tokens_k4": dict(kind="ddp", model="mlp", dataset="synthetic-lm", optimizer="adamw", lr=3e-3, **{
        "batch-size": 4, "accumulation-steps": 4, "max-steps": 8, "epochs": 0, "scheduler": "constant",
        "loss-normalization": "tokens", "logging-steps": 4, "save-strategy": "steps", "save-steps": 4}),
    # The synthetic LM (2000 sequences of 8 to 64 tokens), micro-batches of 8
    # sequences, K = 4, 12 optimizer steps of an epoch of 250 micro-batches.
    "lm_tokens_k4": dict(kind="lm", model="mlp", dataset="synthetic-lm", optimizer="adamw", lr=3e-3, **{
        "batch-size": 8, "accumulation-steps": 4, "max-steps": 12, "epochs": 0, "scheduler": "linear",
        "warmup-steps": 2, "max-grad-norm": 1.0, "loss-normalization": "tokens", "logging-steps": 4,
        "save-strategy": "steps", "save-steps": 5, "save-total-limit": 2}),
    # --report-to tensorboard against the Trainer's report_to=["tensorboard"] (and
    # Accelerate's TensorBoard tracker): both event files read back by TensorBoard.
    "tensorboard_trainer": dict(kind="tensorboard", model="mlp", optimizer="sgd", **{"accumulation-steps": 3,
                                "scheduler": "linear", "warmup-steps": 2, "max-grad-norm": 1.0, "logging-steps": 1}),
    # A tiny Bert traced with the Hugging Face metadata (hf_checkpoint.py): 96
    # sequences in micro-batches of 8, K = 2 (6 steps per epoch), AdamW with the
    # linear schedule and weight decay; checkpoint-4 lies inside the first epoch.
    # Its weights load with from_pretrained, the real Trainer continues checkpoint-4.
    "hf_model_out": dict(kind="hf", optimizer="adamw", lr=2e-3, **{
        "batch-size": 8, "accumulation-steps": 2, "epochs": 2, "n-train": 96, "n-eval": 40, "scheduler": "linear",
        "warmup-steps": 2, "weight-decay": 0.01, "max-grad-norm": 1.0, "logging-steps": 1, "save-strategy": "steps",
        "save-steps": 4, "resume-at": 4}),
}


def engine_options(cfg, mode):
    skip = {"n-train", "n-eval", "kind"}
    o = {k: v for k, v in cfg.items() if k not in skip}
    o["mode"] = mode
    if o.get("max-steps"):
        o.pop("epochs", None)
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


def compare_log_history(report, engine_dir, hf_dir):
    """trainer_state.json's log_history in the last checkpoint both kept: the same
    entries (keys, steps) and the same numbers (runtimes and speeds aside)."""
    common = [c for c in peers.checkpoint_names(engine_dir) if c in peers.checkpoint_names(hf_dir)]
    if not report.count("a checkpoint both kept", common[-1:], 1):
        return
    e, h = (json.load(open(os.path.join(d, common[-1], "trainer_state.json")))["log_history"]
            for d in (engine_dir, hf_dir))
    if not report.count("log_history entries in %s (engine)" % common[-1], e, len(h)):
        return
    report.equal("log_history keys and steps in " + common[-1], [(sorted(x), x["step"]) for x in e],
                 [(sorted(x), x["step"]) for x in h])
    for key, tol in (("loss", LOSS_TOL), ("learning_rate", LR_TOL), ("epoch", 1e-12), ("eval_loss", EVAL_TOL),
                     ("eval_accuracy", EVAL_TOL), ("eval_f1", EVAL_TOL)):
        pairs = [(a[key], b[key]) for a, b in zip(e, h) if key in a and key in b]
        if pairs:
            report.close("log_history %s" % key, [a for a, _ in pairs], [b for _, b in pairs], tol, len(pairs))


def compare_trainer(report, cfg, engine_run, tr, n, n_evals, evals=True):
    name = "Trainer (transformers %s)" % __import__("transformers").__version__
    compare_steps(report, name, engine_run.steps, tr["steps"], n)
    if evals:
        compare_evals(report, "Trainer", engine_run.evals, tr["evals"], n_evals)
    # The log lines: the same kinds, keys and order, at the same epochs.
    e_lines, p_lines = engine_run.dict_lines, tr["logs"]
    if report.count("Trainer log lines (engine)", e_lines, len(p_lines)):
        report.equal("Trainer log lines' keys", kinds(e_lines), kinds(p_lines))
        report.close("Trainer log lines' epochs", [l["epoch"] for l in e_lines], [l["epoch"] for l in p_lines],
                     1e-12, len(p_lines))
        loss_lines = [(e, p) for e, p in zip(e_lines, p_lines) if "loss" in p and "loss" in e]
        report.close("Trainer logged loss", [e["loss"] for e, _ in loss_lines], [p["loss"] for _, p in loss_lines],
                     LOSS_TOL, len(loss_lines))
        final = [(e, p) for e, p in zip(e_lines, p_lines) if "train_loss" in p and "train_loss" in e]
        report.close("Trainer train_loss (the last line)", [e["train_loss"] for e, _ in final],
                     [p["train_loss"] for _, p in final], LOSS_TOL, 1)
    report.equal("checkpoint folders kept (save_total_limit %s)" % cfg.get("save-total-limit"),
                 engine_run.checkpoints(), tr["checkpoints"])
    compare_log_history(report, engine_run.out_dir, tr["out_dir"])


def fashion_case(report, cfg, work):
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

    tr = peer_loops.trainer_run(cfg, data, init, os.path.join(work, "hf-trainer"))
    compare_trainer(report, cfg, engine["trainer"], tr, n, cfg["epochs"])

    # What the epoch's last, partial window of r < K micro-batches contributes: the
    # steps before it are full windows, the same in every style, so at its step the
    # weights agree and the gradient norms (before clipping) stand as the losses'
    # divisors: Accelerate's (and the plain loop's) r/K of the Trainer's, which
    # divides by the window's real size r. (Not with weight decay: the Trainer
    # decays fewer parameters, so the weights part before that step.)
    K = cfg["accumulation-steps"]
    L = math.ceil(cfg["n-train"] / cfg["batch-size"])
    r = L % K
    if r and not cfg.get("weight-decay"):
        at = math.ceil(L / K) - 1
        for who, accel, trainer in (("engine", engine["accelerator"].steps, engine["trainer"].steps),
                                    ("Accelerate / Transformers", acc["steps"], tr["steps"])):
            if len(accel) > at and len(trainer) > at:
                report.close("%s: partial window (r = %d of K = %d) grad_norm, Accelerator / Trainer" % (who, r, K),
                             [accel[at]["grad_norm"] / trainer[at]["grad_norm"]], [r / K], 1e-5, 1, relative=True)
            else:
                report.fail("%s: no step %d to compare the partial window at" % (who, at + 1))


def lm_case(report, cfg, work):
    """The token-normalised loss on the synthetic LM (sequences of 8 to 64
    tokens): every micro-batch's summed token loss over the window's label
    tokens, against the Trainer's num_items_in_batch (a model that takes loss
    kwargs), Accelerate's recipe and the plain loop; and the naive mean (each
    micro-batch's token mean / K, what Transformers before 4.46 did) against a
    Trainer whose model takes no loss kwargs."""
    data = peers.synthetic_lm(cfg["seed"])
    vocab = 64
    n = cfg["max-steps"]
    init = peers.initial_weights(work, cfg)
    engine = {mode: peers.run_engine(os.path.join(work, "engine-" + mode), engine_options(cfg, mode))
              for mode in ("pytorch", "accelerator", "trainer")}
    mean_cfg = dict(cfg, **{"loss-normalization": "mean"})
    engine_mean = peers.run_engine(os.path.join(work, "engine-trainer-mean"), engine_options(mean_cfg, "trainer"))
    for mode, run in list(engine.items()) + [("trainer mean", engine_mean)]:
        report.count("engine %s summary" % mode, [run.summary] if run.summary else [], 1)

    plain = peer_loops.plain_loop(cfg, data, init, vocab)
    compare_steps(report, "plain loop tokens", engine["pytorch"].steps, plain["steps"], n)
    compare_evals(report, "plain loop", engine["pytorch"].evals, plain["evals"], 1)
    acc = peer_loops.accelerate_loop(cfg, data, init, vocab)
    compare_steps(report, "Accelerator tokens", engine["accelerator"].steps, acc["steps"], n)
    compare_evals(report, "Accelerator", engine["accelerator"].evals, acc["evals"], 1)

    tr = peer_loops.trainer_run(cfg, data, init, os.path.join(work, "hf-trainer"), vocab, accepts_loss_kwargs=True)
    report.count("Trainer passed num_items_in_batch", [1] if tr["saw_num_items"] else [], 1)
    # The Trainer's eval_loss is the mean over sequences of each eval batch's token
    # mean (evaluation_loop: losses.repeat(batch_size)), so it depends on the eval
    # batch size: a known bug, huggingface/transformers#39241 ("[Trainer] Eval loss
    # depends on batch size", open). The engine keeps the mean over every label
    # token, as the plain loop and Accelerate compute it here. The Trainer's accuracy
    # and F1 (over tokens, compute_metrics) compare; its eval_loss is checked against
    # its own definition, recomputed from its final model.
    compare_trainer(report, cfg, engine["trainer"], tr, n, 1, evals=False)
    for key in ("eval_accuracy", "eval_f1"):
        report.close("Trainer " + key, [e[key] for e in engine["trainer"].evals], [e[key] for e in tr["evals"]],
                     EVAL_TOL, 1)
    per_sequence = peers.evaluate_per_batch_mean(tr["trainer"].model, data["eval"], cfg["batch-size"])
    report.close("Trainer eval_loss (its batch-weighted mean, recomputed)", [per_sequence],
                 [tr["evals"][-1]["eval_loss"]] if tr["evals"] else [], EVAL_TOL, 1)
    report.note("Trainer eval_loss (transformers#39241): batch-weighted mean of batch token means %.7f, "
                "engine's token mean %.7f"
                % (tr["evals"][-1]["eval_loss"] if tr["evals"] else float("nan"),
                   engine["trainer"].evals[-1]["eval_loss"] if engine["trainer"].evals else float("nan")))

    naive = peer_loops.trainer_run(mean_cfg, data, init, os.path.join(work, "hf-trainer-mean"), vocab,
                                   accepts_loss_kwargs=False)
    report.count("Trainer without loss kwargs passed no num_items_in_batch", [] if naive["saw_num_items"] else [1], 1)
    compare_steps(report, "Trainer naive mean", engine_mean.steps, naive["steps"], n)
    # The two normalisations must really differ here, or the case tests nothing.
    apart = max(abs(a["loss"] - b["loss"]) for a, b in zip(engine["trainer"].steps, engine_mean.steps))
    report.note("token vs naive mean: largest |Δ loss| per step %.3g" % apart)
    if apart < 1e-3:
        report.fail("token-normalised and mean losses differ by only %.3g: the case does not exercise them" % apart)


def resume_case(report, cfg, work):
    """Resume from a checkpoint inside an epoch: the engine's --resume against
    the Trainer's resume_from_checkpoint (each from its own checkpoint of the same
    step), and the plain loop and Accelerate (skip_first_batches) continuing the
    engine's own checkpoint (weights, momentum, schedule, position); each equals
    the uninterrupted run from that step on."""
    data_dir = peers.write_fashion_subset(os.path.join(work, "fashion-mnist"), cfg["n-train"], cfg["n-eval"])
    cfg["data"] = data_dir
    data = peers.load_fashion(data_dir)
    n = expected_steps(cfg, cfg["n-train"])
    at = cfg.pop("resume-at")
    init = peers.initial_weights(work, cfg)
    full, resumed = {}, {}
    for mode in ("pytorch", "accelerator", "trainer"):
        full[mode] = peers.run_engine(os.path.join(work, "engine-" + mode), engine_options(cfg, mode))
        checkpoint = os.path.join(full[mode].out_dir, "checkpoint-%d" % at)
        state = json.load(open(os.path.join(checkpoint, "accum_state.json")))
        if not 0 < state["progress"]["next_index"] < math.ceil(cfg["n-train"] / cfg["batch-size"]):
            report.fail("checkpoint-%d is not inside an epoch: %s" % (at, state["progress"]))
        resumed[mode] = peers.run_engine(os.path.join(work, "engine-%s-resumed" % mode),
                                         dict(engine_options(cfg, mode), resume=checkpoint))
        compare_steps(report, "engine %s resumed vs uninterrupted" % mode, resumed[mode].steps, full[mode].steps[at:],
                      n - at)

    plain = peer_loops.plain_loop(cfg, data, init, resume=os.path.join(full["pytorch"].out_dir, "checkpoint-%d" % at))
    compare_steps(report, "plain loop continuing the engine's checkpoint", resumed["pytorch"].steps, plain["steps"],
                  n - at)
    compare_evals(report, "plain loop resumed", resumed["pytorch"].evals, plain["evals"], len(plain["evals"]))
    acc = peer_loops.accelerate_loop(cfg, data, init,
                                     resume=os.path.join(full["accelerator"].out_dir, "checkpoint-%d" % at))
    compare_steps(report, "Accelerator continuing the engine's checkpoint", resumed["accelerator"].steps,
                  acc["steps"], n - at)
    compare_evals(report, "Accelerator resumed", resumed["accelerator"].evals, acc["evals"], len(acc["evals"]))

    hf_full = peer_loops.trainer_run(cfg, data, init, os.path.join(work, "hf-trainer"))
    compare_steps(report, "Trainer uninterrupted", full["trainer"].steps, hf_full["steps"], n)
    hf = peer_loops.trainer_run(cfg, data, init, os.path.join(work, "hf-trainer-resumed"),
                                resume=os.path.join(work, "hf-trainer", "checkpoint-%d" % at))
    compare_trainer(report, cfg, resumed["trainer"], hf, n - at, len(hf["evals"]))


SCRIPTS = os.path.join(peers.ROOT, "resources", "code")


def python_tabs_case(report, cfg, work):
    """The code panel's Python tabs are scripts that run: each continues a
    checkpoint of its style's accum-run inside an epoch with the real library and
    prints {"step", "loss"} per optimizer step, which must be the engine's."""
    import subprocess
    data_dir = peers.write_fashion_subset(os.path.join(work, "fashion-mnist"), cfg["n-train"], cfg["n-eval"])
    n = expected_steps(cfg, cfg["n-train"])
    tabs = [("pytorch", "pytorch_loop.py", dict(model="mlp", optimizer="sgd")),
            ("accelerator", "accelerator.py", dict(model="cnn", optimizer="adamw", lr=1e-3)),
            ("trainer", "trainer.py", dict(model="mlp", optimizer="sgd", **{"max-grad-norm": 1.0}))]
    at = cfg.pop("resume-at")
    for mode, script, extra in tabs:
        c = dict(cfg, data=data_dir, **extra)
        run = peers.run_engine(os.path.join(work, "engine-" + mode), engine_options(c, mode))
        report.count("engine %s steps" % mode, run.steps, n)
        argv = [sys.executable, os.path.join(SCRIPTS, script), "--checkpoint",
                os.path.join(run.out_dir, "checkpoint-%d" % at), "--steps", str(n - at), "--data", data_dir]
        if mode == "trainer":
            argv += ["--output-dir", os.path.join(work, "hf-" + mode)]
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=180)
        lines = [json.loads(l) for l in p.stdout.splitlines() if l.startswith('{"step"')]
        if p.returncode != 0:
            report.fail("%s exited %d: %s" % (script, p.returncode, p.stdout[-2000:]))
        report.equal("%s steps" % script, [l["step"] for l in lines], list(range(at + 1, n + 1)))
        report.close("%s continuing checkpoint-%d: loss per step" % (script, at), [s["loss"] for s in run.steps[at:]],
                     [l["loss"] for l in lines], LOSS_TOL, n - at)


def ddp_case(report, cfg, work):
    """Two processes: accum-run --nproc-per-node 2 (Gloo) against the real
    Accelerator and the real Trainer under torchrun (Gloo), each rank a micro-batch
    of B: the gradients all-reduced once per window (no_sync on the others: the
    engine's records count 1 all-reduce per step), and with the token loss the
    window's label tokens counted over both ranks (Accelerate's recipe gathers
    them, the Trainer's get_batch_samples too, and both multiply by N)."""
    import subprocess
    import signal
    world = 2
    if cfg["dataset"] == "fashion-mnist":
        cfg["data"] = peers.write_fashion_subset(os.path.join(work, "fashion-mnist"), cfg["n-train"], cfg["n-eval"])
        n_train = cfg["n-train"]
    else:
        n_train = 2000
    L = math.ceil(math.ceil(n_train / world) / cfg["batch-size"])
    per_epoch = math.ceil(L / cfg["accumulation-steps"])
    n = cfg["max-steps"] if cfg.get("max-steps") else per_epoch * cfg["epochs"]
    n_evals = 1 if cfg.get("max-steps") else cfg["epochs"]
    init = peers.initial_weights(work, cfg)
    cfg_file = os.path.join(work, "config.json")
    json.dump(cfg, open(cfg_file, "w"))
    for peer, mode in (("accelerate", "accelerator"), ("trainer", "trainer")):
        # --master-port 0: accum-run picks a free port itself.
        options = dict(engine_options(cfg, mode), **{"nproc-per-node": world, "master-port": 0, "backend": "gloo"})
        engine = peers.run_engine(os.path.join(work, "engine-" + mode), options)
        report.equal("engine %s: one all-reduce per optimizer step (no_sync on the others)" % mode,
                     [s.get("grad_allreduces") for s in engine.steps], [1] * n)
        out = os.path.join(work, "peer-%s.json" % peer)
        argv = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(world), "--master-addr",
                "127.0.0.1", "--master-port", str(peers.free_port()), os.path.join(peers.HERE, "ddp_peer.py"), peer,
                "--config", cfg_file, "--init", init, "--out", out, "--work", os.path.join(work, "peer-" + peer)]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        try:
            output, _ = proc.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # torchrun and both ranks
            output, _ = proc.communicate()
            report.fail("torchrun %s: over 240 s" % peer)
        if proc.returncode != 0 or not os.path.exists(out):
            report.fail("torchrun %s exited %s:\n%s" % (peer, proc.returncode, output[-3000:]))
            continue
        result = json.load(open(out))
        report.equal("torchrun %s world size" % peer, result["world_size"], world)
        name = "%s, 2 processes" % ("Accelerator" if peer == "accelerate" else "Trainer")
        report.equal("%s: one all-reduce per optimizer step (DDP's comm hook counts them)" % name,
                     [s.get("allreduces") for s in result["steps"]], [1] * n)
        compare_steps(report, name, engine.steps, result["steps"], n)
        keys = ("eval_loss", "eval_accuracy", "eval_f1")
        if peer == "trainer" and cfg["dataset"] == "synthetic-lm":
            keys = ("eval_accuracy", "eval_f1")  # its eval_loss: transformers#39241 (see lm_tokens_k4)
        for key in keys:
            report.close("%s %s" % (name, key), [e[key] for e in engine.evals], [e[key] for e in result["evals"]],
                         EVAL_TOL, n_evals)
        if peer == "trainer":
            e_lines, p_lines = engine.dict_lines, result["logs"]
            if report.count("Trainer log lines, 2 processes (engine)", e_lines, len(p_lines)):
                report.equal("Trainer log lines' keys, 2 processes", kinds(e_lines), kinds(p_lines))
                report.close("Trainer log lines' epochs, 2 processes", [l["epoch"] for l in e_lines],
                             [l["epoch"] for l in p_lines], 1e-12, len(p_lines))
            report.equal("checkpoint folders, 2 processes", engine.checkpoints(), result["checkpoints"])


def read_scalars(out_dir):
    """{tag: [(step, value)]} of the one logging dir under out_dir/runs/, read by
    TensorBoard's EventAccumulator (every event kept: size_guidance 0)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    runs = os.path.join(out_dir, "runs")
    dirs = sorted(os.listdir(runs)) if os.path.isdir(runs) else []
    if len(dirs) != 1:
        raise AssertionError("%s: expected one logging dir, found %s" % (runs, dirs))
    acc = EventAccumulator(os.path.join(runs, dirs[0]), size_guidance={"scalars": 0})
    acc.Reload()
    return {t: [(e.step, e.value) for e in acc.Scalars(t)] for t in acc.Tags()["scalars"]}


# Tolerances on TensorBoard's scalars, float32 (simple_value) on both sides:
# the losses' own bound; 1e-6 (above float32's resolution at these magnitudes)
# for numbers both sides compute alike.
TB_TOL = {"train/loss": (LOSS_TOL, False), "train/train_loss": (LOSS_TOL, False),
          "train/learning_rate": (1e-6, False), "train/epoch": (1e-6, False),
          "train/grad_norm": (NORM_TOL, True), "eval/loss": (EVAL_TOL, False),
          "eval/accuracy": (EVAL_TOL, False), "eval/f1": (EVAL_TOL, False)}
# The Trainer's tags the engine does not write, and why.
TB_NOT_WRITTEN = {"train/total_flos": "the Trainer counts FLOPs only for a PreTrainedModel (floating_point_ops); "
                                      "for a plain nn.Module, as here, it writes 0"}


def compare_scalars(report, name, engine, peer, tags):
    for tag in tags:
        e, p = engine.get(tag, []), peer.get(tag, [])
        report.equal("%s %s steps" % (name, tag), [s for s, _ in e], [s for s, _ in p])
        if tag in TB_TOL:
            tol, relative = TB_TOL[tag]
            report.close("%s %s" % (name, tag), [v for _, v in e], [v for _, v in p], tol, len(p), relative)
        else:  # timings: the same steps, a finite positive figure on each side
            bad = [v for _, v in e + p if not (math.isfinite(v) and v > 0)]
            if bad:
                report.fail("%s %s: not a positive figure: %s" % (name, tag, bad))


def tensorboard_case(report, cfg, work):
    """accum-run --mode trainer --report-to tensorboard against the real Trainer
    with report_to=["tensorboard"] on the same run (logging every step, an
    evaluation each epoch): TensorBoard's reader finds the same scalar tags (the
    engine's accum/ tags aside), at the same steps, with the same values. Then
    --mode accelerator against Accelerate's TensorBoard tracker, the peer loop
    logging the Trainer's tags through Accelerator(log_with="tensorboard")."""
    data_dir = peers.write_fashion_subset(os.path.join(work, "fashion-mnist"), cfg["n-train"], cfg["n-eval"])
    cfg["data"] = data_dir
    data = peers.load_fashion(data_dir)
    n = expected_steps(cfg, cfg["n-train"])
    init = peers.initial_weights(work, cfg)
    report_to = {"report-to": "tensorboard"}
    engine = peers.run_engine(os.path.join(work, "engine-trainer"), dict(engine_options(cfg, "trainer"), **report_to))
    report.equal("engine trainer run", (engine.summary or {}).get("status"), "completed")
    tr = peer_loops.trainer_run(cfg, data, init, os.path.join(work, "hf-trainer"), report_to="tensorboard")
    compare_steps(report, "Trainer", engine.steps, tr["steps"], n)
    e, h = read_scalars(engine.out_dir), read_scalars(tr["out_dir"])
    for tag, why in TB_NOT_WRITTEN.items():
        report.equal("Trainer's %s (%s)" % (tag, why), [v for _, v in h.get(tag, [])], [0.0])
    trainer_tags = sorted(set(h) - set(TB_NOT_WRITTEN))
    report.equal("scalar tags (the engine's accum/ aside)", sorted(t for t in e if not t.startswith("accum/")),
                 trainer_tags)
    for tag in ("train/loss", "train/learning_rate", "train/grad_norm", "train/epoch", "eval/loss"):
        if tag not in h:
            report.fail("the Trainer wrote no %s" % tag)
    compare_scalars(report, "TensorBoard", e, h, trainer_tags)
    logged = [s for s, _ in e.get("train/loss", [])]
    report.equal("train/loss steps (logging_steps 1)", logged, list(range(1, n + 1)))
    for tag in ("accum/peak_memory_bytes", "accum/samples_per_second", "accum/threads"):
        report.equal("engine %s steps" % tag, [s for s, _ in e.get(tag, [])], logged)
        bad = [v for _, v in e.get(tag, []) if not (math.isfinite(v) and v > 0)]
        if bad:
            report.fail("engine %s: not a positive figure: %s" % (tag, bad))

    # Accelerate's tracker: the peer loop's steps and evaluations, logged as the
    # Trainer's tags at the same steps through Accelerator(log_with="tensorboard").
    from accelerate import Accelerator
    engine_acc = peers.run_engine(os.path.join(work, "engine-accelerator"),
                                  dict(engine_options(cfg, "accelerator"), **report_to))
    report.equal("engine accelerator run", (engine_acc.summary or {}).get("status"), "completed")
    acc = peer_loops.accelerate_loop(cfg, data, init)
    compare_steps(report, "Accelerator", engine_acc.steps, acc["steps"], n)
    tracked = os.path.join(work, "accelerate-tracker")
    accelerator = Accelerator(log_with="tensorboard", project_dir=tracked)
    accelerator.init_trackers("runs/accelerate")  # logs into project_dir/runs/accelerate/
    per_epoch = n // cfg["epochs"]
    evals = iter(acc["evals"])
    for step, s in enumerate(acc["steps"], start=1):
        accelerator.log({"train/loss": s["loss"], "train/grad_norm": s["grad_norm"],
                         "train/learning_rate": s["learning_rate"], "train/epoch": s["epoch"]}, step=step)
        if step % per_epoch == 0:  # the epoch's evaluation, after its last step
            ev = next(evals)
            accelerator.log({"eval/loss": ev["eval_loss"], "eval/accuracy": ev["eval_accuracy"],
                             "eval/f1": ev["eval_f1"], "train/epoch": ev["epoch"]}, step=step)
    accelerator.end_training()
    a = read_scalars(tracked)
    ea = read_scalars(engine_acc.out_dir)
    # The engine's run ends with the Trainer's last log, train/epoch once more (its
    # last event), which this loop does not log.
    if ea.get("train/epoch"):
        ea["train/epoch"] = ea["train/epoch"][:-1]
    compare_scalars(report, "Accelerate tracker", ea, a, sorted(a))
def hf_case(report, cfg, work):
    import hf_checkpoint
    hf_checkpoint.hf_case(report, cfg, work)


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
    {"fashion": fashion_case, "lm": lm_case, "resume": resume_case, "tabs": python_tabs_case, "ddp": ddp_case,
     "tensorboard": tensorboard_case, "hf": hf_case}[cfg.pop("kind", "fashion")](report, cfg, work)
    print("case %s: %.1f s" % (a.case, time.time() - started))
    report.finish(work)


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: GPL-3.0-or-later
