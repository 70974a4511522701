# SPDX-License-Identifier: GPL-3.0-or-later
"""A model's training step as an AOTInductor package (--model FILE.pt2,
examples/accum_pt2.py): accum-run trains it as eager PyTorch trains the module.

    pt2_models.py CASE ACCUM_RUN WORK_DIR

Cases (tests/models/CMakeLists.txt registers each):
  mlp    a two-layer MLP written by export_training_package: plain SGD from C++
         against eager PyTorch's SGD on the same batches, in losses and final
         weights within 1e-6, at micro-batches of 8, 8, 6 (the epoch's partial
         last) and again at B = 5 × K = 2 from the same package (the batch
         dimension is dynamic: no recompile); the conversion prints no
         TorchScript warning; a package whose accum.json names another torch
         release is refused, naming both releases.
  hf_trainer  the models suite's three Transformers models (the pretrained
         MiniLM classifier, a tied GPT-2-style causal LM, a DistilBERT token
         classifier) written by hf_to_accum.py --format pt2 --dropout off: each
         style against the real Trainer on the model the package was made from,
         per step within 1e-5.
  hf_dropout  the GPT-2 with dropout on: two seeds give different step losses;
         the same batch at unchanged weights gives a different loss at each step
         (equal ones with the package made with --dropout off);
         the run's evaluation equals the Transformers model loaded with
         from_pretrained from the run's output (model.safetensors, config.json)
         in eval(), within 1e-5.
  hf_resume  the MiniLM (dropout off) in --mode trainer with checkpoints: accum-run
         --resume and the real Trainer's resume_from_checkpoint from the engine's
         checkpoint-2 continue the uninterrupted run (losses within 1e-5, learning
         rates, gradient norms); from_pretrained(checkpoint-2) loads every weight.
  files      the studio test's package and data (tests/ui/test_own_package.cpp).
  memory     the MiniLM's memory records and `accum-run estimate` / `plan` at
         8 × 2, 8 × 1 and 32 × 1 (case_memory says what each checks).

Compiled packages are kept in ~/.cache/accum-studio/pt2 (ACCUM_PT2_CACHE),
keyed by a hash of what makes them (this file's model, accum_pt2.py, torch's
version): a second run of the suite compiles nothing.
"""
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import zipfile

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "peers"))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import accum_pt2  # noqa: E402
import peers  # noqa: E402

SKIP = 77
BOUND = 1e-6  # the bound for the MLP: float32 in another order differs by ~1e-8 here


def fail(message):
    print("FAIL: " + message, flush=True)
    sys.exit(1)


def cache_dir():
    d = os.environ.get("ACCUM_PT2_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "accum-studio", "pt2")
    os.makedirs(d, exist_ok=True)
    return d


def cached_package(key_text, make):
    """The package `make(tmp, final)` writes at tmp (files beside it next to final), from the
    cache when the same inputs made one before."""
    with open(os.path.join(ROOT, "examples", "accum_pt2.py"), "rb") as f:
        source = f.read()
    key = hashlib.sha256(source + key_text.encode() + torch.__version__.encode()).hexdigest()[:20]
    path = os.path.join(cache_dir(), key + ".pt2")
    if not os.path.exists(path):
        tmp = path + ".tmp%d.pt2" % os.getpid()
        make(tmp, path)
        os.replace(tmp, path)
        print("compiled %s" % path, flush=True)
    else:
        print("from the cache: %s" % path, flush=True)
    return path


# ------------------------------------------------------------------ the MLP

def mlp(seed=3):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))


def mlp_package(work):
    def make(path, final):
        # Convert in a child Python so that its whole output can be checked for TorchScript's warning.
        script = ("import sys, torch; sys.path.insert(0, %r); sys.path.insert(0, %r)\n"
                  "import accum_pt2, pt2_models\n"
                  "m = pt2_models.mlp()\n"
                  "accum_pt2.export_training_package(m, {'input_ids': torch.randn(4, 12), "
                  "'labels': torch.randint(0, 4, (4,))}, %r, loss_fn=torch.nn.functional.cross_entropy)\n"
                  % (os.path.join(ROOT, "examples"), HERE, path))
        env = dict(os.environ, PYTHONWARNINGS="default")
        p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
        out = p.stdout + p.stderr
        if p.returncode != 0:
            fail("export_training_package failed:\n" + out[-3000:])
        for word in ("torch.jit", "TorchScript"):
            if word in out:
                fail("the .pt2 conversion printed %r:\n%s" % (word, out[-2000:]))
        print("the conversion's output names neither torch.jit nor TorchScript", flush=True)

    return cached_package("mlp 12-16-4 tanh seed 3 batch 4", make)


