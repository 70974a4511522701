# SPDX-License-Identifier: GPL-3.0-or-later
"""The gradient noise scale (docs/noise-scale.md) against eager PyTorch.

    noise_scale.py CASE ACCUM_RUN WORK_DIR

The model is examples/scripted_cnn.py's SmallCnn (scripted, seed 0); the data
are 28 × 28 images whose labels a fixed linear teacher gives, half of them
replaced by class 3, so that the gradient at the start stands out of the noise
(B_simple ≈ 3.5 samples). A learning rate of 1e-12 (SGD, no momentum) leaves the
weights as they were to float precision, so every window measures the same
gradient distribution.

Cases (tests/models/CMakeLists.txt registers each):
  reference  one epoch of 2048 samples at micro-batch 1 × K = 16: the ratio of the
             summed unbiased estimates Σ S / Σ |G|² from the step records is
             within 10 % of tr(Σ)/|G|², computed here from per-sample gradients
             over the whole data set (torch.func's vmap of grad; a loop where the
             torch has no torch.func); the running noise_scale (last step and
             summary.json) within 30 %. Over 100 other data orders, this
             simulation's ratio of sums has a standard deviation of 0.016 and the
             running estimate of 0.10: both bounds are several of those.
  raw        in each style, fp32, bf16 autocast, the dynamic loss scaler and the
             token-normalised loss (examples/scripted_lm.py): every window's
             grad_norm_sq_small (the first micro-batch's mean gradient),
             grad_norm_sq_big (the window's) and batch sizes equal eager PyTorch's
             on the same micro-batches within 1e-5 relative; an epoch of 22
             micro-batches at K = 4 ends on a window of 2 (the Trainer divides
             its loss by 2, the others by 4: both give the same figures).
  processes  2 processes × micro-batch 1 × K = 8 against 1 process × 1 × 16 (the
             same two batch sizes, 1 and 16): each within the reference case's
             bounds; and since rank r takes positions i·N + r of the epoch's order,
             each window holds the same 16 samples in both runs and rank 0's first
             micro-batch is the one process's first: no statistical difference is
             left, and every step's raw figures and running noise scale agree
             within 1e-4 relative (the all-reduce adds in another order). K = 1
             with 2 processes measures nothing (null: the first micro-batch is
             already all-reduced).
  fused      the built-in MLP, whose fused backward notes each weight
             gradient's squared norm as it stores it (the meter then reads the
             first micro-batch's norm without a pass over the gradients):
             --cpu-kernels fused against aten (LibTorch's operators, the pass),
             in each style, every window's raw figures within 1e-5 relative.
"""
import json
import math
import os
import shutil
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "peers"))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import peers  # noqa: E402  the engine's data order, running accum-run, reading its records
import scripted_cnn  # noqa: E402
import scripted_lm  # noqa: E402

RELATIVE = 1e-5   # the bound on the raw figures against eager PyTorch
SUMMED = 0.10     # the ratio of the summed estimates against tr(Σ)/|G|²
RUNNING = 0.30    # the running estimate against the same
TINY_LR = 1e-12   # --lr refuses 0; w − 1e-12·g leaves float32 weights as they were


def fail(message):
    print("FAIL: " + message, flush=True)
    sys.exit(1)


def image_data(path, n, seed=5):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 1, 28, 28, generator=g)
    teacher = torch.randn(784, 10, generator=g)
    labels = (x.flatten(1) @ teacher + torch.randn(n, 10, generator=g)).argmax(1)
    labels = torch.where(torch.rand(n, generator=g) < 0.5, torch.full_like(labels, 3), labels)
    torch.save({"inputs": x, "labels": labels, "eval_inputs": x[:16], "eval_labels": labels[:16]}, path)
    return x, labels


def lm_data(path, n=88, vocab=64, length=24):
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(1, vocab, (n + 8, length + 1), generator=g)
    lengths = torch.randint(6, length + 1, (n + 8,), generator=g)
    mask = (torch.arange(length).unsqueeze(0) < lengths.unsqueeze(1)).long()
    data = {"input_ids": ids[:n, :-1] * mask[:n], "attention_mask": mask[:n],
            "labels": ids[:n, 1:].masked_fill(mask[:n] == 0, -100),
            "eval_input_ids": ids[n:, :-1] * mask[n:], "eval_attention_mask": mask[n:],
            "eval_labels": ids[n:, 1:].masked_fill(mask[n:] == 0, -100)}
    torch.save(data, path)
    return data


