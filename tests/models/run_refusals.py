# SPDX-License-Identifier: GPL-3.0-or-later
"""Files and options accum-run must refuse (run_models.py has the modules and the
helpers; tests/models/CMakeLists.txt registers each case as models.CASE).

    run_refusals.py CASE ACCUM_RUN WORK_DIR

Cases:
  bad_files  every file and option the engine must refuse, with its exit code
             and the words of its message.
  sdpa       a Bert traced with Transformers' default attention: trains on a
             LibTorch 2.x build; a 1.13 build refuses it naming the operator and
             the two fixes.
"""
import math
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bad_modules  # noqa: E402
from run_models import (SKIP, accum_run, engine_losses, fail, image_data, lm_data, main, peers,  # noqa: E402
                        save_tensors, scripted_cnn, scripted_lm, transformers_files)


def scripted(work, name, cls):
    path = os.path.join(work, name + ".pt")
    torch.jit.script(cls()).save(path)
    return path


def case_bad_files(work):
    os.makedirs(work, exist_ok=True)
    images, tokens = image_data(work), lm_data(work)
    cnn = os.path.join(work, "cnn.pt")
    scripted_cnn.build().save(cnn)
    garbage = os.path.join(work, "garbage.pt")
    open(garbage, "wb").write(b"this is not a TorchScript archive\n" * 10)
    frozen = scripted(work, "frozen", bad_modules.Frozen)
    wrong_names = scripted(work, "wrong_names", bad_modules.WrongNames)
    wrong_shape = scripted(work, "wrong_shape", bad_modules.WrongShape)
    returns_int = scripted(work, "returns_int", bad_modules.ReturnsInt)
    loss_no_labels = scripted(work, "loss_no_labels", bad_modules.LossWithoutLabels)
    bad_logits = scripted(work, "bad_logits", bad_modules.BadLogits)
    custom_loss = scripted(work, "custom_loss", bad_modules.CustomLoss)

    def tensors(name, data):
        return save_tensors(os.path.join(work, name + ".pt"), data)

    no_labels = tensors("no_labels", {"input_ids": torch.ones(8, 4, dtype=torch.long),
                                      "attention_mask": torch.ones(8, 4, dtype=torch.long)})
    one_entry = tensors("one_entry", {"inputs": torch.randn(8, 4)})
    float_labels = tensors("float_labels", {"inputs": torch.randn(8, 4), "labels": torch.rand(8)})
    short_labels = tensors("short_labels", {"inputs": torch.randn(8, 4), "labels": torch.zeros(6, dtype=torch.long)})
    unknown_key = tensors("unknown_key", {"inputs": torch.randn(8, 4), "labels": torch.zeros(8, dtype=torch.long),
                                          "segment_ids": torch.zeros(8, 4, dtype=torch.long)})
    float_types = tensors("float_types", {"inputs": torch.randn(8, 4), "labels": torch.zeros(8, dtype=torch.long),
                                          "token_type_ids": torch.zeros(8, 4, dtype=torch.long)})
    two_labels = tensors("two_labels", {"inputs": torch.randn(8, 4), "labels": torch.zeros(8, dtype=torch.long),
                                        "label": torch.zeros(8, dtype=torch.long)})
    split = {"inputs": torch.randn(8, 1, 28, 28), "labels": torch.zeros(8, dtype=torch.long)}
    unknown_split = tensors("unknown_split", {"train": split, "dev": split})
    two_evals = tensors("two_evals", {"train": split, "eval": split, "validation": split})
    g = torch.Generator().manual_seed(5)
    big_label = tensors("big_label", {"inputs": torch.randn(48, 1, 28, 28, generator=g),
                                      "labels": torch.tensor([3] * 29 + [12] + [4] * 18)})
    # A token id the LM has no embedding row for, at sample 5 (labels fine): its
    # forward fails mid-run, deep in the module.
    lm_module = os.path.join(work, "lm.pt")
    scripted_lm.build(seed=4, vocab=64, max_length=24).save(lm_module)
    bad_token = torch.load(tokens)
    bad_token["input_ids"][5][3] = 1000
    bad_token = tensors("bad_token", bad_token)
    bad_mask = tensors("bad_mask", {"input_ids": torch.ones(8, 5, dtype=torch.long),
                                    "attention_mask": torch.ones(8, 4, dtype=torch.long),
                                    "labels": torch.zeros(8, dtype=torch.long)})
    no_eval = tensors("no_eval", {"inputs": torch.randn(8, 4), "labels": torch.zeros(8, dtype=torch.long)})
    def with_data(data):  # the scripted CNN on a tensors file
        return ["--model", cnn, "--dataset", "tensors", "--data", data]

    data_images = ["--dataset", "tensors", "--data", images]
    data_tokens = ["--dataset", "tensors", "--data", tokens]
    cases = [
        ("a missing model file", ["--model", os.path.join(work, "missing.pt")] + data_images, 4,
         ["--model", "missing.pt", "no such file"]),
        ("a file that is not TorchScript", ["--model", garbage] + data_images, 2,
         ["--model", "garbage.pt", "cannot be read as a TorchScript module"]),
        ("a directory", ["--model", work + "/"] + data_images, 2, ["--model", "is a directory"]),
        ("no parameters that require grad", ["--model", frozen] + data_images, 2,
         ["frozen.pt", "no parameters that require gradients"]),
        ("a forward whose arguments the data cannot feed", ["--model", wrong_names] + data_images, 2,
         ["wrong_names.pt", "forward(a (nothing fits), b (nothing fits))", "takes none of the names"]),
        ("a forward that fails on the data", ["--model", wrong_shape] + data_images, 2,
         ["wrong_shape.pt", "failed on two samples of the data", "inputs [2, 1, 28, 28]"]),
        ("a forward that returns an int", ["--model", returns_int] + data_images, 2,
         ["returns_int.pt", "forward returns Int"]),
        ("a loss but no labels", ["--model", loss_no_labels] + data_images, 2,
         ["loss_no_labels.pt", "returns a loss but takes no labels"]),
        ("logits that do not fit the labels", ["--model", bad_logits] + data_images, 2,
         ["bad_logits.pt", "logits of shape [2, 2, 5]", "labels of shape [2]"]),
        ("--gradient-checkpointing", ["--model", cnn, "--gradient-checkpointing"] + data_images, 2,
         ["--gradient-checkpointing", "cnn.pt"]),
        ("--dropout", ["--model", cnn, "--dropout", "0.1"] + data_images, 2, ["--dropout", "cnn.pt"]),
        ("token loss on a loss that is no cross-entropy",
         ["--model", custom_loss, "--loss-normalization", "tokens"] + data_tokens, 2,
         ["--loss-normalization", "custom_loss.pt", "cannot count the tokens"]),
        ("a missing data file", with_data(os.path.join(work, "none.pt")), 4,
         ["--data", "none.pt", "no such file"]),
        ("a data file that torch.save did not write", with_data(garbage), 4,
         ["garbage.pt", "cannot be read as tensors saved by torch.save"]),
        ("data without labels", with_data(no_labels), 4,
         ["no_labels.pt", "has no 'labels'"]),
        ("a dict of one entry", with_data(one_entry), 4,
         # LibTorch 1.13's unpickler cannot read a dict of one entry (Python's SETITEM) and says so;
         # 2.x reads it and finds no labels.
         ["one_entry.pt", ("a dict of one entry, which LibTorch's reader cannot read; the file needs input_ids "
                           "(or inputs) and labels", "the training split has no 'labels'")]),
        ("float labels", with_data(float_labels), 4,
         ["float_labels.pt", "'labels' is float32"]),
        ("labels for fewer samples", with_data(short_labels), 4,
         ["short_labels.pt", "'labels' has shape [6]", "[8, 4]"]),
        ("an unknown key", with_data(unknown_key), 4,
         ["unknown_key.pt", "unknown key 'segment_ids'", "token_type_ids, as a tokenizer gives them"]),
        ("token_type_ids with float inputs", with_data(float_types), 4,
         ["float_types.pt", "'token_type_ids' is given with float 'inputs'"]),
        ("both label and labels", with_data(two_labels), 4,
         ["two_labels.pt", "holds both 'labels' and 'label'"]),
        ("a split of another name", with_data(unknown_split), 4,
         ["unknown_split.pt", "'dev' is a dict", "train, validation (or eval) and test"]),
        ("both an eval and a validation split", with_data(two_evals), 4,
         ["two_evals.pt", "both an eval and a validation split"]),
        ("a label the module has no output for", with_data(big_label) + ["--eval-strategy", "no"], 4,
         ["big_label.pt", "label 12 of training sample 29", "model's 10 outputs"]),
        ("a token id the module has no row for, mid-run",
         ["--model", lm_module, "--dataset", "tensors", "--data", bad_token, "--no-shuffle", "--batch-size", "8",
          "--eval-strategy", "no"], 4,
         ["bad_token.pt", "the forward of", "lm.pt failed on training batch 1 of the epoch (samples 0–7)",
          "sample 5 fails alone",
          "index out of range"]),
        ("a mask of another shape", with_data(bad_mask), 4,
         ["bad_mask.pt", "'attention_mask' has shape [8, 4]"]),
        ("no eval split with --eval-strategy epoch", with_data(no_eval), 2,
         ["--eval-strategy", "no_eval.pt holds no eval split"]),
        ("--dataset tensors without --data", ["--model", cnn, "--dataset", "tensors"], 2,
         ["--data", "the tensors dataset needs --data FILE.pt"]),
    ]
    for what, args, code, words in cases:
        out = os.path.join(work, "refused")
        shutil.rmtree(out, ignore_errors=True)
        rc, stdout, stderr = accum_run(args + ["--output-dir", out, "--device", "cpu", "--max-steps", "1",
                                               "--quiet"], timeout=120)
        text = stdout + stderr
        line = next((l for l in stderr.splitlines() if l.startswith("accum-run: ")), stderr.strip()[:300])
        print("%-48s exit %d: %s" % (what, rc, line), flush=True)
        if rc != code:
            fail("%s: exit %d, expected %d\n%s" % (what, rc, code, text[-2000:]))
        # A word, or a tuple of words one of which must be there.
        missing = [w for w in words if not any(x in text for x in (w if isinstance(w, tuple) else (w,)))]
        if missing:
            fail("%s: the message lacks %s:\n%s" % (what, missing, text[-2000:]))
        if "Traceback" in text or "terminate called" in text:
            fail("%s: the refusal printed a stack:\n%s" % (what, text[-2000:]))