def mlp_data(work):
    g = torch.Generator().manual_seed(11)
    data = {"inputs": torch.randn(22, 12, generator=g), "labels": torch.randint(0, 4, (22,), generator=g)}
    path = os.path.join(work, "mlp_data.pt")
    torch.save({"train": data}, path)
    return path, data


def eager_sgd(data, batch, k, steps, lr):
    """Plain SGD on the eager module over the engine's order: loss / K per micro-batch."""
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    n = len(data["labels"])
    losses, epoch, sizes = [], 0, []
    while len(losses) < steps:
        order = torch.tensor(peers.epoch_order(n, 0, epoch, True))
        micro = [order[s:s + batch] for s in range(0, n, batch)]
        for start in range(0, len(micro), k):
            window, total = micro[start:start + k], 0.0
            for idx in window:
                loss = F.cross_entropy(model(data["inputs"][idx]), data["labels"][idx])
                (loss / k).backward()
                total += loss.item()
                sizes.append(len(idx))
            opt.step()
            opt.zero_grad(set_to_none=True)
            losses.append(total / len(window))
            if len(losses) == steps:
                break
        epoch += 1
    return losses, dict(model.named_parameters()), sizes


def saved_weights(run_dir, step):
    path = os.path.join(run_dir, "checkpoint-%d" % step, "model.safetensors")
    if not os.path.exists(path):
        fail("the run saved no %s" % path)
    # The checkpoint's one copy of the weights: without Hugging Face metadata,
    # under the engine's parameter names (its state_dict names).
    from safetensors.torch import load_file
    return load_file(path)


def case_mlp(work):
    os.makedirs(work, exist_ok=True)
    package = mlp_package(work)
    data_file, data = mlp_data(work)
    with zipfile.ZipFile(package) as z:
        names = z.namelist()
    for graph in ("train", "eval"):
        if not any("/aotinductor/%s/" % graph in n for n in names):
            fail("the package has no %s graph: %s" % (graph, names[:6]))
    lr, steps = 0.1, 3
    for batch, k, expected_sizes in ((8, 1, [8, 8, 6]), (5, 2, [5, 5, 5, 5, 2])):
        what = "mlp .pt2, B=%d K=%d" % (batch, k)
        reference, weights, sizes = eager_sgd(data, batch, k, steps, lr)
        if sizes != expected_sizes:
            fail("%s: eager's micro-batches were %s, the case wants %s" % (what, sizes, expected_sizes))
        out = os.path.join(work, "run-%d-%d" % (batch, k))
        run = peers.run_engine(out, {
            "model": package, "dataset": "tensors", "data": data_file, "mode": "pytorch", "batch-size": batch,
            "accumulation-steps": k, "max-steps": steps, "lr": lr, "optimizer": "sgd", "momentum": 0,
            "scheduler": "constant", "eval-strategy": "no", "save-strategy": "steps", "save-steps": steps,
            "logging-steps": 1, "quiet": True})
        engine = [s["loss"] for s in run.steps]
        if len(engine) != steps:
            fail("%s: %d step records, expected %d" % (what, len(engine), steps))
        if not all(math.isfinite(v) for v in engine + reference):
            fail("%s: a non-finite loss (engine %s, eager %s)" % (what, engine, reference))
        worst = max(abs(a - b) for a, b in zip(engine, reference))
        print("%-40s losses %s; largest difference from eager %.2e (bound %.0e)"
              % (what, ["%.6f" % v for v in engine], worst, BOUND), flush=True)
        if worst > BOUND:
            fail("%s: engine %s, eager %s" % (what, engine, reference))
        saved = saved_weights(out, steps)
        if sorted(saved) != sorted(weights):
            fail("%s: the saved parameters are %s, eager's %s" % (what, sorted(saved), sorted(weights)))
        apart = max(float((saved[n] - weights[n].detach()).abs().max()) for n in weights)
        moved = max(float((saved[n] - p.detach()).abs().max()) for n, p in mlp().named_parameters())
        print("%-40s final weights %.2e from eager's (moved %.2e from the start)" % (what, apart, moved), flush=True)
        if not apart <= BOUND or not moved > 1e-4:
            fail("%s: final weights %.3g from eager's, %.3g from the start" % (what, apart, moved))
    refuse_other_release(work, package, data_file)