def run(out, options):
    base = {"epochs": 1, "lr": TINY_LR, "optimizer": "sgd", "momentum": 0, "scheduler": "constant",
            "eval-strategy": "no", "save-strategy": "no", "logging-steps": 1, "quiet": True}
    return peers.run_engine(out, dict(base, **options), timeout=600)


def finite(x):
    return x is not None and math.isfinite(x)


def summed_ratio(what, steps):
    """Σ S / Σ |G|² over the step records' raw figures (appendix A's estimates)."""
    total_s = total_g = 0.0
    for s in steps:
        small, big, bs, bb = s["grad_norm_sq_small"], s["grad_norm_sq_big"], s["batch_small"], s["batch_big"]
        if not (finite(small) and finite(big) and 0 < bs < bb):
            fail("%s: step %d has no two batch sizes (%r)" % (what, s["step"], s))
        total_g += (bb * big - bs * small) / (bb - bs)
        total_s += (small - big) / (1 / bs - 1 / bb)
    return total_s / total_g


def running(what, run):
    last = run.steps[-1]["noise_scale"]
    summary = json.load(open(os.path.join(run.out_dir, "summary.json")))
    if not finite(last) or summary.get("noise_scale") != last:
        fail("%s: the last step's noise_scale %r, summary.json's %r" % (what, last, summary.get("noise_scale")))
    return last


def per_sample_reference(model_file, x, labels):
    """tr(Σ)/|G|² over the whole data set: Σ with the n − 1 divisor (what the
    windows' estimates, drawn without replacement, average to)."""
    module = scripted_cnn.SmallCnn()
    module.load_state_dict({k: v for k, v in torch.jit.load(model_file).state_dict().items()})
    params = {k: v.detach() for k, v in module.named_parameters()}
    rows = []
    try:
        from torch.func import functional_call, grad, vmap

        def loss(p, xi, yi):
            return F.cross_entropy(functional_call(module, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))

        for s in range(0, len(x), 256):
            g = vmap(grad(loss), in_dims=(None, 0, 0))(params, x[s:s + 256], labels[s:s + 256])
            rows.append(torch.cat([g[k].flatten(1) for k in params], 1).double())
    except ImportError:  # torch 1.13: no torch.func; the same gradients one sample at a time
        for i in range(len(x)):
            module.zero_grad()
            F.cross_entropy(module(x[i:i + 1]), labels[i:i + 1]).backward()
            rows.append(torch.cat([p.grad.flatten() for p in module.parameters()]).double().unsqueeze(0))
    per = torch.cat(rows)
    mean = per.mean(0)
    trace = float(((per - mean) ** 2).sum() / (len(per) - 1))
    return trace / float(mean @ mean)


def within(what, got, expected, bound):
    off = abs(got / expected - 1)
    print("%-62s %.4g against %.4g: %.1f %% off (bound %.0f %%)" % (what, got, expected, 100 * off, 100 * bound),
          flush=True)
    if not off <= bound:
        fail("%s: %.4g is %.1f %% off %.4g (bound %.0f %%)" % (what, got, 100 * off, expected, 100 * bound))


def reference_setup(work):
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, "cnn.pt")
    scripted_cnn.build(0).save(model)
    data = os.path.join(work, "images.pt")
    x, labels = image_data(data, 2048)
    return model, data, per_sample_reference(model, x, labels)


