#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Any nn.Module's training step as an AOTInductor package (.pt2) that
accum-run trains: the route that does not go through TorchScript.

    import accum_pt2
    accum_pt2.export_training_package(model, {"input_ids": x, "labels": y}, "model.pt2",
                                      loss_fn=torch.nn.functional.cross_entropy)
    accum-run --model model.pt2 --dataset tensors --data data.pt ...

The package holds two compiled graphs over the same inputs:

  "train"  (every parameter, every buffer, the batch, seed) ->
           (loss, logits, one gradient per trainable parameter, the buffers
           after the step: BatchNorm's running statistics)
  "eval"   (every parameter, every buffer, the batch) -> (loss, logits),
           the model in eval() with no gradients and no dropout.

How the step is captured: torch.func.functional_call of the model over its
parameters and buffers given as inputs, then torch.autograd.grad of the loss,
traced with make_fx(tracing_mode="symbolic") (a Transformers model has
data-dependent masking code), exported by torch.export.export with the batch
dimension dynamic (the last partial micro-batch, a changed B: no recompile; the
other dimensions are the example's) and compiled by
torch._inductor.aoti_compile_and_package. No torch.jit call anywhere.

Dropout: while tracing, torch.nn.functional.dropout is replaced by a
counter-based hash of (seed, call site, element index) made of integer tensor
ops, so the compiled graph draws its masks as a pure function of its seed
input; the engine passes a new seed each micro-batch, drawn from --seed.

The batch keys are what the engine's data has: input_ids (the inputs, of any
dtype), attention_mask, token_type_ids, labels. The model is called as
model(**batch) when loss_fn is None (it returns its loss: a Transformers
output with .loss and .logits, or a tuple (loss, logits)), else as
model(*inputs) -> logits with loss = loss_fn(logits, labels), a mean over the
label items.

The initial weights are the package's accum/weights.safetensors
(parameters and buffers by name; outside extra/, which Python's loader reads as text). Metadata (its extra/accum.json): format version, torch version,
parameter names in state_dict order with dtypes and shapes and whether each is
trained, buffer names, batch keys, outputs, label_shift (1 for a causal LM's
own shifted loss), dropout. Further extra files (hf/config.json, hf/model.json,
hf/tokenizer/... as examples/hf_to_accum.py writes them) go beside it."""
import contextlib
import json
import math
import os
import shutil
import tempfile

import torch
import torch.fx.experimental._config  # noqa: F401  (use_duck_shape)

FORMAT = "accum-pt2-train/1"
BATCH_KEYS = ("input_ids", "attention_mask", "token_type_ids", "labels")

# 31-bit mixing constants (odd): every product of a 31-bit value by one stays
# inside int64, so the hash is exact in eager, in Inductor's C++ and on CUDA.
_M1, _M2, _M3 = 0x5BD1E995 & 0x7FFFFFFF, 0x27D4EB2F & 0x7FFFFFFF, 0x165667B1
_MASK31 = 0x7FFFFFFF


def _mix(x):
    x = (x ^ (x >> 16)) & _MASK31
    x = (x * _M1) & _MASK31
    x = (x ^ (x >> 13)) & _MASK31
    x = (x * _M2) & _MASK31
    return x ^ (x >> 16)


def hash_uniform(seed, site, shape, device):
    """Uniform [0, 1) numbers of `shape`, a pure function of (seed, site, index)."""
    n = 1
    for s in shape:
        n = n * s
    index = torch.arange(n, device=device, dtype=torch.int64)
    base = _mix((seed.to(torch.int64) & _MASK31) ^ ((site * _M3) & _MASK31))
    x = _mix(((index & _MASK31) ^ ((index >> 31) * _M3) ^ base) & _MASK31)
    return (x.to(torch.float32) * (1.0 / 2147483648.0)).reshape(shape)


@contextlib.contextmanager
def seeded_dropout(seed):
    """torch.nn.functional.dropout drawn from `seed` (a 0-d int64 tensor)."""
    original = torch.nn.functional.dropout
    site = [0]

    def dropout(input, p=0.5, training=True, inplace=False):
        if not training or p == 0.0 or seed is None:
            return input
        if p >= 1.0:
            return input * 0.0
        site[0] += 1
        keep = hash_uniform(seed, site[0], input.shape, input.device) >= p
        return input * keep.to(input.dtype) * (1.0 / (1.0 - p))

    torch.nn.functional.dropout = dropout
    try:
        yield site
    finally:
        torch.nn.functional.dropout = original


def _loss_and_logits(model, batch, loss_fn):
    if loss_fn is None:
        out = model(**batch)
        if isinstance(out, (tuple, list)):
            return out[0], out[1]
        return out["loss"], out["logits"]
    inputs = [v for k, v in batch.items() if k != "labels"]
    logits = model(*inputs)
    return loss_fn(logits, batch["labels"]), logits


def _label_shift(loss, logits, labels):
    """0 when the loss is the cross-entropy of the logits against the labels,
    1 when against the next position's label (a causal LM), else None."""
    for s in (0, 1):
        if s == 1 and logits.dim() != 3:
            break
        lg = logits[:, : logits.size(1) - s] if s else logits
        lb = labels[:, s:] if s else labels
        ce = torch.nn.functional.cross_entropy(lg.reshape(-1, lg.size(-1)).float(), lb.reshape(-1))
        if abs(ce.item() - loss.item()) <= 1e-4 * max(1.0, abs(loss.item())):
            return s
    return None


def build_graphs(model, batch, loss_fn=None, dynamic_batch=True, dropout=True, autocast=None):
    """The training and evaluation steps of `model` as ExportedPrograms, and the metadata."""
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.func import functional_call

    keys = [k for k in BATCH_KEYS if k in batch]
    unknown = sorted(set(batch) - set(BATCH_KEYS))
    if unknown:
        raise ValueError(f"batch keys {unknown} are not among {list(BATCH_KEYS)}")
    if "labels" not in batch or "input_ids" not in batch:
        raise ValueError("the example batch needs input_ids and labels")
    batch = {k: batch[k] for k in keys}
    params = dict(model.named_parameters())  # tied weights once, as state_dict's first name
    buffers = dict(model.named_buffers())
    pnames, bnames = list(params), list(buffers)
    trained = [n for n in pnames if params[n].requires_grad]
    if not trained:
        raise ValueError("the model has no parameters that require gradients")
    was_training = model.training

    def call(p, b, bt, seed):
        state = dict(zip(pnames, p))
        state.update(zip(bnames, b))
        with seeded_dropout(seed if dropout else None) as sites, \
                torch.autocast(p[0].device.type, dtype=autocast or torch.bfloat16, enabled=autocast is not None):
            loss, logits = _loss_and_logits(lambda *a, **k: functional_call(model, state, a, k), bt, loss_fn)
        return loss, logits, sites[0]

    def train_step(*flat):
        p = list(flat[: len(pnames)])
        b = [t.clone() for t in flat[len(pnames) : len(pnames) + len(bnames)]]  # updated in place by the model
        bt = dict(zip(keys, flat[len(pnames) + len(bnames) : -1]))
        seed = flat[-1]
        loss, logits, _ = call(p, b, bt, seed)
        wrt = [p[pnames.index(n)] for n in trained]
        grads = torch.autograd.grad(loss, wrt, allow_unused=True)
        grads = [g if g is not None else torch.zeros_like(w) for g, w in zip(grads, wrt)]
        return (loss.detach(), logits.detach(), *grads, *b)

    def eval_step(*flat):
        p = list(flat[: len(pnames)])
        b = list(flat[len(pnames) : len(pnames) + len(bnames)])
        bt = dict(zip(keys, flat[len(pnames) + len(bnames) :]))
        with torch.no_grad():
            loss, logits, _ = call(p, b, bt, torch.zeros((), dtype=torch.int64))
        return loss, logits

    seed = torch.tensor(0, dtype=torch.int64)
    pt = [params[n].detach().requires_grad_(params[n].requires_grad) for n in pnames]
    bt = [buffers[n].detach().clone() for n in bnames]
    data = [batch[k] for k in keys]
    B = data[0].shape[0]
    batch_dim = torch.export.Dim("batch", min=1, max=1 << 20) if dynamic_batch and B >= 2 else None

    def dyn(n_tail_seed):
        specs = [None] * (len(pnames) + len(bnames)) + [{0: batch_dim} if batch_dim else None for _ in keys]
        return tuple(specs + [None] * n_tail_seed)

    # Probe eagerly: how many dropout sites, and the loss's relation to the logits.
    model.train()
    with torch.no_grad():
        loss, logits, sites = call([t.detach() for t in pt], [t.clone() for t in bt], batch, seed)
    shift = _label_shift(loss, logits, batch["labels"]) if logits is not None and logits.dim() >= 2 else None

    # Without duck shaping every dimension gets a symbol of its own: a batch of 4
    # beside a 4-class head would otherwise share one symbol and export the batch static.
    no_duck = torch.fx.experimental._config.patch(use_duck_shape=False)
    model.train()
    with no_duck:
        gm_train = make_fx(train_step, tracing_mode="symbolic")(*pt, *bt, *data, seed)
    ep_train = torch.export.export(gm_train, (*pt, *bt, *data, seed), dynamic_shapes=dyn(1), strict=False)
    model.eval()
    with no_duck:
        gm_eval = make_fx(eval_step, tracing_mode="symbolic")(*pt, *bt, *data)
    ep_eval = torch.export.export(gm_eval, (*pt, *bt, *data), dynamic_shapes=dyn(0), strict=False)
    model.train(was_training)

    meta = {
        "format": FORMAT,
        "torch_version": torch.__version__,
        "parameters": [
            {"name": n, "dtype": str(params[n].dtype).replace("torch.", ""), "shape": list(params[n].shape),
             "trained": params[n].requires_grad}
            for n in pnames
        ],
        "buffers": [
            {"name": n, "dtype": str(buffers[n].dtype).replace("torch.", ""), "shape": list(buffers[n].shape)}
            for n in bnames
        ],
        "batch": keys,
        "batch_dtypes": {k: str(batch[k].dtype).replace("torch.", "") for k in keys},
        "sequence_length": int(batch["input_ids"].shape[1]) if batch["input_ids"].dim() >= 2 else 0,
        "dynamic_batch": batch_dim is not None,
        "train_outputs": ["loss", "logits"] + [f"grad:{n}" for n in trained] + [f"buffer:{n}" for n in bnames],
        "eval_outputs": ["loss", "logits"],
        "label_shift": shift,
        "logits_shape": list(logits.shape) if logits is not None else [],
        "dropout_sites": sites,
        "dropout": bool(dropout and sites),
        "autocast": str(autocast).replace("torch.", "") if autocast is not None else None,
        "device": next(model.parameters()).device.type,
        "model_class": type(model).__name__,
    }
    return ep_train, ep_eval, meta


_ST_DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16", torch.bfloat16: "BF16",
              torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8",
              torch.bool: "BOOL"}


def safetensors_bytes(tensors):
    """{name: tensor} in the safetensors format (no package needed for it)."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().cpu().contiguous()
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": _ST_DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return len(text).to_bytes(8, "little") + text + b"".join(blobs)


def _vector_isa_options():
    """Inductor options that keep its C++ kernels vectorized where the CPU has the ISA.

    Inductor checks each ISA by compiling a probe and dlopen-ing it in a child Python;
    torch 2.15's probe leaves SLEEF's symbols (in libtorch_cpu, loaded without
    RTLD_GLOBAL) unresolved, so on such a machine every ISA is refused and every kernel
    is scalar C++. The package's library is loaded by a process that has LibTorch's
    symbols (accum-run, or Python with RTLD_GLOBAL), so the CPU's own flags decide.
    Each ISA's check is cached (functools.cache) with its refusal: those caches are
    cleared too, else only AVX2 (whose check is not cached) would come back, and
    never AVX-512 or AMX where the CPU has them."""
    from torch._inductor import cpu_vec_isa
    if cpu_vec_isa.pick_vec_isa() or not cpu_vec_isa.x86_isa_checker():
        return {}
    for isa in cpu_vec_isa.supported_vec_isa_list:
        getattr(type(isa).__bool__, "cache_clear", lambda: None)()
    cpu_vec_isa.valid_vec_isa_list.cache_clear()
    return {"cpp.vec_isa_ok": True}


def export_training_package(model, batch, path, loss_fn=None, extra_files=None, dynamic_batch=True,
                            inductor_configs=None, dropout=True, autocast=None):
    """Writes `model`'s training step and evaluation as one .pt2 package at `path`.

    batch: example tensors {"input_ids": ..., ["attention_mask", "token_type_ids"], "labels": ...},
    two samples or more (the batch dimension is exported dynamic).
    loss_fn: None when the model returns its own loss, else loss_fn(logits, labels) -> mean loss.
    extra_files: {name: str or bytes} stored beside the graphs (hf/config.json, ...).
    dropout: False traces the training step without dropout (masks of ones), for runs that must
    equal a Python run without dropout step for step.
    autocast: torch.bfloat16 (or float16) compiles the step under torch.autocast: the weights and
    gradients stay in their dtype, the matrix products run in the lower one (the engine's
    --mixed-precision is then the package's, fixed at export).
    Returns the metadata written into extra/accum.json."""
    from torch.export.pt2_archive._package import DEFAULT_PICKLE_PROTOCOL, PT2ArchiveWriter, _package_aoti_files

    configs = inductor_configs or {}
    autotune = [k for k in ("max_autotune", "max_autotune_gemm") if configs.get(k)]
    if autotune and dynamic_batch and configs.get("epilogue_fusion", True):
        # torch 2.15's C++ batched-matmul templates, fused with the ops around them, fix their batch
        # loop at the example's size while the package takes any batch: wrong losses and gradients.
        raise ValueError(f"inductor_configs {autotune[0]}=True with a dynamic batch: its fused C++ GEMM "
                         "templates compute the example batch's size only (bench/PT2_SPEED.md); add "
                         "epilogue_fusion=False, leave it out, or pass dynamic_batch=False")
    ep_train, ep_eval, meta = build_graphs(model, batch, loss_fn, dynamic_batch, dropout, autocast)
    options = _vector_isa_options()
    options.update(configs)
    options["aot_inductor.package"] = True
    state = dict(model.named_parameters())
    state.update(model.named_buffers())
    files = {"extra/accum.json": json.dumps(meta, indent=1), "accum/weights.safetensors": safetensors_bytes(state)}
    files.update({"extra/" + name: content for name, content in (extra_files or {}).items()})
    with tempfile.TemporaryDirectory() as tmp:
        aoti = {}
        for name, ep in (("train", ep_train), ("eval", ep_eval)):
            out = dict(options)
            out["aot_inductor.output_path"] = os.path.join(tmp, name)
            aoti[name] = torch._inductor.aot_compile(ep.module(), ep.example_inputs[0], options=out)
        # package_pt2's extra files are text only (Python's load_pt2 decodes each): the weights, bytes,
        # lie outside extra/, and hf/tokenizer/ files that are not UTF-8 would not load in Python.
        with PT2ArchiveWriter(path) as writer:
            _package_aoti_files(writer, aoti, pickle_protocol=DEFAULT_PICKLE_PROTOCOL)
            for name, content in files.items():
                writer.write_bytes(name, content if isinstance(content, bytes) else content.encode())
    return meta


def demo(package, data_file, device="cpu"):
    """A two-layer MLP on 64 random feature rows: the package (compiled for `device`)
    and the data file accum-run trains it on (--dataset tensors)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.Tanh(), torch.nn.Dropout(0.1),
                                torch.nn.Linear(32, 4)).to(device)
    x, y = torch.randn(64, 12), torch.randint(0, 4, (64,))
    torch.save({"train": {"inputs": x, "labels": y}, "validation": {"inputs": x[:16], "labels": y[:16]}}, data_file)
    return export_training_package(model, {"input_ids": x[:4].to(device), "labels": y[:4].to(device)}, package,
                                   loss_fn=torch.nn.functional.cross_entropy)


if __name__ == "__main__":
    import argparse
    import time

    parser = argparse.ArgumentParser(description="A demo: a two-layer MLP's training step as a .pt2 package "
                                                 "and its data (accum-run --model OUT.pt2 --dataset tensors --data DATA.pt)")
    parser.add_argument("package", metavar="OUT.pt2")
    parser.add_argument("data", metavar="DATA.pt")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda: the package is compiled for it")
    args = parser.parse_args()
    started = time.time()
    meta = demo(args.package, args.data, args.device)
    print("wrote %s (%d parameters, compiled for %s in %.1f s) and %s" % (
        args.package, sum(math.prod(p["shape"]) for p in meta["parameters"]), meta["device"], time.time() - started,
        args.data))