def refuse_other_release(work, package, data_file):
    """The same package with accum.json saying torch 2.9.0: refused, naming both releases and the fix."""
    other = os.path.join(work, "other_release.pt2")
    with zipfile.ZipFile(package) as src, zipfile.ZipFile(other, "w") as dst:
        for item in src.infolist():
            body = src.read(item.filename)
            if item.filename.endswith("/extra/accum.json"):
                meta = json.loads(body)
                meta["torch_version"] = "2.9.0+cpu"
                body = json.dumps(meta).encode()
            dst.writestr(item, body)
    argv = [peers.engine_program(), "--model", other, "--dataset", "tensors", "--data", data_file, "--max-steps", "1",
            "--eval-strategy", "no", "--device", "cpu", "--output-dir", os.path.join(work, "refused")]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    text = p.stdout + p.stderr
    if p.returncode != 2 or "2.9.0" not in text or torch.__version__.split("+")[0] not in text or "export it again" not in text:
        fail("a package from torch 2.9.0: exit %d, %s" % (p.returncode, text[-800:]))
    print("a package from torch 2.9.0 is refused (exit 2): %s" % text.strip().splitlines()[-1][:200], flush=True)


# ------------------------------------------------------------------ Transformers models

HF_STEPS = 3


def hf_package(work, name, task, source, columns, fmt, dropout):
    """hf_to_accum.py --format pt2 on the models suite's rows: (package, data file), cached."""
    import run_models
    work_rows = os.path.join(work, "rows-" + name)
    os.makedirs(work_rows, exist_ok=True)
    train_file = run_models.write_rows(os.path.join(work_rows, "train.%s" % fmt),
                                       [{k: r[k] for k in columns} for r in run_models.sentence_rows(64, 10)])
    validation_file = run_models.write_rows(os.path.join(work_rows, "validation.%s" % fmt),
                                            [{k: r[k] for k in columns} for r in run_models.sentence_rows(32, 11)])
    args = source + ["--task", task, "--train", train_file, "--validation", validation_file, "--max-length", "32",
                     "--dropout", dropout, "--format", "pt2"]
    with open(os.path.join(ROOT, "examples", "hf_to_accum.py"), "rb") as f:
        maker = f.read()
    with open(train_file, "rb") as a, open(validation_file, "rb") as b:
        rows = a.read() + b.read()
    # The rows' own bytes are in the key, their paths (the work folder's) are not.
    key_text = repr([os.path.basename(a) for a in args[len(source):]]) + repr(source[1:] if source[0] == "--config" else "minilm") + \
        hashlib.sha256(maker + rows).hexdigest()
    data_file = os.path.join(work, name + "_data.pt")

    def make(path, final):
        code, text = run_models.hf_to_accum(args + ["--output-model", path, "--output-data", final + ".data.pt"])
        for word in ("torch.jit", "TorchScript"):
            if word in text:
                fail("hf_to_accum.py --format pt2 printed %r:\n%s" % (word, text[-2000:]))
        print("hf_to_accum.py --format pt2 printed neither torch.jit nor TorchScript", flush=True)

    package = cached_package(key_text, make)
    if not os.path.exists(package + ".data.pt"):
        fail("the cached package %s lost its data file" % package)
    shutil.copy(package + ".data.pt", data_file)
    return package, data_file