def case_reference(work):
    model, data, reference = reference_setup(work)
    print("tr(Σ)/|G|² from per-sample gradients over 2048 samples: %.4f" % reference, flush=True)
    r = run(os.path.join(work, "run"), {"model": model, "dataset": "tensors", "data": data, "batch-size": 1,
                                        "accumulation-steps": 16})
    peers.expect_count("step records", r.steps, 2048 // 16)
    within("Σ S / Σ |G|² over the epoch's 128 windows", summed_ratio("1 × 16", r.steps), reference, SUMMED)
    within("the running noise_scale at the epoch's end", running("1 × 16", r), reference, RUNNING)


def case_processes(work):
    model, data, reference = reference_setup(work)
    common = {"model": model, "dataset": "tensors", "data": data, "batch-size": 1}
    one = run(os.path.join(work, "one"), dict(common, **{"accumulation-steps": 16}))
    two = run(os.path.join(work, "two"), dict(common, **{"accumulation-steps": 8, "nproc-per-node": 2,
                                                         "master-port": peers.free_port()}))
    for what, r in (("1 process × 1 × 16", one), ("2 processes × 1 × 8", two)):
        peers.expect_count(what + " step records", r.steps, 128)
        if any(s["batch_small"] != 1 or s["batch_big"] != 16 for s in r.steps):
            fail("%s: batch sizes %r, expected 1 and 16" % (what, {(s["batch_small"], s["batch_big"])
                                                                  for s in r.steps}))
        within(what + ": Σ S / Σ |G|²", summed_ratio(what, r.steps), reference, SUMMED)
        within(what + ": running noise_scale", running(what, r), reference, RUNNING)
    worst = 0.0
    for a, b in zip(one.steps, two.steps):
        for key in ("grad_norm_sq_small", "grad_norm_sq_big", "noise_scale"):
            worst = max(worst, abs(b[key] / a[key] - 1))
    print("2 processes against 1, step by step: largest relative difference %.2e (bound 1e-4)" % worst, flush=True)
    if not worst <= 1e-4:
        fail("2 processes' figures differ from 1 process' by %.2e relative" % worst)
    k1 = run(os.path.join(work, "k1"), dict(common, **{"accumulation-steps": 1, "max-steps": 4, "nproc-per-node": 2,
                                                        "master-port": peers.free_port()}))
    peers.expect_count("2 processes × 1 × 1 step records", k1.steps, 4)
    for s in k1.steps:
        if s["noise_scale"] is not None or s["grad_norm_sq_small"] is not None or s["batch_big"] != 2:
            fail("K = 1 with 2 processes measured a noise scale: %r" % s)
    print("2 processes at K = 1: no two batch sizes, noise_scale null in every step record", flush=True)


# ------------------------------------------------------------------ raw figures

def flat_grad(module):
    return torch.cat([p.grad.detach().flatten().double() for p in module.parameters() if p.grad is not None])


def engine_windows(model_file, n, b, k):
    """The module as torch.jit.load gives it, in train(), and the epoch's windows as
    the engine makes them: lists of micro-batches of sample indices (seed 0, epoch 0)."""
    module = torch.jit.load(model_file)
    module.train()
    order = peers.epoch_order(n, 0, 0, True)
    batches = [order[s:s + b] for s in range(0, n, b)]
    return module, [batches[start:start + k] for start in range(0, len(batches), k)]


def eager_cnn_windows(model_file, data, n, b, k, bf16):
    """Per window: |g₁|² of the first micro-batch's mean loss, |G_big|² of the mean of
    the window's micro-batch means, and their sample counts."""
    module, windows = engine_windows(model_file, n, b, k)
    out = []
    for window in windows:
        grads = []
        for idx in window:
            module.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                loss = F.cross_entropy(module(data["inputs"][idx]), data["labels"][idx])
            loss.backward()
            grads.append(flat_grad(module))
        big = sum(grads) / len(grads)
        out.append((float(grads[0] @ grads[0]), float(big @ big), len(window[0]), sum(len(i) for i in window)))
    return out


def eager_lm_windows(model_file, data, n, b, k):
    """The token-normalised loss: g₁ the mean over the first micro-batch's label
    tokens, G_big over the window's."""
    module, windows = engine_windows(model_file, n, b, k)
    out = []
    for window in windows:
        sums, counts = [], []
        for idx in window:
            module.zero_grad()
            labels = data["labels"][idx]
            _, logits = module(data["input_ids"][idx], data["attention_mask"][idx], labels)  # (loss, logits)
            F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100,
                            reduction="sum").backward()
            sums.append(flat_grad(module))
            counts.append(int(labels.ne(-100).sum()))
        small = sums[0] / counts[0]
        big = sum(sums) / sum(counts)
        out.append((float(small @ small), float(big @ big), counts[0], sum(counts)))
    return out


def compare_raw(what, steps, eager):
    if len(steps) != len(eager):
        fail("%s: %d step records against %d eager windows" % (what, len(steps), len(eager)))
    worst = 0.0
    for s, (small, big, bs, bb) in zip(steps, eager):
        got = (s["grad_norm_sq_small"], s["grad_norm_sq_big"], s["batch_small"], s["batch_big"])
        if not all(finite(v) for v in got):
            fail("%s: step %d has a figure that is not a number: %r" % (what, s["step"], got))
        if got[2] != bs or got[3] != bb:
            fail("%s: step %d batch sizes %r, eager %r" % (what, s["step"], got[2:], (bs, bb)))
        worst = max(worst, abs(got[0] / small - 1), abs(got[1] / big - 1))
    print("%-62s %d windows, largest relative difference %.2e (bound %.0e)" % (what, len(steps), worst, RELATIVE),
          flush=True)
    if not worst <= RELATIVE:
        fail("%s: the raw figures differ from eager PyTorch's by %.2e relative" % (what, worst))


