# SPDX-License-Identifier: GPL-3.0-or-later
"""A run's own record and one data file split, on modules made by
examples/hf_to_accum.py (the helpers of run_models.py make them).

    run_records.py CASE ACCUM_RUN WORK_DIR

Cases (tests/models/CMakeLists.txt registers each):
  record            the packaged MiniLM as a sequence classifier, trained in the
                    trainer style at 8 x 4 with a checkpoint every update: the run
                    keeps its options in accum_config.json and the model's config
                    in config.json (model_type, as save_pretrained writes it);
                    accum-run --config of the record gives the same step losses
                    (within 1e-7), and so does --resume of its checkpoint-1 without
                    --config, which takes the record and says so.
  validation_split  hf_to_accum.py --validation-split on one CSV: its validation
                    rows are those of datasets' own Dataset.train_test_split with
                    the same seed (the files made from that split's two parts hold
                    the same tensors), the module trains with the default
                    --eval-strategy epoch, and each wrong use is refused by name.
"""
import json
import os
import shutil
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_models  # noqa: E402  making the modules, running accum-run, failing
from run_models import fail, hf_to_accum, peers, require_hf, sentence_rows, write_rows  # noqa: E402

RECORD_TOLERANCE = 1e-7  # the bound: the same options, the same arithmetic


def losses_of(run, what, expected):
    losses = [s["loss"] for s in run.steps]
    if len(losses) != expected:
        fail("%s: %d step records, expected %d" % (what, len(losses), expected))
    if run.summary is None or run.summary.get("status") != "completed":
        fail("%s: did not complete: %s" % (what, run.summary))
    return losses


def same_losses(what, got, reference):
    bad = [x for x in got + reference if x != x or x in (float("inf"), float("-inf"))]
    if bad or not reference:
        fail("%s: a loss is not finite, or there are none: %s against %s" % (what, got, reference))
    worst = max(abs(a - b) for a, b in zip(got, reference))
    print("%-62s %d steps, largest difference %.2e (bound %.0e)" % (what, len(got), worst, RECORD_TOLERANCE),
          flush=True)
    if len(got) != len(reference) or worst > RECORD_TOLERANCE:
        fail("%s: %s against %s" % (what, got, reference))


