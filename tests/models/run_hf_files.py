# SPDX-License-Identifier: GPL-3.0-or-later
"""examples/hf_to_accum.py's own files (run_models.py has the helpers that make
them; tests/models/CMakeLists.txt registers each case as models.CASE).

    run_hf_files.py CASE ACCUM_RUN WORK_DIR

Cases:
  hf_files   examples/hf_to_accum.py: the safetensors keys, the hf/ extra files,
             each word's tag on its first sub-word (recomputed from the
             tokenizer's word_ids), and each refusal (exit 2, naming it).
  dropout    a module from hf_to_accum.py trains with its dropout (step 1
             differs from --dropout off, and equals Python's forward after
             torch.manual_seed(seed)) and evaluates with forward_eval (equal to
             the Transformers model rebuilt from the saved module's hf/ files, in
             eval(), within 1e-5; the same weights under two seeds equal).
"""
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run_models import (BERT_SETS, DISTILBERT_SETS, TOLERANCE, engine_losses, fail, hf_case_files,  # noqa: E402
                        hf_to_accum, items, main, peers, require_hf, sentence_rows, write_rows)


def extra_files(path):
    names = {"hf/config.json": "", "hf/model.json": "", "hf/tokenizer/tokenizer.json": ""}
    module = torch.jit.load(path, _extra_files=names)
    return module, names


def eval_loss_in_python(module_file, split, batch_size):
    """The validation loss as the engine averages it (each batch's mean × its items
    over all items), from forward_eval of the saved module and from the Transformers
    model rebuilt from its hf/config.json and weights, in eval() mode."""
    import tempfile
    import transformers
    module, extra = extra_files(module_file)
    meta = json.loads(extra["hf/model.json"])
    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(directory, "config.json"), "wb") as f:
            f.write(extra["hf/config.json"])
        config = transformers.AutoConfig.from_pretrained(directory)
    model = getattr(transformers, meta["auto_class"]).from_config(config, attn_implementation="eager")
    prefix = meta["parameter_prefix"]
    state = {k[len(prefix):]: v for k, v in module.named_parameters()}
    missing, _ = model.load_state_dict(state, strict=False)
    if missing:
        fail("%s: the Transformers model rebuilt from hf/config.json lacks weights for %s" % (module_file, missing))
    model.eval()
    names = [a.name for a in module.forward_eval.schema.arguments[1:]]
    sums = {"forward_eval": 0.0, "transformers": 0.0}
    count = 0
    with torch.no_grad():
        for start in range(0, len(split["labels"]), batch_size):
            batch = {n: split[n][start:start + batch_size] for n in names}
            items = len(batch["labels"]) if batch["labels"].dim() == 1 else int(batch["labels"].ne(-100).sum())
            sums["forward_eval"] += module.forward_eval(**batch)[0].item() * items
            sums["transformers"] += model(**batch).loss.item() * items
            count += items
    return {k: v / count for k, v in sums.items()}


