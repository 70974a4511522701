# SPDX-License-Identifier: GPL-3.0-or-later
"""Your model in, your model out: a Transformers model traced with the Hugging
Face metadata (the TorchScript extra files hf/config.json and hf/model.json),
trained by accum-run, comes back out of its checkpoints for Transformers.

  round trip   AutoModelForSequenceClassification.from_pretrained(checkpoint) in
               eval mode gives, on the evaluation set, the logits of the trained
               TorchScript module at that checkpoint (the --model file with the
               checkpoint's model.safetensors loaded; in the output directory its
               model.torchscript.pt, which the run keeps once, not in each checkpoint),
               and the eval_loss accum-run recorded at that step; a tied GPT-2 loads
               with the engine's trained weights.
  continued    the real Trainer's train(resume_from_checkpoint=checkpoint-k) gives
               the per-step losses, learning rates and gradient norms of accum-run's
               own uninterrupted run from k on (AdamW, linear schedule, dropout off),
               as accum-run --resume does; TrainerState.load_from_json reads the
               checkpoint's trainer_state.json, and optimizer.pt and scheduler.pt have
               the structure of the Trainer's own AdamW and LambdaLR state_dicts.

The fixtures follow the convention (docs/own-model.md): a model built from a
config (nothing downloaded), traced with torch.jit.trace in eval mode, saved with
_extra_files {"hf/config.json": its config, "hf/model.json": {"auto_class",
"parameter_prefix": ""}}."""
import json
import math
import os

import torch
import torch.nn.functional as F

import peers
import peer_loops

LOSS_TOL = 1e-5
LR_TOL = 1e-9
LOGITS_TOL = 1e-5
NORM_TOL = 1e-5  # relative

SEQ = 12
VOCAB = 97


def toy_tokens(n, seed, lm=False):
    """Token rows of 5 to SEQ tokens (0 is padding); 3 classes from the tokens, or the LM's own text."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, VOCAB, (n, SEQ), generator=g)
    lengths = torch.randint(5, SEQ + 1, (n,), generator=g)
    mask = (torch.arange(SEQ)[None, :] < lengths[:, None]).long()
    ids = ids * mask
    if lm:
        labels = ids.masked_fill(mask == 0, -100)
    else:
        labels = (ids[:, 1] + ids[:, 2]) % 3
    return ids, mask, labels


def save_with_metadata(traced, path, model, auto_class, prefix=""):
    """torch.jit.save with the convention's extra files: the config as save_pretrained writes it."""
    config = model.config
    config.architectures = [type(model).__name__]
    config.return_dict = True  # what from_pretrained should give back (the trace ran with tuples)
    text = config.to_json_string()
    torch.jit.save(traced, path, _extra_files={
        "hf/config.json": text,
        "hf/model.json": json.dumps({"auto_class": auto_class, "parameter_prefix": prefix})})


def make_bert(work, seed=0, n_train=96, n_eval=40):
    """A tiny BertForSequenceClassification (3 labels), traced, and its tensors file."""
    import transformers
    torch.manual_seed(seed)
    config = transformers.BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=37, max_position_embeddings=SEQ, num_labels=3,
                                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                     attn_implementation="eager")
    model = transformers.BertForSequenceClassification(config).eval()
    data = {}
    for prefix, n, s in (("", n_train, seed + 1), ("eval_", n_eval, seed + 2)):
        ids, mask, labels = toy_tokens(n, s)
        data.update({prefix + "input_ids": ids, prefix + "attention_mask": mask, prefix + "labels": labels})
    model.config.return_dict = False
    example = {"input_ids": data["input_ids"][:2], "attention_mask": data["attention_mask"][:2],
               "labels": data["labels"][:2]}
    traced = torch.jit.trace(model, example_kwarg_inputs=example)
    paths = os.path.join(work, "bert.pt"), os.path.join(work, "bert_data.pt")
    save_with_metadata(traced, paths[0], model, "AutoModelForSequenceClassification")
    torch.save(data, paths[1])
    return paths + (data,)


def make_gpt2(work, seed=0, n=32):
    """A tiny GPT2LMHeadModel (lm_head tied to wte), traced, and its tensors file."""
    import transformers
    torch.manual_seed(seed)
    config = transformers.GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=32, n_layer=2, n_head=2,
                                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False, bos_token_id=1,
                                     eos_token_id=2, pad_token_id=0,
                                     attn_implementation="eager")
    model = transformers.GPT2LMHeadModel(config).eval()
    if model.lm_head.weight.data_ptr() != model.transformer.wte.weight.data_ptr():
        raise AssertionError("the fixture's GPT-2 does not tie lm_head to wte")
    ids, mask, labels = toy_tokens(n, seed + 3, lm=True)
    data = {"input_ids": ids, "attention_mask": mask, "labels": labels}
    # GPT-2 returns a dict (loss, logits) here; a trace of a dict is not strict.
    traced = torch.jit.trace(model, example_kwarg_inputs={k: v[:2] for k, v in data.items()}, strict=False)
    paths = os.path.join(work, "gpt2.pt"), os.path.join(work, "gpt2_data.pt")
    save_with_metadata(traced, paths[0], model, "AutoModelForCausalLM")
    torch.save(data, paths[1])
    return paths + (model.transformer.wte.weight.detach().clone(),)