def package_model(package, auto_class):
    """The Transformers model the package was made from: its hf/config.json and its initial weights."""
    import transformers
    from safetensors.torch import load as load_safetensors
    with zipfile.ZipFile(package) as z:
        files = {n.split("/", 1)[1]: z.read(n) for n in z.namelist()}
    config = transformers.AutoConfig.for_model(**json.loads(files["extra/hf/config.json"]))
    model = getattr(transformers, auto_class).from_config(config)
    state = load_safetensors(files["accum/weights.safetensors"])
    # The package holds every buffer, the non-persistent ones too (position_ids), which state_dict() leaves out.
    buffers = dict(model.named_buffers())
    state = {k: v for k, v in state.items() if k not in buffers or k in model.state_dict()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or any(not k.endswith("lm_head.weight") for k in missing):
        fail("%s's weights do not fit %s: missing %s, unexpected %s" % (package, auto_class, missing, unexpected))
    return model


class ForTrainer(torch.nn.Module):
    """The Transformers model as the models suite's TracedForTrainer calls a traced
    one: no num_items_in_batch, so the Trainer averages each micro-batch as the engine does."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def train(self, mode=True):
        # The package was compiled without dropout (--dropout off): the model's eval()
        # is its train() without dropout (these models have no BatchNorm).
        super().train(mode)
        self.model.eval()
        return self

    def forward(self, input_ids, attention_mask, labels, token_type_ids=None):
        extra = {} if token_type_ids is None else {"token_type_ids": token_type_ids}
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, labels=labels, **extra)
        return peers.Output(loss=out.loss, logits=out.logits)


def hf_cases(tokenizer):
    import run_models
    return [
        ("MiniLM sequence classifier", "minilm", "sequence-classification", ["--model", tokenizer],
         ["text", "label"], "csv", "AutoModelForSequenceClassification"),
        ("GPT-2 causal LM (tied)", "gpt2", "causal-lm",
         ["--config", "gpt2", "--tokenizer", tokenizer] + sum((["--set", s] for s in run_models.GPT2_SETS), []),
         ["text"], "json", "AutoModelForCausalLM"),
        ("DistilBERT token classifier", "distilbert", "token-classification",
         ["--config", "distilbert", "--tokenizer", tokenizer] + sum((["--set", s] for s in run_models.DISTILBERT_SETS),
                                                                    []),
         ["tokens", "tags"], "json", "AutoModelForTokenClassification"),
    ]


def hf_setup(work):
    sys.path.insert(0, HERE)
    import run_models
    peer_loops = run_models.trainer_peers(work)
    tokenizer = run_models.require_hf(work)
    return run_models, peer_loops, tokenizer


def case_hf_trainer(work):
    """The three models as .pt2, dropout off: each style against the real Trainer on
    the Transformers model the package was made from, per step within 1e-5."""
    run_models, peer_loops, tokenizer = hf_setup(work)
    for title, name, task, source, columns, fmt, auto_class in hf_cases(tokenizer):
        package, data_file = hf_package(work, name, task, source, columns, fmt, "off")
        run_models.styles_against_trainer(work, peer_loops, title + " .pt2", name, package, data_file,
                                          lambda: ForTrainer(package_model(package, auto_class)))


def case_hf_dropout(work):
    """The tied GPT-2 as .pt2 with dropout on: step losses differ from dropout off and
    between two seeds; the run's evaluation equals the model's eval() forward (1e-5);
    the saved model.safetensors + config.json load with from_pretrained and give it again."""
    run_models, _, tokenizer = hf_setup(work)
    title, name, task, source, columns, fmt, auto_class = hf_cases(tokenizer)[1]
    package, data_file = hf_package(work, name + "-dropout", task, source, columns, fmt, "on")
    base = {"model": package, "dataset": "tensors", "data": data_file, "mode": "pytorch", "batch-size": 8,
            "accumulation-steps": 2, "max-steps": HF_STEPS, "lr": 1e-3, "optimizer": "adamw", "scheduler": "constant",
            "eval-strategy": "steps", "eval-steps": HF_STEPS, "save-strategy": "no", "logging-steps": 1,
            "quiet": True}
    runs = {seed: peers.run_engine(os.path.join(work, "seed%d" % seed), dict(base, seed=seed)) for seed in (0, 1)}
    losses = {seed: run_models.engine_losses(r, "seed %d" % seed, HF_STEPS) for seed, r in runs.items()}
    for seed, values in losses.items():
        if not all(math.isfinite(v) for v in values):
            fail("dropout on, seed %d: non-finite losses %s" % (seed, values))
    print("dropout on: seed 0 %s, seed 1 %s" % (losses[0], losses[1]), flush=True)
    if abs(losses[0][0] - losses[1][0]) < 1e-6:
        fail("dropout on: step 1 is the same under seeds 0 and 1 (%r): the masks do not follow --seed" % losses[0][0])
    # Masks change from step to step: one row repeated, weights that do not move
    # (SGD at lr 1e-30 moves no float32 weight that is not 0): each step sees the same
    # batch at the same weights, so only dropout's masks can tell its steps apart.
    off_package, _ = hf_package(work, name, task, source, columns, fmt, "off")
    same = {}
    for tag, path in (("on", package), ("off", off_package)):
        row = {k: v[:1].repeat(8, *([1] * (v.dim() - 1))) for k, v in torch.load(data_file)["train"].items()}
        rows_file = os.path.join(work, "same_row.pt")
        torch.save({"train": row}, rows_file)
        options = dict(base, model=path, data=rows_file, **{"accumulation-steps": 1, "optimizer": "sgd", "momentum": 0,
                                                            "lr": 1e-30, "eval-strategy": "no"})
        del options["eval-steps"]
        run = peers.run_engine(os.path.join(work, "same-" + tag), options)
        same[tag] = run_models.engine_losses(run, "the same batch, dropout " + tag, HF_STEPS)
        if not all(math.isfinite(v) for v in same[tag]):
            fail("the same batch, dropout %s: non-finite losses %s" % (tag, same[tag]))
    spread = {tag: max(v) - min(v) for tag, v in same.items()}
    closest_on = min(abs(a - b) for i, a in enumerate(same["on"]) for b in same["on"][i + 1:])
    print("the same batch at %d steps: dropout on %s (closest two %.2e apart), off %s (spread %.2e, bound 1e-6)"
          % (HF_STEPS, same["on"], closest_on, same["off"], spread["off"]), flush=True)
    if spread["off"] > 1e-6:
        fail("dropout off: the same batch at the same weights gives step losses %s" % same["off"])
    if closest_on < 1e-6:
        fail("dropout on: two steps of the same batch have the same loss (%s): the masks did not change" % same["on"])
    # The same model without dropout: a Python forward in eval() at the initial weights.
    model = package_model(package, auto_class)
    data = torch.load(data_file)
    train = {k: v[:8] for k, v in data["train"].items()}
    model.train()
    torch.manual_seed(0)
    with torch.no_grad():
        a, b = (float(model(**train).loss) for _ in range(2))
    if abs(a - b) < 1e-7:
        fail("dropout on: two train() forwards in Python agree (%r): the config has no dropout to test" % a)
    # Evaluation: the run's final eval loss against Python's eval() forward of the trained weights.
    out = os.path.join(work, "seed0")
    import transformers
    trained = transformers.AutoModelForCausalLM.from_pretrained(out)
    trained.eval()
    if len(runs[0].evals) != 1 or not math.isfinite(runs[0].evals[0]["eval_loss"]):
        fail("dropout on: expected one finite evaluation, got %s" % runs[0].evals)
    engine_eval = runs[0].evals[0]["eval_loss"]
    python_eval = eval_loss(trained, data["validation"], 8, shift=1)
    print("evaluation: engine %.7f, from_pretrained(run) in eval() %.7f" % (engine_eval, python_eval), flush=True)
    if not abs(engine_eval - python_eval) <= 1e-5:
        fail("evaluation: engine %.7f, Python %.7f" % (engine_eval, python_eval))


def eval_loss(model, split, batch_size, shift):
    """The validation loss as the engine averages it: each batch's mean × its label
    items (from position `shift`) over all items."""
    total, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(split["labels"]), batch_size):
            batch = {k: v[start:start + batch_size] for k, v in split.items()}
            labels = batch["labels"]
            items = len(labels) if labels.dim() == 1 else int(labels[:, shift:].ne(-100).sum())
            total += float(model(**batch).loss) * items
            count += items
    return total / count


def without_dropout(model):
    """The model as the package trains it (--dropout off): its train() keeps every
    submodule in eval() (these models have no BatchNorm, so that is all it changes)."""
    import types
    model.train = types.MethodType(lambda self, mode=True: torch.nn.Module.train(self, False), model)
    return model.eval()


def case_hf_resume(work):
    """The pretrained MiniLM as .pt2 (dropout off), --mode trainer, AdamW with weight
    decay and a linear schedule, a checkpoint every 2 steps: accum-run --resume
    checkpoint-2 and the real Trainer's train(resume_from_checkpoint=checkpoint-2)
    each continue with the uninterrupted run's losses (1e-5), learning rates and
    gradient norms, as tests/peers/hf_checkpoint.py checks for a TorchScript module;
    from_pretrained(checkpoint-2) loads every weight."""
    run_models, peer_loops, tokenizer = hf_setup(work)
    title, name, task, source, columns, fmt, auto_class = hf_cases(tokenizer)[0]
    package, data_file = hf_package(work, name, task, source, columns, fmt, "off")
    data = torch.load(data_file)
    at, steps = 2, 4  # 64 rows, 8 × 2: 4 steps an epoch; checkpoint-2 is inside it
    options = {"model": package, "dataset": "tensors", "data": data_file, "mode": "trainer", "batch-size": 8,
               "accumulation-steps": 2, "max-steps": steps, "lr": 1e-3, "optimizer": "adamw", "weight-decay": 0.01,
               "max-grad-norm": 1.0, "scheduler": "linear", "warmup-steps": 1, "seed": 0, "eval-strategy": "no",
               "save-strategy": "steps", "save-steps": at, "logging-steps": 1, "quiet": True}
    full = peers.run_engine(os.path.join(work, "engine"), options, timeout=600)
    losses = run_models.engine_losses(full, "uninterrupted", steps)
    checkpoint = os.path.join(full.out_dir, "checkpoint-%d" % at)
    state = json.load(open(os.path.join(checkpoint, "accum_state.json")))
    if not 0 < state["progress"]["next_index"] < 8:
        fail("checkpoint-%d is not inside an epoch: %s" % (at, state["progress"]))

    import transformers
    model, info = getattr(transformers, auto_class).from_pretrained(checkpoint, output_loading_info=True)
    if info["missing_keys"] or info["mismatched_keys"] or info["unexpected_keys"]:
        fail("from_pretrained(checkpoint-%d): %s" % (at, info))
    print("from_pretrained(checkpoint-%d): every weight loads (%d tensors)" % (at, len(model.state_dict())), flush=True)

    again = peers.run_engine(os.path.join(work, "engine-resumed"), dict(options, resume=checkpoint), timeout=600)
    run_models.compare("%s .pt2: accum-run --resume checkpoint-%d" % (title, at),
                       run_models.engine_losses(again, "resumed", steps - at), losses[at:])

    fresh = lambda: without_dropout(getattr(transformers, auto_class).from_config(
        transformers.AutoConfig.from_pretrained(checkpoint)))
    cfg = {"model": name, "batch-size": 8, "accumulation-steps": 2, "lr": 1e-3, "weight-decay": 0.01,
           "max-grad-norm": 1.0, "scheduler": "linear", "warmup-steps": 1, "epochs": 1, "max-steps": steps,
           "optimizer": "adamw", "seed": 0, "logging-steps": 1, "save-strategy": "no"}
    original = peers.make_model
    peers.make_model = lambda kind_, init, vocab=0: fresh()
    try:
        # accepts_loss_kwargs=False: each micro-batch's mean divided by K, as the engine's mean.
        tr = peer_loops.trainer_run(cfg, {"train": run_models.Split(data["train"]),
                                          "eval": run_models.Split(data["validation"])}, None,
                                    os.path.join(work, "trainer-resumed"), accepts_loss_kwargs=False,
                                    resume=checkpoint)
    finally:
        peers.make_model = original
    if [s["step"] for s in tr["steps"]] != list(range(at + 1, steps + 1)):
        fail("the resumed Trainer ran steps %s, expected %d..%d" % ([s["step"] for s in tr["steps"]], at + 1, steps))
    run_models.compare("%s .pt2: the real Trainer resumed from checkpoint-%d" % (title, at),
                       losses[at:], [s["loss"] for s in tr["steps"]])
    for key, bound, relative in (("learning_rate", 1e-9, False), ("grad_norm", 1e-5, True)):
        ours, theirs = [s[key] for s in full.steps[at:]], [s[key] for s in tr["steps"]]
        if not all(math.isfinite(v) for v in ours + theirs):
            fail("%s: non-finite (engine %s, Trainer %s)" % (key, ours, theirs))
        worst = max(abs(a - b) / (abs(b) if relative else 1.0) for a, b in zip(ours, theirs))
        print("the resumed Trainer's %s: largest %s difference %.2e (bound %.0e)"
              % (key, "relative" if relative else "absolute", worst, bound), flush=True)
        if worst > bound:
            fail("the resumed Trainer's %s: engine %s, Trainer %s" % (key, ours, theirs))


def package_bytes(package):
    """Bytes of the package's parameters and of those it trains (its accum.json's shapes and dtypes)."""
    with zipfile.ZipFile(package) as z:
        meta = json.loads(next(z.read(n) for n in z.namelist() if n.endswith("/extra/accum.json")))
    size = lambda p: math.prod(p["shape"]) * torch.empty(0, dtype=getattr(torch, p["dtype"])).element_size()
    return sum(size(p) for p in meta["parameters"]), sum(size(p) for p in meta["parameters"] if p["trained"])


def case_memory(work):
    """The MiniLM .pt2's memory, AdamW: the records' parameters, gradients and optimizer
    state are the package's own sizes (two moments a trained parameter); the activations
    are what the compiled call allocates, at its peak: at K = 2 they hold the gradients it
    returns (added into the window's) but no second copy of them, at K = 1 those gradients
    are the gradients; `accum-run estimate` predicts each within models.plan's 15 %, and
    `accum-run plan --memory-budget` proposes a micro-batch × K that runs under it: smaller
    micro-batches under the 32 × 1 peak, 32 × 1 itself under a budget it fits but 16 × 2
    (a second copy of the gradients) would not."""
    run_models, _, tokenizer = hf_setup(work)
    title, name, task, source, columns, fmt, auto_class = hf_cases(tokenizer)[0]
    package, data_file = hf_package(work, name, task, source, columns, fmt, "off")
    params, trained = package_bytes(package)
    common = ["--model", package, "--dataset", "tensors", "--data", data_file, "--device", "cpu", "--threads", "1",
              "--optimizer", "adamw", "--lr", "1e-3", "--eval-strategy", "no"]
    measured_peak = {}
    for batch, k in ((8, 2), (8, 1), (32, 1)):
        what = "%s .pt2 at %d × %d" % (title, batch, k)
        out = os.path.join(work, "run-%d-%d" % (batch, k))
        run = peers.run_engine(out, {"model": package, "dataset": "tensors", "data": data_file, "batch-size": batch,
                                     "accumulation-steps": k, "max-steps": 2, "optimizer": "adamw", "lr": 1e-3,
                                     "eval-strategy": "no", "save-strategy": "no", "quiet": True}, timeout=600)
        losses = run_models.engine_losses(run, what, 2)
        if not all(math.isfinite(v) for v in losses):
            fail("%s: non-finite losses %s" % (what, losses))
        records = [json.loads(line) for line in open(os.path.join(out, "metrics.jsonl"))]
        last = [r for r in records if r.get("type") == "memory"][-1]
        static = {"parameters": last["peak_parameters_bytes"], "gradients": last["peak_gradients_bytes"],
                  "optimizer state": last["peak_optimizer_state_bytes"]}
        if static != {"parameters": params, "gradients": trained, "optimizer state": 2 * trained}:
            fail("%s: the memory record's static parts %s; the package's sizes give parameters %d, gradients %d, "
                 "AdamW's two moments %d" % (what, static, params, trained, 2 * trained))
        activations = max(r["peak_activations_bytes"] for r in records if r.get("type") == "step")
        measured_peak[(batch, k)] = json.load(open(os.path.join(out, "summary.json")))["peak_memory_bytes"]
        rc, text, err = run_models.accum_run(["estimate", "--json", "--batch-size", str(batch), "--accumulation-steps",
                                              str(k)] + common, timeout=600)
        if rc != 0:
            fail("accum-run estimate at %d × %d exited %d: %s" % (batch, k, rc, err[-2000:]))
        estimate = json.loads(text)
        print("%-44s activations %.1f MiB measured, %.1f MiB estimated; peak %.1f MiB measured, %.1f MiB estimated; "
              "the returned gradients %.1f MiB" % (what, activations / 2**20, estimate["activation_bytes"] / 2**20,
                                                   measured_peak[(batch, k)] / 2**20,
                                                   estimate["predicted_peak_bytes"] / 2**20, trained / 2**20),
              flush=True)
        if estimate["returned_gradient_bytes"] != trained:
            fail("%s: the estimate's returned_gradient_bytes %r, the package trains %d bytes"
                 % (what, estimate["returned_gradient_bytes"], trained))
        # The window's gradients exist from its second micro-batch on: the call's returned
        # gradients are then activations until backward adds them in. The backward scales
        # them in place, so no second copy: the call's other allocations at 8 × 32 tokens
        # are far below one copy of MiniLM's gradients.
        if k > 1 and not trained <= activations < 2 * trained:
            fail("%s: peak activations %d, expected the returned gradients (%d) and less than two copies"
                 % (what, activations, trained))
        if k == 1 and batch == 8 and not 0 < activations < trained:
            fail("%s: peak activations %d; at K = 1 the returned gradients (%d) are the gradients"
                 % (what, activations, trained))
        for figure, ours, theirs in (("activations", estimate["activation_bytes"], activations),
                                     ("peak", estimate["predicted_peak_bytes"], measured_peak[(batch, k)])):
            if not (ours > 0 and theirs > 0) or abs(ours - theirs) / theirs > 0.15:
                fail("%s: the estimate's %s %r against the measured %r (bound 15 %%)" % (what, figure, ours, theirs))
    # The planner, its safety margin 10 %: a budget at the measured peak of 32 × 1 keeps
    # the whole batch as one micro-batch out; one 15 % above it lets 32 × 1 in, which
    # at K >= 2 would hold a second copy of the gradients and not fit.
    for budget, whole in ((measured_peak[(32, 1)], False), (int(measured_peak[(32, 1)] * 1.15), True)):
        rc, text, err = run_models.accum_run(["plan", "--memory-budget", str(budget), "--target-batch", "32"] + common,
                                             timeout=600)
        if rc != 0:
            fail("accum-run plan exited %d: %s" % (rc, err[-2000:]))
        plan = json.loads(text)
        b, k = plan["batch_size"], plan["accumulation_steps"]
        print("plan under %.1f MiB: micro-batch %d × K %d, predicted %.1f MiB" % (budget / 2**20, b, k,
                                                                               plan["predicted_peak_bytes"] / 2**20))
        if b * k != 32 or (b == 32) != whole:
            fail("the plan %d × %d under %d bytes: expected 32 as %s" % (b, k, budget, "one micro-batch" if whole else
                                                                       "smaller micro-batches"))
        out = os.path.join(work, "planned-%d" % b)
        peers.run_engine(out, {"model": package, "dataset": "tensors", "data": data_file, "batch-size": b,
                               "accumulation-steps": k, "max-steps": 2, "optimizer": "adamw", "lr": 1e-3,
                               "eval-strategy": "no", "save-strategy": "no", "quiet": True, "memory-budget": budget},
                         timeout=600)
        peak = json.load(open(os.path.join(out, "summary.json")))["peak_memory_bytes"]
        print("the planned run's peak: %.1f MiB under the %.1f MiB budget" % (peak / 2**20, budget / 2**20), flush=True)
        if not 0 < peak <= budget:
            fail("the planned run peaked at %d bytes, over the budget %d" % (peak, budget))


def case_files(work):
    """The studio's test files (tests/ui/test_own_package.cpp): the MLP's package as
    WORK/mlp.pt2 and 64 training and 16 evaluation rows as WORK/mlp_data.pt."""
    os.makedirs(work, exist_ok=True)
    package = mlp_package(work)
    g = torch.Generator().manual_seed(5)
    split = lambda n: {"inputs": torch.randn(n, 12, generator=g), "labels": torch.randint(0, 4, (n,), generator=g)}
    torch.save({"train": split(64), "validation": split(16)}, os.path.join(work, "mlp_data.pt"))
    shutil.copy(package, os.path.join(work, "mlp.pt2"))
    print("wrote %s and mlp_data.pt" % os.path.join(work, "mlp.pt2"), flush=True)


CASES = {"files": case_files, "memory": case_memory, "mlp": case_mlp, "hf_trainer": case_hf_trainer, "hf_dropout": case_hf_dropout, "hf_resume": case_hf_resume}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        print(__doc__)
        sys.exit(2)
    case, engine, work = sys.argv[1:]
    os.environ["ACCUM_RUN"] = engine
    if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) < (2, 6):
        print("SKIP: torch %s has no AOTInductor packages" % torch.__version__)
        sys.exit(SKIP)
    shutil.rmtree(work, ignore_errors=True)
    CASES[case](work)
    print("PASS", flush=True)


if __name__ == "__main__":
    main()
