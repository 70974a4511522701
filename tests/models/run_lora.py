# SPDX-License-Identifier: GPL-3.0-or-later
"""LoRA in and out: the packaged MiniLM wrapped by examples/hf_to_accum.py
--lora-r (peft.get_peft_model, dropout off), trained by accum-run, against the
real Transformers Trainer on the same PEFT model.

    run_lora.py CASE ACCUM_RUN WORK_DIR

Cases (tests/models/CMakeLists.txt registers each):
  lora      the module: only the adapter and PEFT's modules_to_save head require
            gradients. Each style's per-step losses equal the real Trainer's on
            the eager PEFT model holding the module's weights (within 1e-5, the
            issue's bound). The trainer style's checkpoints and output hold
            adapter_model.safetensors (PEFT's own keys, under 10 % of the base
            weights) and adapter_config.json, and no frozen base weight: no
            model.safetensors, and the checkpoint's tensor files are the size of
            the adapter plus AdamW's two moments of it, not of the base (the
            bytes counted from the module's parameters); optimizer.pt's groups hold the
            trainable parameters only, as the Trainer's; PeftModel.from_pretrained
            on the source model loads the output and gives the trained module's
            eval logits (within 1e-5), and merge_and_unload gives them too; the
            real Trainer resumes from the engine's checkpoint-2, as it is and as
            the adapter alone, with the engine's losses for steps 3 and 4, as
            accum-run --resume does, from it and from an older LoRA checkpoint
            (the whole PEFT model in model.safetensors, no adapter file), and
            refuses (exit 4, naming the key) an adapter that lacks a trainable
            parameter or holds a key the module has not. The
            memory records, the estimate and the plan count the frozen weights
            apart (their bytes from the module's parameters).
"""
import json
import math
import os
import shutil
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "peers"))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import peers  # noqa: E402
from run_models import (SKIP, Split, accum_run, compare, engine_losses, fail, hf_case_files, hf_to_accum,  # noqa: E402
                        main, require_hf, trainer_peers)

STEPS = 4             # 64 rows at 8 × 2: one epoch
LOGITS_TOLERANCE = 1e-5
ADAPTER_SHARE = 0.10  # the bound: the adapter file under 10 % of the base weights
LORA = ["--lora-r", "8", "--lora-alpha", "16"]
TRAIN = {"batch-size": 8, "accumulation-steps": 2, "lr": 1e-3, "max-grad-norm": 1.0, "epochs": 1,
         "max-steps": STEPS, "scheduler": "constant", "optimizer": "adamw", "seed": 0, "logging-steps": 1}


def module_extra(path, names):
    extra = {n: "" for n in names}
    module = torch.jit.load(path, _extra_files=extra)
    return module, extra


def eager_peft(module_file):
    """The PEFT model the module was traced from, eager: the config and the
    adapter's config from its hf/ files, every weight from its parameters, dropout
    off (as the module was traced), and accepts_loss_kwargs False on the base
    model (the Trainer then divides each micro-batch's mean by K, as accum-run's
    --loss-normalization mean: docs/own-model.md's pitfall)."""
    import peft
    import transformers
    module, extra = module_extra(module_file, ["hf/config.json", "hf/adapter_config.json", "hf/model.json"])
    with tempfile.TemporaryDirectory() as directory:
        for name in ("config.json", "adapter_config.json"):
            with open(os.path.join(directory, name), "wb") as f:
                f.write(extra["hf/" + name])
        config = transformers.AutoConfig.from_pretrained(directory)
        lora = peft.LoraConfig.from_pretrained(directory)
    lora.inference_mode = False  # save_pretrained writes True: the adapter would be frozen
    auto = getattr(transformers, json.loads(extra["hf/model.json"])["auto_class"])
    base = auto.from_config(config, attn_implementation="eager")
    model = peft.get_peft_model(base, lora)
    state = {n[len("model."):]: t.detach().clone() for n, t in module.named_parameters()}
    state.update({n[len("model."):]: t.detach().clone() for n, t in module.named_buffers()
                  if n[len("model."):] in model.state_dict()})  # its persistent buffers
    result = model.load_state_dict(state, strict=False)
    missing = [k for k in result.missing_keys if k in dict(model.named_parameters())]
    if missing or result.unexpected_keys:
        fail("the eager PEFT model and the module differ: missing %s, unexpected %s" %
             (missing[:3], result.unexpected_keys[:3]))
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    base.accepts_loss_kwargs = False
    return model


