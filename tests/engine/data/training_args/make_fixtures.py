#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the TrainingArguments fixtures of test_training_args: what
TrainingArguments(...).to_json_string() of Transformers 5 gives.

    python tests/engine/data/training_args/make_fixtures.py tests/engine/data/training_args

(with the pinned Python environment's python, scripts/requirements-torch2.txt).
Each fixture's equivalent accum-run options are written out by hand in
tests/engine/test_training_args.cpp.
"""
import pathlib
import sys

from transformers import TrainingArguments

FIXTURES = {
    # The defaults but for the length, the batch and the log.
    "plain.json": dict(output_dir="runs/ta-plain", per_device_train_batch_size=64, gradient_accumulation_steps=4,
                       num_train_epochs=1, learning_rate=1e-3, logging_steps=5, save_strategy="no"),
    # A cosine schedule with a warm-up ratio (warmup_steps below 1), weight decay, clipping, bf16.
    "cosine_bf16.json": dict(output_dir="runs/ta-cosine", per_device_train_batch_size=64,
                             gradient_accumulation_steps=4, num_train_epochs=1, learning_rate=2e-3,
                             lr_scheduler_type="cosine", warmup_steps=0.1, weight_decay=0.01, max_grad_norm=0.5,
                             bf16=True, use_cpu=True, logging_steps=4, save_strategy="no"),
    # A length in steps, evaluation and checkpoints by steps, a seed, SGD.
    "steps_sgd.json": dict(output_dir="runs/ta-steps", per_device_train_batch_size=32, gradient_accumulation_steps=2,
                           max_steps=30, learning_rate=0.05, optim="sgd", eval_strategy="steps", eval_steps=10,
                           save_strategy="steps", save_steps=15, save_total_limit=1, seed=7, logging_steps=10,
                           run_name="fixture", dataloader_num_workers=2),
}


def main() -> None:
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    for name, kwargs in FIXTURES.items():
        (out / name).write_text(TrainingArguments(**kwargs).to_json_string() + "\n")


if __name__ == "__main__":
    main()