def case_dropout(work):
    """The module's dropout as Python's model.train() / model.eval() have it."""
    tokenizer = require_hf(work)
    source = ["--config", "bert", "--tokenizer", tokenizer, "--seed", "5"] + sum((["--set", s] for s in BERT_SETS), [])
    columns = ["text", "label"]
    on, data = hf_case_files(work, "bert_on", "sequence-classification", source, columns, "csv", "on")
    off, _ = hf_case_files(work, "bert_off", "sequence-classification", source, columns, "csv", "off")
    common = {"dataset": "tensors", "data": data, "mode": "pytorch", "batch-size": 8, "accumulation-steps": 2,
              "optimizer": "sgd", "momentum": 0.9, "lr": 0.05, "scheduler": "constant", "logging-steps": 1,
              "save-strategy": "no", "quiet": True}

    # Dropout on trains differently from dropout off, from the same weights on the same batches.
    runs = {}
    for name, model in (("on", on), ("off", off)):
        runs[name] = peers.run_engine(os.path.join(work, "train-" + name), dict(
            common, model=model, quiet=False, **{"max-steps": 4, "eval-strategy": "steps", "eval-steps": 4}))
    losses = {name: engine_losses(run, "dropout " + name, 4) for name, run in runs.items()}
    for name, values in losses.items():
        if not all(math.isfinite(v) for v in values):
            fail("dropout %s: a non-finite loss %s" % (name, values))
    apart = abs(losses["on"][0] - losses["off"][0])
    print("step 1 from the same weights: dropout on %.6f, off %.6f (%.2e apart)" %
          (losses["on"][0], losses["off"][0], apart), flush=True)
    if apart < 1e-4:
        fail("dropout on and off give the same first loss: the module trained without its dropout")
    # The masks come from the engine's generator seeded by --seed (0): Python's forward
    # on the first window's micro-batches, after torch.manual_seed(0), draws the same.
    module = torch.jit.load(on)
    train = torch.load(data)["train"]
    order = torch.tensor(peers.epoch_order(len(train["labels"]), 0, 0, True))
    names = [a.name for a in module.forward.schema.arguments[1:]]
    torch.manual_seed(0)
    with torch.no_grad():
        first = sum(module.forward(**{n: train[n][order[i:i + 8]] for n in names})[0].item() for i in (0, 8)) / 2
    print("step 1 with dropout: engine %.7f, Python's forward after torch.manual_seed(0) %.7f (%.1e apart)" %
          (losses["on"][0], first, abs(losses["on"][0] - first)), flush=True)
    if abs(losses["on"][0] - first) > TOLERANCE:
        fail("the engine's first loss with dropout %.7f is not Python's %.7f under the same seed" %
             (losses["on"][0], first))
    if "forward_eval" not in runs["on"].stdout:
        fail("the run does not say that it evaluates with forward_eval:\n%s" % runs["on"].stdout[-2000:])

    # The evaluation after training equals the saved weights' eval() forward in Python.
    validation = torch.load(data)["validation"]
    for name, run in runs.items():
        if len(run.evals) != 1 or not math.isfinite(run.evals[0]["eval_loss"]):
            fail("dropout %s: eval records %s, expected one finite eval_loss" % (name, run.evals))
        engine = run.evals[0]["eval_loss"]
        python = eval_loss_in_python(os.path.join(run.out_dir, "model.torchscript.pt"), validation, 8)
        for what, value in python.items():
            print("dropout %s, eval after 4 updates: engine %.7f, Python %s %.7f (%.1e apart; bound 1e-5)" %
                  (name, engine, what, value, abs(engine - value)), flush=True)
            if not math.isfinite(value) or abs(engine - value) > TOLERANCE:
                fail("dropout %s: the engine's eval_loss %.7f, Python's %s %.7f" % (name, engine, what, value))

    # Two evaluations of the same weights (one update at learning rate 0: warmup of one
    # step) under different seeds, so different dropout masks in training: equal.
    evals = []
    for seed in (1, 2):
        run = peers.run_engine(os.path.join(work, "same-weights-%d" % seed), dict(
            common, model=on, seed=seed, **{"max-steps": 1, "warmup-steps": 1, "eval-strategy": "steps",
                                            "eval-steps": 1}))
        if run.steps[0]["learning_rate"] != 0.0 or len(run.evals) != 1:
            fail("seed %d: learning rate %r, %d evaluations" % (seed, run.steps[0]["learning_rate"], len(run.evals)))
        evals.append(run.evals[0]["eval_loss"])
    initial = eval_loss_in_python(on, validation, 8)["transformers"]
    print("the initial weights evaluated under seeds 1 and 2: %.8f, %.8f; Transformers eval() %.8f" %
          (evals[0], evals[1], initial), flush=True)
    if not all(math.isfinite(v) for v in evals) or evals[0] != evals[1]:
        fail("two evaluations of the same weights differ: %r" % evals)
    if abs(evals[0] - initial) > TOLERANCE:
        fail("the evaluation of the initial weights %.8f is not Transformers' eval() loss %.8f" % (evals[0], initial))