class Split(torch.utils.data.Dataset):
    """A split of the tensors file as the Trainer reads it (prefix "" or "eval_")."""

    def __init__(self, data, prefix):
        self.columns = {k: data[prefix + k] for k in ("input_ids", "attention_mask")}
        self.labels = data[prefix + "labels"]

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return dict({k: v[i] for k, v in self.columns.items()}, labels=self.labels[i])


def finite(report, what, values):
    bad = [v for v in values if not math.isfinite(v)]
    if bad or not values:
        report.fail("%s: %d values, %d not finite" % (what, len(values), len(bad)))
        return False
    return True


def max_abs(a, b):
    return float((a - b).abs().max())


@torch.no_grad()
def eval_logits(call, data, batch):
    out = []
    for b in range(0, len(data["eval_labels"]), batch):
        out.append(call(data["eval_input_ids"][b:b + batch], data["eval_attention_mask"][b:b + batch],
                        data["eval_labels"][b:b + batch]))
    return torch.cat(out)


def trained_module(checkpoint, model_file):
    """The trained module at `checkpoint`: the output directory's model.torchscript.pt, or the
    --model file with the checkpoint's model.safetensors loaded (the fixtures' prefix is "")."""
    saved = os.path.join(checkpoint, "model.torchscript.pt")
    if os.path.exists(saved):
        return torch.jit.load(saved)
    from safetensors.torch import load_file
    module = torch.jit.load(model_file)
    own = dict(module.named_parameters())
    own.update(dict(module.named_buffers()))
    with torch.no_grad():
        for name, t in load_file(os.path.join(checkpoint, "model.safetensors")).items():
            own[name].copy_(t)
    return module


def check_round_trip(report, run, checkpoint, data, batch, eval_record, model_file):
    from transformers import AutoModelForSequenceClassification
    for f in ("model.safetensors", "config.json"):
        if not os.path.exists(os.path.join(checkpoint, f)):
            report.fail("%s has no %s" % (checkpoint, f))
            return
    model, info = AutoModelForSequenceClassification.from_pretrained(checkpoint, output_loading_info=True)
    report.equal("from_pretrained(%s): missing and mismatched keys" % os.path.basename(checkpoint),
                 [sorted(info["missing_keys"]), sorted(info["mismatched_keys"])], [[], []])
    model.eval()
    hf = eval_logits(lambda i, m, y: model(input_ids=i, attention_mask=m).logits, data, batch)
    if os.path.basename(checkpoint).startswith("checkpoint-"):
        report.equal("%s: TorchScript modules in it (the run keeps one, in its output directory)" %
                     os.path.basename(checkpoint), os.path.exists(os.path.join(checkpoint, "model.torchscript.pt")), False)
    module = trained_module(checkpoint, model_file)
    module.eval()
    ts = eval_logits(lambda i, m, y: module(input_ids=i, attention_mask=m, labels=y)[1], data, batch)
    if not (finite(report, "from_pretrained logits", hf.flatten().tolist()) and
            finite(report, "TorchScript logits", ts.flatten().tolist())):
        return
    report.close("%s: from_pretrained's eval logits vs the trained module's" % os.path.basename(checkpoint),
                 [max_abs(hf, ts)], [0.0], LOGITS_TOL, 1)
    if eval_record is not None:
        # The engine's eval_loss: the mean cross-entropy over every evaluation sample.
        loss = F.cross_entropy(hf, data["eval_labels"]).item()
        report.close("%s: eval_loss of from_pretrained's logits vs accum-run's" % os.path.basename(checkpoint),
                     [loss], [eval_record["eval_loss"]], LOSS_TOL, 1)


