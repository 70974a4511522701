"""The largest difference of each kind over the peers suite's reports
(report.json in each case's work directory), for the README's table:

    python3 tests/peers/summarize.py build/tests/peers/work-*
"""
import json
import os
import sys

KINDS = [("partial window", "partial window r/K (relative)"), ("train_loss", "train_loss"),
         ("loss per step", "per-step loss"), ("logged loss", "logged loss"), ("learning rate", "learning rate"),
         ("grad_norm", "grad_norm (relative)"), ("epoch", "epoch values"), ("eval_loss", "eval_loss"),
         ("eval_accuracy", "eval_accuracy"), ("eval_f1", "eval_f1")]

worst = {}
for d in sys.argv[1:]:
    path = os.path.join(d, "report.json")
    if not os.path.exists(path):
        print("no report in", d)
        continue
    report = json.load(open(path))
    for row in report["rows"]:
        if "max_diff" not in row:
            continue
        for key, label in KINDS:
            if key in row["what"]:
                w = worst.setdefault(label, (0.0, ""))
                if row["max_diff"] >= w[0]:
                    worst[label] = (row["max_diff"], "%s: %s" % (report["case"], row["what"]))
                break
for _, label in KINDS:
    if label in worst:
        print("%-22s %.2g   (%s)" % (label, worst[label][0], worst[label][1]))
# SPDX-License-Identifier: GPL-3.0-or-later