def case_record(work):
    tokenizer = require_hf(work)
    model, data = run_models.hf_case_files(work, "minilm", "sequence-classification", ["--model", tokenizer],
                                           ["text", "label"], "csv", "off", train=64, validation=16)
    steps = 2  # 64 rows / (8 x 4)
    first = peers.run_engine(os.path.join(work, "run"), {
        "model": model, "dataset": "tensors", "data": data, "mode": "trainer", "batch-size": 8,
        "accumulation-steps": 4, "epochs": 1, "lr": 1e-4, "optimizer": "adamw", "logging-steps": 1,
        "save-strategy": "steps", "save-steps": 1, "eval-strategy": "epoch"}, timeout=600)
    reference = losses_of(first, "the MiniLM run", steps)
    with open(os.path.join(first.out_dir, "accum_config.json")) as f:
        record = json.load(f)
    if (record.get("batch-size"), record.get("accumulation-steps"), record.get("mode")) != (8, 4, "trainer"):
        fail("accum_config.json records batch-size %r, accumulation-steps %r, mode %r; the run was 8 x 4, trainer"
             % (record.get("batch-size"), record.get("accumulation-steps"), record.get("mode")))
    with open(os.path.join(first.out_dir, "config.json")) as f:
        model_config = json.load(f)
    if model_config.get("model_type") != "bert" or "batch-size" in model_config:
        fail("the run's config.json is not the model's config: %s" % sorted(model_config)[:12])

    again = peers.run_engine(os.path.join(work, "again"),
                             {"config": os.path.join(first.out_dir, "accum_config.json")}, timeout=600)
    same_losses("accum-run --config run/accum_config.json", losses_of(again, "the --config run", steps), reference)

    # --resume of checkpoint-1 alone: the record's options, in the run's own directory.
    p = subprocess.run([peers.engine_program(), "--resume", os.path.join(first.out_dir, "checkpoint-1")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    if p.returncode != 0:
        fail("accum-run --resume run/checkpoint-1 exited %d:\n%s" % (p.returncode, p.stdout[-3000:]))
    said = "without --config: the run's options are its record's, " + os.path.join(first.out_dir, "accum_config.json")
    if said not in p.stdout:
        fail("accum-run --resume alone did not say where its options came from:\n%s" % p.stdout[-3000:])
    resumed = peers.EngineRun(first.out_dir, p.stdout)
    same_losses("accum-run --resume run/checkpoint-1 (no --config)", losses_of(resumed, "the resumed run", steps),
                reference)


def case_validation_split(work):
    import datasets
    tokenizer = require_hf(work)
    csv_file = write_rows(os.path.join(work, "one.csv"),
                          [{"text": r["text"], "label": r["label"]} for r in sentence_rows(40, 12)])
    source = ["--config", "bert", "--tokenizer", tokenizer, "--task", "sequence-classification", "--max-length",
              "24", "--dropout", "off"] + sum((["--set", s] for s in run_models.BERT_SETS), [])
    model, data = os.path.join(work, "split.pt"), os.path.join(work, "split_data.pt")
    fraction, seed = 0.25, 7
    hf_to_accum(source + ["--train", csv_file, "--validation-split", str(fraction), "--seed", str(seed),
                          "--output-model", model, "--output-data", data])

    # datasets' own split of the same file with the same seed, its two parts as two files.
    rows = datasets.load_dataset("csv", data_files={"train": csv_file})["train"]
    parts = rows.train_test_split(test_size=fraction, seed=seed)
    files = {name: write_rows(os.path.join(work, "library_%s.csv" % name), [dict(r) for r in parts[name]])
             for name in ("train", "test")}
    library = os.path.join(work, "library_data.pt")
    hf_to_accum(source + ["--train", files["train"], "--validation", files["test"], "--output-model",
                          os.path.join(work, "library.pt"), "--output-data", library])
    ours, theirs = torch.load(data), torch.load(library)
    if len(parts["test"]) != 10 or len(ours["validation"]["labels"]) != 10:
        fail("--validation-split 0.25 of 40 rows: %d validation rows, datasets' split %d; expected 10"
             % (len(ours["validation"]["labels"]), len(parts["test"])))
    for split in ("train", "validation"):
        if sorted(ours[split]) != sorted(theirs[split]):
            fail("%s: tensors %s against %s" % (split, sorted(ours[split]), sorted(theirs[split])))
        for key in ours[split]:
            if not torch.equal(ours[split][key], theirs[split][key]):
                fail("--validation-split %s --seed %d: %s.%s differs from datasets' train_test_split(test_size=%s, "
                     "seed=%d)" % (fraction, seed, split, key, fraction, seed))
    print("--validation-split %s --seed %d: the rows of datasets' train_test_split (%d train, %d validation)"
          % (fraction, seed, len(ours["train"]["labels"]), len(ours["validation"]["labels"])), flush=True)

    # The one file trains with the default --eval-strategy epoch (which needs a validation split).
    run = peers.run_engine(os.path.join(work, "run"), {
        "model": model, "dataset": "tensors", "data": data, "mode": "trainer", "batch-size": 5,
        "accumulation-steps": 2, "epochs": 1, "lr": 1e-3, "optimizer": "adamw", "save-strategy": "no"}, timeout=600)
    losses_of(run, "the split file's run", 3)  # 30 rows / 5 = 6 batches / 2
    if len(run.evals) != 1 or not run.evals[0].get("eval_loss") == run.evals[0].get("eval_loss"):
        fail("the split file's run: eval records %s, expected one with a loss at the epoch's end" % run.evals)

    # Refused, each naming the option.
    refusals = [
        (["--validation-split", "0.25", "--validation", csv_file], ["--validation-split 0.25 and --validation"]),
        (["--validation-split", "0"], ["--validation-split 0.0: the fraction", "above 0 and below 1"]),
        (["--validation-split", "1"], ["--validation-split 1.0: the fraction"]),
        (["--validation-split", "-0.5"], ["--validation-split -0.5: the fraction"]),
        (["--validation-split", "nan"], ["--validation-split nan: the fraction"]),
        (["--validation-split", "0.999"], ["--validation-split 0.999 of the 40 rows of --train", "empty"]),
        (["--validation-split", "a quarter"], ["--validation-split", "invalid float value"]),
    ]
    for extra, words in refusals:
        code, text = hf_to_accum(source + ["--train", csv_file, "--output-model", os.path.join(work, "x.pt"),
                                           "--output-data", os.path.join(work, "x.pt")] + extra, expect_ok=False)
        if code != 2 or any(w not in text for w in words):
            fail("hf_to_accum.py %s: exit %d, wanted 2 naming %s:\n%s" % (" ".join(extra), code, words, text[-2000:]))
        print("refused: %-40s %s" % (" ".join(extra), text.strip().splitlines()[-1][:110]), flush=True)


CASES = {"record": case_record, "validation_split": case_validation_split}

if __name__ == "__main__":
    case, program, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.environ["ACCUM_RUN"] = program
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    torch.set_num_threads(1)
    print("torch %s, accum-run %s" % (torch.__version__, program), flush=True)
    CASES[case](work)
    print("PASS", flush=True)