def check_files_structure(report, checkpoint, trainer_args, model):
    """TrainerState.load_from_json accepts trainer_state.json; optimizer.pt and
    scheduler.pt have the structure the Trainer's own optimizer and scheduler give."""
    from transformers import Trainer, TrainerState
    state = TrainerState.load_from_json(os.path.join(checkpoint, "trainer_state.json"))
    report.equal("TrainerState.load_from_json: global_step", state.global_step,
                 int(os.path.basename(checkpoint).split("-")[1]))
    reference = Trainer(model=model, args=trainer_args)
    reference.create_optimizer()
    reference.create_scheduler(num_training_steps=state.max_steps, optimizer=reference.optimizer)
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    reference.optimizer.step()
    reference.lr_scheduler.step()
    want_opt, want_sched = reference.optimizer.state_dict(), reference.lr_scheduler.state_dict()
    model.zero_grad(set_to_none=True)
    got_opt = torch.load(os.path.join(checkpoint, "optimizer.pt"), weights_only=True)
    got_sched = torch.load(os.path.join(checkpoint, "scheduler.pt"), weights_only=True)
    report.equal("optimizer.pt keys", sorted(got_opt), sorted(want_opt))
    report.equal("optimizer.pt: parameters per group (the Trainer's decay / no-decay)",
                 [len(g["params"]) for g in got_opt["param_groups"]], [len(g["params"]) for g in want_opt["param_groups"]])
    # fused: the Trainer's default optimizer (adamw_torch_fused) says True, torch.optim.AdamW's default None.
    kinds = lambda g: [(k, type(v).__name__) for k, v in g.items() if k not in ("fused", "foreach")]
    report.equal("optimizer.pt: param_groups' keys and value types",
                 [kinds(g) for g in got_opt["param_groups"]], [kinds(g) for g in want_opt["param_groups"]])
    report.equal("optimizer.pt: weight_decay per group", [g["weight_decay"] for g in got_opt["param_groups"]],
                 [g["weight_decay"] for g in want_opt["param_groups"]])
    shape = lambda s: {i: {k: (tuple(v.shape), str(v.dtype)) for k, v in d.items()} for i, d in s.items()}
    got_state, want_state = shape(got_opt["state"]), shape(want_opt["state"])
    report.equal("optimizer.pt: parameters with a state", sorted(got_state), sorted(want_state))
    report.equal("optimizer.pt: parameters whose state differs in keys, shapes or dtypes",
                 [i for i in want_state if got_state.get(i) != want_state[i]], [])
    report.equal("scheduler.pt: keys and value types", [(k, type(v).__name__) for k, v in got_sched.items()],
                 [(k, type(v).__name__) for k, v in want_sched.items()])
    report.equal("scheduler.pt: last_epoch, _step_count", [got_sched["last_epoch"], got_sched["_step_count"]],
                 [state.global_step, state.global_step + 1])


def check_tied_gpt2(report, work):
    """A tied GPT-2: from_pretrained's weights, lm_head included, are the engine's trained ones."""
    from transformers import AutoModelForCausalLM
    model_file, data_file, initial_wte = make_gpt2(work)
    run = peers.run_engine(os.path.join(work, "engine-gpt2"), {
        "model": model_file, "dataset": "tensors", "data": data_file, "mode": "trainer", "batch-size": 8,
        "accumulation-steps": 1, "max-steps": 2, "optimizer": "adamw", "lr": 1e-2, "scheduler": "constant",
        "eval-strategy": "no", "save-strategy": "steps", "save-steps": 2, "logging-steps": 1, "seed": 7})
    if not finite(report, "GPT-2 engine losses", [s["loss"] for s in run.steps]):
        return
    checkpoint = os.path.join(run.out_dir, "checkpoint-2")
    model, info = AutoModelForCausalLM.from_pretrained(checkpoint, output_loading_info=True)
    report.equal("GPT-2 from_pretrained: missing keys", sorted(info["missing_keys"]), [])
    trained = torch.jit.load(os.path.join(run.out_dir, "model.torchscript.pt")).state_dict()  # the run ends at step 2
    loaded = model.state_dict()
    names = sorted(k for k in loaded if k in trained)
    report.equal("GPT-2: loaded tensors not among the engine's", sorted(k for k in loaded if k not in trained), [])
    report.count("GPT-2: tensors compared", names, len(loaded))
    report.close("GPT-2: from_pretrained's weights vs the engine's trained ones (largest |Δ|)",
                 [max(max_abs(loaded[k], trained[k]) for k in names)], [0.0], 0.0, 1)
    report.equal("GPT-2: lm_head tied to wte after from_pretrained",
                 model.lm_head.weight.data_ptr() == model.transformer.wte.weight.data_ptr(), True)
    moved = max_abs(model.transformer.wte.weight.detach(), initial_wte)
    report.note("GPT-2: wte moved by %.3g in training" % moved)
    if not moved > 0:
        report.fail("GPT-2: training did not change wte, so the check shows nothing")