def case_raw(work):
    os.makedirs(work, exist_ok=True)
    cnn = os.path.join(work, "cnn.pt")
    scripted_cnn.build(0).save(cnn)
    images = os.path.join(work, "images.pt")
    n, b, k = 88, 4, 4  # 22 micro-batches: 5 windows of 4 and one of 2
    image_data(images, n)
    data = torch.load(images)
    fp32 = eager_cnn_windows(cnn, data, n, b, k, False)
    for bf16 in (False, True):
        eager = eager_cnn_windows(cnn, data, n, b, k, True) if bf16 else fp32
        if bf16:  # the autocast must change the figures, or comparing them shows nothing
            apart = max(abs(a[0] / f[0] - 1) for a, f in zip(eager, fp32))
            print("eager bf16 against eager fp32: |G_small|² %.2e apart (relative)" % apart, flush=True)
            if not apart > RELATIVE:
                fail("bf16 autocast left the gradients as in fp32 (%.2e apart)" % apart)
        for mode in ("pytorch", "accelerator", "trainer"):
            what = "scripted cnn, %s, %d × %d%s" % (mode, b, k, ", bf16" if bf16 else "")
            r = run(os.path.join(work, "run"), {"model": cnn, "dataset": "tensors", "data": images, "mode": mode,
                                                "batch-size": b, "accumulation-steps": k,
                                                "mixed-precision": "bf16" if bf16 else "no"})
            compare_raw(what, r.steps, eager)
    eager = fp32
    r = run(os.path.join(work, "run"), {"model": cnn, "dataset": "tensors", "data": images, "batch-size": b,
                                        "accumulation-steps": k, "loss-scaling": "dynamic"})
    if not any(s["loss_scale"] > 1 for s in r.steps):
        fail("--loss-scaling dynamic ran without a scale: %r" % [s["loss_scale"] for s in r.steps])
    compare_raw("scripted cnn, pytorch, %d × %d, the dynamic loss scaler (S = %g)" % (b, k, r.steps[0]["loss_scale"]),
                r.steps, eager)
    lm = os.path.join(work, "lm.pt")
    scripted_lm.build(seed=5, vocab=64, max_length=24).save(lm)
    tokens = os.path.join(work, "tokens.pt")
    lm_data(tokens)
    eager = eager_lm_windows(lm, torch.load(tokens), 88, b, k)
    for mode in ("pytorch", "accelerator", "trainer"):
        r = run(os.path.join(work, "run"), {"model": lm, "dataset": "tensors", "data": tokens, "mode": mode,
                                            "batch-size": b, "accumulation-steps": k,
                                            "loss-normalization": "tokens"})
        compare_raw("scripted lm, %s, %d × %d, token loss (batch sizes in tokens)" % (mode, b, k), r.steps, eager)


def case_fused(work):
    os.makedirs(work, exist_ok=True)
    images = os.path.join(work, "images.pt")
    n, b, k = 88, 4, 4  # 5 windows of 4 and one of 2
    image_data(images, n)
    for mode in ("pytorch", "accelerator", "trainer"):
        common = {"model": "mlp", "dataset": "tensors", "data": images, "mode": mode, "batch-size": b,
                  "accumulation-steps": k, "seed": 3}
        aten = run(os.path.join(work, "aten"), dict(common, **{"cpu-kernels": "aten"}))
        fused = run(os.path.join(work, "fused"), dict(common, **{"cpu-kernels": "fused"}))
        expected = [(s["grad_norm_sq_small"], s["grad_norm_sq_big"], s["batch_small"], s["batch_big"])
                    for s in aten.steps]
        if not expected or not all(finite(v) for e in expected for v in e):
            fail("mlp, %s, --cpu-kernels aten: raw figures missing or not numbers: %r" % (mode, expected))
        compare_raw("built-in mlp, %s, %d × %d, fused kernels against aten" % (mode, b, k), fused.steps, expected)


CASES = {"reference": case_reference, "raw": case_raw, "processes": case_processes, "fused": case_fused}

if __name__ == "__main__":
    case, program, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.environ["ACCUM_RUN"] = program
    shutil.rmtree(work, ignore_errors=True)
    torch.set_num_threads(1)
    print("torch %s, accum-run %s" % (torch.__version__, program), flush=True)
    CASES[case](work)
    print("PASS", flush=True)