def trainer(peer_loops, module_file, splits, out_dir, resume=None, **cfg):
    original = peers.make_model
    peers.make_model = lambda kind_, init, vocab=0: eager_peft(module_file)
    try:
        return peer_loops.trainer_run(dict(TRAIN, model="minilm-lora", **cfg), splits, None, out_dir, resume=resume)
    finally:
        peers.make_model = original


def check_module(module_file):
    """Only the adapter and the head train; hf/adapter.json maps PEFT's keys onto them."""
    module, extra = module_extra(module_file, ["hf/adapter.json"])
    trainable = [n for n, p in module.named_parameters() if p.requires_grad]
    frozen = [n for n, p in module.named_parameters() if not p.requires_grad]
    odd = [n for n in trainable if ".lora_" not in n and ".modules_to_save." not in n]
    if not trainable or odd or not frozen:
        fail("trainable parameters: %d (not adapter or head: %s), frozen %d" % (len(trainable), odd[:3], len(frozen)))
    adapter = json.loads(extra["hf/adapter.json"])
    if sorted(adapter["trainable"]) != sorted(trainable) or sorted(adapter["weights"].values()) != sorted(trainable):
        fail("hf/adapter.json's weights and trainable list differ from the module's trainable parameters")
    count = sum(p.numel() for p in module.parameters() if p.requires_grad)
    frozen_bytes = sum(p.numel() * p.element_size() for p in module.parameters() if not p.requires_grad)
    print("module: %d trainable parameters in %d tensors, %d frozen tensors (%.1f MiB)" %
          (count, len(trainable), len(frozen), frozen_bytes / 2**20), flush=True)
    return module, adapter, frozen_bytes


def check_adapter_files(directory, adapter, source_dir):
    """PEFT's files, its keys, under 10 % of the base weights."""
    from safetensors import safe_open
    path = os.path.join(directory, "adapter_model.safetensors")
    for name in ("adapter_model.safetensors", "adapter_config.json"):
        if not os.path.isfile(os.path.join(directory, name)):
            fail("%s has no %s (it holds %s)" % (directory, name, sorted(os.listdir(directory))))
    with safe_open(path, "pt") as f:
        keys = set(f.keys())
    if keys != set(adapter["weights"]) or any(".default." in k for k in keys):
        fail("%s: keys %s are not PEFT's %s" % (path, sorted(keys)[:2], sorted(adapter["weights"])[:2]))
    base = os.path.getsize(os.path.join(source_dir, "model.safetensors"))
    share = os.path.getsize(path) / base
    print("%s: %d keys, %d bytes = %.2f %% of the base weights' %d (bound %.0f %%)" %
          (os.path.relpath(path, os.path.dirname(os.path.dirname(directory))), len(keys), os.path.getsize(path),
           100 * share, base, 100 * ADAPTER_SHARE), flush=True)
    if share >= ADAPTER_SHARE:
        fail("the adapter file is %.1f %% of the base weights" % (100 * share))