def check_bad_metadata(report, work, model_file, data_file):
    """Metadata that are not the convention's: exit 2 naming the file and the extra file missing."""
    import subprocess
    half = os.path.join(work, "bert_half_metadata.pt")
    torch.jit.save(torch.jit.load(model_file), half, _extra_files={"hf/config.json": "{}"})
    out = os.path.join(work, "engine-half-metadata")
    p = subprocess.run([peers.engine_program(), "--model", half, "--dataset", "tensors", "--data", data_file,
                        "--mode", "trainer", "--batch-size", "8", "--max-steps", "1", "--save-strategy", "steps",
                        "--save-steps", "1", "--device", "cpu", "--threads", "1", "--output-dir", out],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    report.equal("hf/config.json without hf/model.json: exit code", p.returncode, 2)
    report.equal("... the message names the file and hf/model.json",
                 half in p.stdout and "without hf/model.json" in p.stdout, True)


def hf_case(report, cfg, work):
    at = cfg.pop("resume-at")
    model_file, data_file, data = make_bert(work, n_train=cfg["n-train"], n_eval=cfg["n-eval"])
    options = {k: v for k, v in cfg.items() if k not in ("n-train", "n-eval", "momentum")}
    options.update({"model": model_file, "dataset": "tensors", "data": data_file, "mode": "trainer"})
    full = peers.run_engine(os.path.join(work, "engine"), options)
    L = math.ceil(cfg["n-train"] / cfg["batch-size"])
    n = math.ceil(L / cfg["accumulation-steps"]) * cfg["epochs"]
    report.count("engine steps", full.steps, n)
    if not finite(report, "engine losses", [s["loss"] for s in full.steps]):
        return

    # Round trip: the last checkpoint, the output directory, and checkpoint-k inside the first epoch.
    last = os.path.join(full.out_dir, "checkpoint-%d" % n)
    at_last = [e for e in full.evals if e.get("step", n) == n] or full.evals[-1:]
    check_round_trip(report, full, last, data, cfg["batch-size"], at_last[-1] if at_last else None, model_file)
    check_round_trip(report, full, full.out_dir, data, cfg["batch-size"], None, model_file)
    resume = os.path.join(full.out_dir, "checkpoint-%d" % at)
    check_round_trip(report, full, resume, data, cfg["batch-size"], None, model_file)

    # The engine's own --resume of the new checkpoint.
    again = peers.run_engine(os.path.join(work, "engine-resumed"), dict(options, resume=resume))
    report.close("accum-run --resume checkpoint-%d: loss per step" % at, [s["loss"] for s in again.steps],
                 [s["loss"] for s in full.steps[at:]], LOSS_TOL, n - at)

    # A checkpoint of the previous engine's format (model.pt, accum_optimizer.pt)
    # resumes: test_cli's previousCheckpointFormatResumes, from a checkpoint that engine wrote.

    # The real Trainer continues the engine's checkpoint.
    from transformers import AutoConfig, AutoModelForSequenceClassification, TrainingArguments
    trainer_cfg = dict(cfg, model="bert")
    original = peers.make_model
    fresh = lambda: AutoModelForSequenceClassification.from_config(AutoConfig.from_pretrained(resume))
    peers.make_model = lambda kind, init, vocab=0: fresh()
    try:
        # accepts_loss_kwargs=False: the Trainer divides each micro-batch's mean by K,
        # as accum-run's --loss-normalization mean (docs/own-model.md, the upstream pitfall).
        tr = peer_loops.trainer_run(trainer_cfg, {"train": Split(data, ""), "eval": Split(data, "eval_")}, None,
                                    os.path.join(work, "hf-trainer-resumed"), accepts_loss_kwargs=False,
                                    resume=resume)
    finally:
        peers.make_model = original
    report.count("Trainer steps after checkpoint-%d" % at, tr["steps"], n - at)
    if finite(report, "Trainer losses", [s["loss"] for s in tr["steps"]]):
        tail = full.steps[at:]
        report.close("Trainer resumed from the engine's checkpoint-%d: loss per step" % at,
                     [s["loss"] for s in tail], [s["loss"] for s in tr["steps"]], LOSS_TOL, n - at)
        report.close("Trainer resumed: learning rate per step", [s["learning_rate"] for s in tail],
                     [s["learning_rate"] for s in tr["steps"]], LR_TOL, n - at)
        report.close("Trainer resumed: grad_norm per step", [s["grad_norm"] for s in tail],
                     [s["grad_norm"] for s in tr["steps"]], NORM_TOL, n - at, relative=True)
        report.equal("Trainer resumed: global steps", [s["step"] for s in tr["steps"]], list(range(at + 1, n + 1)))

    args = TrainingArguments(output_dir=os.path.join(work, "hf-reference"), per_device_train_batch_size=cfg["batch-size"],
                             gradient_accumulation_steps=cfg["accumulation-steps"], learning_rate=cfg["lr"],
                             weight_decay=cfg["weight-decay"], lr_scheduler_type="linear",
                             warmup_steps=cfg["warmup-steps"], report_to="none", use_cpu=True)
    check_files_structure(report, resume, args, fresh())
    check_tied_gpt2(report, work)
    check_bad_metadata(report, work, model_file, data_file)
