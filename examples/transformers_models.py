#!/usr/bin/env python3
"""A real Transformers model for accum-run and the studio, built from a config
(nothing downloaded) and traced with torchscript=True, with a tokenized toy
data set saved as named tensors:

    python3 examples/transformers_models.py bert bert.pt bert_data.pt
    accum-run --model bert.pt --dataset tensors --data bert_data.pt --mode trainer \\
              --batch-size 16 --accumulation-steps 4 --optimizer adamw --lr 2e-3 --epochs 10

    python3 examples/transformers_models.py gpt2 gpt2.pt gpt2_data.pt
    accum-run --model gpt2.pt --dataset tensors --data gpt2_data.pt --mode trainer \\
              --batch-size 16 --accumulation-steps 4 --optimizer adamw --lr 1e-3 --loss-normalization tokens

bert: BertForSequenceClassification (2 layers of width 64) on toy sentiment
sentences, forward(input_ids, attention_mask, labels) → (loss, logits).
gpt2: GPT2LMHeadModel (2 layers of width 64) on the same sentences as text,
forward(input_ids, attention_mask, labels) → {"loss", "logits"}; it shifts the
labels itself (the logits at t against the token at t + 1), which the engine
detects when it loads the module.

The modules are traced in eval mode with dropout 0: a trace keeps what ran when
it was taken. Needs transformers (pip install transformers) and torch 2.x."""
import argparse
import random

import torch

PAD, CLS, SEP = 0, 1, 2
SUBJECTS = ["the film", "the movie", "the story", "the acting", "the music", "the ending", "this book", "the show"]
GOOD = ["good", "great", "wonderful", "moving", "funny", "clever", "beautiful", "fresh"]
BAD = ["bad", "boring", "dull", "awful", "slow", "silly", "flat", "weak"]
ADVERBS = ["very", "really", "quite", "so", "truly"]
MAX_LENGTH = 16


def vocabulary():
    words = sorted({w for phrase in SUBJECTS + GOOD + BAD + ADVERBS + ["was", "is", "not", "and", "but"]
                    for w in phrase.split()})
    return {w: i + 3 for i, w in enumerate(words)}  # 0 pad, 1 [CLS], 2 [SEP]


def sentences(count, seed):
    """Toy sentiment: 'the film was very good but the ending was dull' and so on;
    the label is the sentiment of the last clause (negated by 'not')."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        words, label = [], 0
        for clause in range(rng.choice([1, 1, 2])):
            if clause:
                words.append(rng.choice(["and", "but"]))
            positive = rng.random() < 0.5
            negated = rng.random() < 0.25
            words += rng.choice(SUBJECTS).split() + [rng.choice(["was", "is"])]
            if negated:
                words.append("not")
            if rng.random() < 0.5:
                words.append(rng.choice(ADVERBS))
            words.append(rng.choice(GOOD if positive else BAD))
            label = int(positive != negated)
        out.append((words, label))
    return out


def tokenize(rows, vocab):
    ids = torch.full((len(rows), MAX_LENGTH), PAD, dtype=torch.int64)
    mask = torch.zeros((len(rows), MAX_LENGTH), dtype=torch.int64)
    for i, (words, _) in enumerate(rows):
        tokens = ([CLS] + [vocab[w] for w in words] + [SEP])[:MAX_LENGTH]
        ids[i, :len(tokens)] = torch.tensor(tokens)
        mask[i, :len(tokens)] = 1
    return ids, mask


def toy_data(kind, train=512, eval=128, seed=0):
    """The named tensors accum-run's --dataset tensors reads."""
    vocab = vocabulary()
    data = {}
    for prefix, count, split_seed in (("", train, seed), ("eval_", eval, seed + 1)):
        rows = sentences(count, split_seed)
        ids, mask = tokenize(rows, vocab)
        if kind == "bert":
            labels = torch.tensor([label for _, label in rows], dtype=torch.int64)
        else:  # the text itself: a causal LM's labels are its inputs, -100 on padding
            labels = ids.masked_fill(mask == 0, -100)
        data.update({prefix + "input_ids": ids, prefix + "attention_mask": mask, prefix + "labels": labels})
    return data, len(vocab) + 3


def build(kind, vocab_size, seed=0, example=None, attention="eager"):
    """The model from a config, traced (torchscript=True) on two rows of `example`.
    attention="eager" keeps to operators every LibTorch has; "sdpa" (Transformers'
    default) traces aten::scaled_dot_product_attention, which needs LibTorch 2.x."""
    import transformers
    torch.manual_seed(seed)
    common = dict(torchscript=True, attn_implementation=attention)
    if kind == "bert":
        config = transformers.BertConfig(vocab_size=vocab_size, hidden_size=64, num_hidden_layers=2,
                                         num_attention_heads=2, intermediate_size=128,
                                         max_position_embeddings=MAX_LENGTH, num_labels=2, hidden_dropout_prob=0.0,
                                         attention_probs_dropout_prob=0.0, return_dict=False, **common)
        model = transformers.BertForSequenceClassification(config)
        strict = True
    else:
        config = transformers.GPT2Config(vocab_size=vocab_size, n_positions=MAX_LENGTH, n_embd=64, n_layer=2,
                                         n_head=2, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False,
                                         bos_token_id=CLS, eos_token_id=SEP, pad_token_id=PAD, **common)
        model = transformers.GPT2LMHeadModel(config)
        strict = False  # GPT-2 returns a dict (loss, logits) here; a trace of a dict is not strict
    model.eval()
    inputs = {k: example[k][:2] for k in ("input_ids", "attention_mask", "labels")}
    return torch.jit.trace(model, example_kwarg_inputs=inputs, strict=strict)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["bert", "gpt2"])
    parser.add_argument("model", help="the TorchScript file to write, e.g. bert.pt")
    parser.add_argument("data", help="the tensors file to write, e.g. bert_data.pt")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--attention", choices=["eager", "sdpa"], default="eager",
                        help="Transformers' attention: eager (default; runs on LibTorch 1.13 too) or sdpa "
                             "(Transformers' own default; needs LibTorch 2.x)")
    args = parser.parse_args()
    data, vocab_size = toy_data(args.kind, seed=args.seed)
    module = build(args.kind, vocab_size, args.seed, data, args.attention)
    module.save(args.model)
    torch.save(data, args.data)
    print("wrote %s (%s, %d parameters, traced) and %s (%d training and %d eval samples of %d tokens)" %
          (args.model, "BertForSequenceClassification" if args.kind == "bert" else "GPT2LMHeadModel",
           sum(p.numel() for p in module.parameters()), args.data, len(data["labels"]), len(data["eval_labels"]),
           MAX_LENGTH))
# SPDX-License-Identifier: GPL-3.0-or-later