def check_no_base(checkpoint, module, frozen_bytes):
    """A LoRA checkpoint holds no frozen weight: the Trainer's PEFT checkpoint files,
    and tensor files the size of the trainable parameters (the adapter once, AdamW's
    exp_avg and exp_avg_sq of it), counted from the module's parameters."""
    files = {f: os.path.getsize(os.path.join(checkpoint, f)) for f in os.listdir(checkpoint)}
    whole = [f for f in ("model.safetensors", "model.pt", "model.torchscript.pt", "pytorch_model.bin") if f in files]
    if whole or "config.json" in files:
        fail("%s holds %s, as a PEFT checkpoint does not" % (checkpoint, whole + ["config.json"] * ("config.json" in files)))
    trainable_bytes = sum(p.numel() * p.element_size() for p in module.parameters() if p.requires_grad)
    tensors = files["adapter_model.safetensors"] + files["optimizer.pt"]
    bound = 1.1 * 3 * trainable_bytes  # headers and pickled step counters: the 10 % over
    total = sum(files.values())
    print("%s: %d bytes in all (%s); adapter + optimizer.pt %d bytes against 3 × the trainable %d (bound %d); the "
          "frozen base %d bytes is %.0f × the whole checkpoint" %
          (os.path.basename(checkpoint), total, ", ".join(sorted(files)), tensors, trainable_bytes, int(bound),
           frozen_bytes, frozen_bytes / total), flush=True)
    if tensors > bound or total >= ADAPTER_SHARE * frozen_bytes:
        fail("%s: its tensor files take %d bytes (bound %d), the whole %d (bound %d): frozen weights are in it" %
             (checkpoint, tensors, bound, total, ADAPTER_SHARE * frozen_bytes))


def older_checkpoint(checkpoint, module_file, work):
    """checkpoint-2 as an earlier engine wrote it: the whole PEFT model in
    model.safetensors (the module's state_dict keys minus its prefix, the adapter's
    trained values put in), config.json, no adapter file."""
    from safetensors.torch import load_file, save_file
    module, extra = module_extra(module_file, ["hf/adapter.json", "hf/model.json", "hf/config.json"])
    meta = json.loads(extra["hf/model.json"])
    prefix = meta["parameter_prefix"]
    named = {n: t.detach().clone() for n, t in list(module.named_parameters()) + list(module.named_buffers())}
    for key, t in load_file(os.path.join(checkpoint, "adapter_model.safetensors")).items():
        named[json.loads(extra["hf/adapter.json"])["weights"][key]] = t
    older = os.path.join(work, "older-lora", "checkpoint-2")
    shutil.copytree(checkpoint, older)
    for name in ("adapter_model.safetensors", "adapter_config.json"):
        os.remove(os.path.join(older, name))
    save_file({k: named[prefix + k].contiguous() for k in meta["state_dict_keys"]},
              os.path.join(older, "model.safetensors"))
    with open(os.path.join(older, "config.json"), "wb") as f:
        f.write(extra["hf/config.json"])
    return older


def check_adapter_refusals(checkpoint, engine, work):
    """--resume from an adapter that lacks a trainable parameter, or holds one the
    module does not have: exit 4, naming the key and the file."""
    from safetensors.torch import load_file, save_file
    tensors = load_file(os.path.join(checkpoint, "adapter_model.safetensors"))
    first = sorted(tensors)[0]
    for what, changed, words in (("without %s" % first, {k: v for k, v in tensors.items() if k != first},
                                  "no weights for the trainable parameter"),
                                 ("with an unknown key", dict(tensors, **{"base_model.model.no_such.weight":
                                                                          tensors[first].clone()}), "no_such.weight")):
        broken = os.path.join(work, "broken-adapter", "checkpoint-2")
        shutil.rmtree(os.path.dirname(broken), ignore_errors=True)
        shutil.copytree(checkpoint, broken)
        save_file(changed, os.path.join(broken, "adapter_model.safetensors"))
        argv = []
        for key, value in dict(engine, mode="trainer", resume=broken, **{"output-dir": broken + "-out"}).items():
            argv += ["--" + key] if value is True else ["--" + key, str(value)]
        rc, out, err = accum_run(argv + ["--device", "cpu", "--threads", "1"], timeout=600)
        if rc != 4 or words not in err or "adapter_model.safetensors" not in err:
            fail("--resume from an adapter %s: exit %d (expected 4, naming %r and the file):\n%s" %
                 (what, rc, words, (out + err)[-2000:]))
    print("--resume refused, exit 4: an adapter without a trainable parameter, an adapter with an unknown key",
          flush=True)