def case_sdpa(work):
    """A Bert traced with Transformers' default attention (sdpa): it holds
    aten::scaled_dot_product_attention. A LibTorch 2.x build trains it; a 1.13
    build refuses it (exit 2), naming the operator, keeping LibTorch's reason and
    naming both fixes."""
    os.makedirs(work, exist_ok=True)
    files = transformers_files(work, "bert", attention="sdpa")
    if files is None:
        print("SKIP: no Python with transformers (ACCUM_MAKER_PYTHON) to trace the model", flush=True)
        sys.exit(77)
    model, data = files
    rc, version, _ = accum_run(["--version"])
    if rc != 0 or "LibTorch" not in version:
        fail("accum-run --version: exit %d: %s" % (rc, version))
    torch_major = int(version.split("LibTorch ")[1].split(".")[0])
    out = os.path.join(work, "run")
    rc, stdout, stderr = accum_run(["--model", model, "--dataset", "tensors", "--data", data, "--mode", "trainer",
                                    "--batch-size", "8", "--accumulation-steps", "2", "--optimizer", "adamw",
                                    "--lr", "2e-3", "--max-steps", "3", "--device", "cpu", "--quiet",
                                    "--output-dir", out], timeout=300)
    text = stdout + stderr
    print("LibTorch %d: exit %d: %s" % (torch_major, rc, text.strip()[-400:]), flush=True)
    if torch_major >= 2:
        if rc != 0:
            fail("the sdpa-traced Bert did not train on LibTorch 2.x: exit %d\n%s" % (rc, text[-2000:]))
        losses = engine_losses(peers.EngineRun(out, text), "sdpa Bert", 3)
        if any(math.isnan(l) for l in losses):
            fail("a NaN loss: %s" % losses)
    else:
        if rc != 2:
            fail("LibTorch 1.x: the sdpa-traced Bert: exit %d, expected 2\n%s" % (rc, text[-2000:]))
        for words in ["bert_sdpa.pt", "aten::scaled_dot_product_attention", "scripts/build-libtorch2.sh",
                      'attn_implementation="eager"', "Unknown builtin op"]:
            if words not in text:
                fail("the refusal lacks %r:\n%s" % (words, text[-2000:]))



CASES = {"bad_files": case_bad_files, "sdpa": case_sdpa}

if __name__ == "__main__":
    main(CASES)