def case_hf_files(work):
    """What examples/hf_to_accum.py writes, and what it refuses."""
    tokenizer = require_hf(work)
    rows = sentence_rows(24, 12)
    train = write_rows(os.path.join(work, "ner_train.json"), [{"tokens": r["tokens"], "tags": r["tags"]} for r in rows])
    out_model, out_data = os.path.join(work, "ner.pt"), os.path.join(work, "ner.safetensors")
    source = ["--config", "distilbert", "--tokenizer", tokenizer] + sum((["--set", s] for s in DISTILBERT_SETS), [])
    hf_to_accum(source + ["--task", "token-classification", "--train", train, "--validation", train,
                          "--max-length", "40", "--output-model", out_model, "--output-data", out_data])
    from safetensors.torch import load_file
    flat = load_file(out_data)
    expected = sorted("%s.%s" % (s, n) for s in ("train", "validation") for n in ("attention_mask", "input_ids",
                                                                                   "labels"))
    if sorted(flat) != expected:
        fail("the safetensors keys are %s, expected %s" % (sorted(flat), expected))
    module, extra = extra_files(out_model)
    meta = json.loads(extra["hf/model.json"])
    config = json.loads(extra["hf/config.json"])
    # The model's state_dict() keys: every parameter's (prefix removed), and only the module's tensors.
    keys = set(meta.pop("state_dict_keys", []))
    own = {n[len("model."):] for n, _ in list(module.named_parameters()) + list(module.named_buffers())}
    if not ({n[len("model."):] for n, _ in module.named_parameters()} <= keys <= own):
        fail("hf/model.json's state_dict_keys %s are not the model's parameters and buffers %s" % (sorted(keys), sorted(own)))
    if meta != {"auto_class": "AutoModelForTokenClassification", "task": "token-classification",
                "parameter_prefix": "model."}:
        fail("hf/model.json is %s" % meta)
    if config.get("torchscript") or config["id2label"] != {"0": "O", "1": "OBJ", "2": "SUBJ", "3": "VERB"} or \
            not extra["hf/tokenizer/tokenizer.json"]:
        fail("hf/config.json is %s (tokenizer.json: %d bytes)" % (config, len(extra["hf/tokenizer/tokenizer.json"])))
    # Tags on each word's first sub-word, -100 on the others and on the specials:
    # recompute from the tokenizer's own word_ids.
    import transformers
    tok = transformers.AutoTokenizer.from_pretrained(tokenizer)
    ids = {"O": 0, "OBJ": 1, "SUBJ": 2, "VERB": 3}
    split_words = 0
    for i, r in enumerate(rows):
        enc = tok(r["tokens"], is_split_into_words=True, padding="max_length", truncation=True, max_length=40)
        want, previous = [], None
        for w in enc.word_ids():
            want.append(-100 if w is None or w == previous else ids[r["tags"][w]])
            split_words += w is not None and w == previous
            previous = w
        if flat["train.labels"][i].tolist() != want or flat["train.input_ids"][i].tolist() != enc["input_ids"]:
            fail("row %d: labels %s, expected %s" % (i, flat["train.labels"][i].tolist(), want))
    if split_words == 0:
        fail("no word of the data split into sub-words: the alignment went untested")
    print("token classification: %d rows aligned, %d non-first sub-words at -100; safetensors keys %s" %
          (len(rows), split_words, ", ".join(expected[:3]) + ", ..."), flush=True)
    if module.model.distilbert.embeddings.word_embeddings.weight.data_ptr() != \
            dict(module.named_parameters())["model.distilbert.embeddings.word_embeddings.weight"].data_ptr():
        fail("the module's parameters are not its model's")

    csv_train = write_rows(os.path.join(work, "seq_train.csv"), [{"text": r["text"], "label": r["label"]} for r in rows])
    minilm = ["--model", tokenizer, "--output-model", os.path.join(work, "x.pt"), "--output-data",
              os.path.join(work, "x.pt")]
    refusals = [
        (minilm + ["--task", "sequence-classification", "--train", csv_train, "--label-column", "sentiment"],
         ["seq_train.csv", "no column 'sentiment'", "--label-column", "text, label"]),
        (minilm + ["--task", "token-classification", "--train", csv_train], ["no column 'tokens'"]),
        (minilm + ["--task", "translation", "--train", csv_train], ["invalid choice: 'translation'"]),
        (["--model", work, "--task", "causal-lm", "--train", csv_train, "--output-model", "x.pt", "--output-data",
          "x.pt"], [work, "not a Transformers model folder", "config.json"]),
        (minilm + ["--task", "causal-lm", "--train", os.path.join(work, "none.csv")], ["none.csv: no such file"]),
        (["--config", "no-such-type", "--tokenizer", tokenizer, "--task", "causal-lm", "--train", csv_train,
          "--output-model", "x.pt", "--output-data", "x.pt"], ["--config no-such-type", "Unrecognized model"]),
        (minilm + ["--task", "sequence-classification", "--train", csv_train, "--num-labels", "1"],
         ["--num-labels 1", "2 distinct labels"]),
    ]
    for args, words in refusals:
        code, text = hf_to_accum(args, expect_ok=False)
        if code != 2 or any(w not in text for w in words) or "Traceback" in text:
            fail("hf_to_accum.py %s: exit %d (expected 2, naming %s):\n%s" % (" ".join(args), code, words, text[-2000:]))
        print("refused, exit 2: %s" % [l for l in text.splitlines() if "error" in l][-1][:150], flush=True)


CASES = {"dropout": case_dropout, "hf_files": case_hf_files}

if __name__ == "__main__":
    main(CASES)