def check_optimizer_file(checkpoint, module):
    """optimizer.pt's groups hold the trainable parameters only (Trainer.create_optimizer's)."""
    state = torch.load(os.path.join(checkpoint, "optimizer.pt"), weights_only=False)
    trainable = [p for p in module.parameters() if p.requires_grad]
    indices = [i for g in state["param_groups"] for i in g["params"]]
    shapes = sorted(tuple(s["exp_avg"].shape) for s in state["state"].values())
    if len(indices) != len(trainable) or shapes != sorted(tuple(p.shape) for p in trainable):
        fail("optimizer.pt holds %d parameters (state shapes %s...), the module %d trainable" %
             (len(indices), shapes[:2], len(trainable)))
    print("optimizer.pt: %d groups over the %d trainable tensors" % (len(state["param_groups"]), len(indices)))


def eval_logits(call, split, batch=16):
    out = []
    with torch.no_grad():
        for i in range(0, len(split["input_ids"]), batch):
            out.append(call({k: v[i:i + batch] for k, v in split.items()}))
    return torch.cat(out)


def check_round_trip(run, data, source_dir, module_file):
    """PeftModel.from_pretrained(source model, output) and merge_and_unload give the
    trained module's eval logits; its eval loss is the engine's recorded one."""
    import peft
    import transformers
    validation = {k: v for k, v in data["validation"].items()}
    trained = torch.jit.load(os.path.join(run.out_dir, "model.torchscript.pt"))
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids", "labels") if n in validation]
    engine = eval_logits(lambda b: trained.forward_eval(*[b[n] for n in names])[1], validation)
    _, extra = module_extra(module_file, ["hf/config.json"])
    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(directory, "config.json"), "wb") as f:
            f.write(extra["hf/config.json"])
        config = transformers.AutoConfig.from_pretrained(directory)
    source = transformers.AutoModelForSequenceClassification.from_pretrained(source_dir, config=config,
                                                                             attn_implementation="eager")
    loaded = peft.PeftModel.from_pretrained(source, run.out_dir).eval()
    call = lambda m: (lambda b: m(**{k: v for k, v in b.items() if k != "labels"}).logits)
    for what, logits in (("PeftModel.from_pretrained", eval_logits(call(loaded), validation)),
                         ("merge_and_unload", eval_logits(call(loaded.merge_and_unload().eval()), validation))):
        if not torch.isfinite(logits).all() or not torch.isfinite(engine).all():
            fail("%s: non-finite logits" % what)
        diff = (logits - engine).abs().max().item()
        print("%-58s eval logits differ by %.2e at most (bound %.0e)" % (what + " against the trained module", diff,
                                                                        LOGITS_TOLERANCE), flush=True)
        if diff > LOGITS_TOLERANCE:
            fail("%s: eval logits differ from the trained module's by %.3e" % (what, diff))
    loss = torch.nn.functional.cross_entropy(engine, validation["labels"]).item()
    recorded = run.evals[-1]["eval_loss"] if run.evals else float("nan")
    if not math.isfinite(recorded) or abs(loss - recorded) > 1e-5:
        fail("the engine's recorded eval_loss %r against %.8f from the trained module's logits" % (recorded, loss))


def check_memory(run, frozen_bytes, module_file, data_file):
    """The records, the estimate and the plan count the frozen weights apart."""
    memory = [r for r in run.records if r["type"] == "memory"]
    if not memory or any(r.get("frozen_parameters_bytes") != frozen_bytes for r in memory):
        fail("memory records' frozen_parameters_bytes %s, the module's frozen weights %d bytes" %
             (sorted({r.get("frozen_parameters_bytes") for r in memory}), frozen_bytes))
    last = memory[-1]
    trainable_bytes = last["parameters_bytes"] - frozen_bytes
    if last["optimizer_state_bytes"] != 2 * trainable_bytes or last["gradients_bytes"] > trainable_bytes:
        fail("AdamW's state %d bytes, gradients %d: not 2 × and at most the trainable %d" %
             (last["optimizer_state_bytes"], last["gradients_bytes"], trainable_bytes))
    files = ["--model", module_file, "--dataset", "tensors", "--data", data_file, "--optimizer", "adamw",
             "--threads", "1"]
    options = files + ["--batch-size", "8", "--accumulation-steps", "2"]
    rc, out, err = accum_run(["estimate", "--json"] + options)
    if rc != 0:
        fail("accum-run estimate exited %d: %s" % (rc, err[-2000:]))
    estimate = json.loads(out)
    if estimate["frozen_parameters_bytes"] != frozen_bytes or estimate["gradients_bytes"] != trainable_bytes:
        fail("the estimate's frozen %d and gradients %d bytes, the module's %d and %d" %
             (estimate["frozen_parameters_bytes"], estimate["gradients_bytes"], frozen_bytes, trainable_bytes))
    rc, out, err = accum_run(["estimate"] + options)
    if rc != 0 or "frozen weights" not in out:
        fail("accum-run estimate's text names no frozen weights:\n%s" % (out + err)[-2000:])
    rc, out, err = accum_run(["plan", "--memory-budget", "4GiB", "--target-batch", "16"] + files, timeout=600)
    if rc != 0:
        fail("accum-run plan exited %d: %s" % (rc, err[-2000:]))
    plan = json.loads(out)
    if plan["frozen_parameters_bytes"] != frozen_bytes or "frozen weights" not in plan["message"]:
        fail("the plan's frozen %r bytes (the module's %d), its message: %s" %
             (plan.get("frozen_parameters_bytes"), frozen_bytes, plan["message"]))
    print("plan: %s" % plan["message"], flush=True)
    print("memory: frozen %.1f MiB in every record, the estimate and the plan; trainable %.1f KiB, AdamW state %.1f KiB" %
          (frozen_bytes / 2**20, trainable_bytes / 2**10, last["optimizer_state_bytes"] / 2**10), flush=True)


def check_refusals(work, source_dir):
    """Each LoRA option the script cannot honour: exit 2, naming it."""
    train = os.path.join(work, "minilm_lora_train.csv")
    common = ["--model", source_dir, "--task", "sequence-classification", "--train", train, "--output-model",
              os.path.join(work, "x.pt"), "--output-data", os.path.join(work, "x_data.pt")]
    for extra, words in ((["--lora-r", "4", "--lora-base-dtype", "bf16"], "--lora-base-dtype bf16"),
                         (["--lora-r", "0"], "--lora-r 0"),
                         (["--lora-alpha", "4"], "need --lora-r"),
                         (["--lora-r", "4", "--lora-target-modules", "no_such_layer"], "no_such_layer")):
        code, text = hf_to_accum(common + extra, expect_ok=False)
        if code != 2 or words not in text:
            fail("hf_to_accum.py %s: exit %d (expected 2, naming %r):\n%s" % (" ".join(extra), code, words, text[-2000:]))
    print("refused, exit 2: --lora-base-dtype bf16, --lora-r 0, --lora-alpha without --lora-r, an unknown target "
          "module", flush=True)


def case_lora(work):
    peer_loops = trainer_peers(work)
    source_dir = require_hf(work)
    try:
        import peft  # noqa: F401
    except ImportError:
        print("SKIP: LoRA needs peft in the torch 2.11 environment (scripts/setup-libtorch2.sh installs it)")
        sys.exit(SKIP)
    module_file, data_file = hf_case_files(work, "minilm_lora", "sequence-classification",
                                           ["--model", source_dir] + LORA, ["text", "label"], "csv", "off")
    module, adapter, frozen_bytes = check_module(module_file)
    check_refusals(work, source_dir)
    data = torch.load(data_file)
    splits = {"train": Split(data["train"]), "eval": Split(data["validation"])}

    real = trainer(peer_loops, module_file, splits, os.path.join(work, "trainer"), **{"save-strategy": "no"})
    reference = [s["loss"] for s in real["steps"]]
    engine = {"model": module_file, "dataset": "tensors", "data": data_file, "batch-size": 8, "accumulation-steps": 2,
              "max-steps": STEPS, "lr": 1e-3, "optimizer": "adamw", "max-grad-norm": 1.0, "scheduler": "constant",
              "eval-strategy": "no", "save-strategy": "no", "logging-steps": 1, "quiet": True}
    runs = {}
    for mode in ("pytorch", "accelerator", "trainer"):
        options = dict(engine, mode=mode)
        if mode == "trainer":
            options.update({"eval-strategy": "epoch", "save-strategy": "steps", "save-steps": 2})
        runs[mode] = peers.run_engine(os.path.join(work, "engine-" + mode), options, timeout=600)
        compare("LoRA MiniLM, accum-run --mode %s against the real Trainer" % mode,
                engine_losses(runs[mode], "LoRA " + mode, STEPS), reference)

    run = runs["trainer"]
    checkpoint = os.path.join(run.out_dir, "checkpoint-2")
    for directory in (checkpoint, run.out_dir):
        check_adapter_files(directory, adapter, source_dir)
    check_no_base(checkpoint, module, frozen_bytes)
    check_optimizer_file(checkpoint, module)
    check_round_trip(run, data, source_dir, module_file)

    # The engine's own --resume: the frozen weights from the module, the adapter
    # from the checkpoint, and the frozen weights stay out of the optimizer it
    # restores; an older checkpoint (the whole model) resumes too.
    for what, resume in (("its checkpoint-2", checkpoint),
                         ("an older LoRA checkpoint-2 (model.safetensors)", older_checkpoint(checkpoint, module_file, work))):
        again = peers.run_engine(os.path.join(work, "engine-resumed"), dict(engine, mode="trainer", resume=resume),
                                 timeout=600)
        compare("accum-run --resume from %s" % what, [s["loss"] for s in again.steps],
                [s["loss"] for s in run.steps[2:]])

    check_adapter_refusals(checkpoint, engine, work)

    # The real Trainer resumes the engine's checkpoint-2: as written, and as the
    # adapter alone (a PEFT checkpoint: the Trainer's load_adapter path).
    adapter_only = os.path.join(work, "adapter-only", "checkpoint-2")
    shutil.copytree(checkpoint, adapter_only)
    for name in ("model.safetensors", "model.pt", "model.torchscript.pt", "pytorch_model.bin"):
        if os.path.exists(os.path.join(adapter_only, name)):
            os.remove(os.path.join(adapter_only, name))
    for what, resume in (("as written", checkpoint), ("adapter only", adapter_only)):
        resumed = trainer(peer_loops, module_file, splits, os.path.join(work, "trainer-resumed"), resume=resume,
                          **{"save-strategy": "no"})
        if [s["step"] for s in resumed["steps"]] != list(range(3, STEPS + 1)):
            fail("the Trainer resumed from checkpoint-2 (%s) ran steps %s" % (what, [s["step"] for s in resumed["steps"]]))
        compare("the Trainer resumed from the engine's checkpoint-2 (%s)" % what,
                [s["loss"] for s in run.steps[2:]], [s["loss"] for s in resumed["steps"]])

    check_memory(run, frozen_bytes, module_file, data_file)


if __name__ == "__main__":
    main({"lora": case_lora})
