#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A Transformers model and a data set to the two files accum-run trains: the
model traced to TorchScript (its dropout on in forward, off in forward_eval)
and the tokenized splits as named tensors.

    python examples/hf_to_accum.py --model DIR --task sequence-classification \\
        --train train.csv --validation validation.csv --output-model model.pt --output-data data.pt
    accum-run --model model.pt --dataset tensors --data data.pt --mode trainer ...

The model: --model DIR (a from_pretrained folder: its weights, a new head where
the task needs one) or --config CONFIG.json / a model type name (gpt2, bert,
distilbert, ...; a model made from scratch, --set KEY=VALUE to size it), built
with AutoModelForSequenceClassification / AutoModelForTokenClassification /
AutoModelForCausalLM. The data: local csv / json / jsonl / parquet files read
by datasets.load_dataset, tokenized by --tokenizer (default the model folder),
padded to --max-length.

Tasks and columns:
  sequence-classification  --text-column (text), optional --text-pair-column,
                           --label-column (label): integer classes or strings
                           (strings numbered in sorted order, kept in the
                           config's id2label).
  token-classification     --tokens-column (tokens, a list of words) and
                           --tags-column (tags, one tag per word, integers or
                           strings): each word's tag on its first sub-word
                           token, -100 on its other sub-words and the special
                           tokens (Transformers' token-classification example).
  causal-lm                --text-column (text): labels = input_ids, -100 on
                           padding (the model shifts them itself).

The module file holds the model twice over the same parameters: forward is
traced in model.train() (dropout as the config has it), forward_eval in
model.eval(); accum-run trains with the first and evaluates with the second.
--dropout off traces both in eval mode (the runs then match a Python run with
dropout 0 step for step). Beside the code it carries extra files that give the
weights back to Transformers: hf/config.json (the config as save_pretrained
writes it), hf/model.json ({"auto_class", "task", "parameter_prefix": "model.",
"state_dict_keys"}: a parameter's name minus the prefix is its Hugging Face name;
the keys are what the checkpoints' model.safetensors holds) and the
tokenizer's files under hf/tokenizer/.

LoRA (PEFT): --lora-r R wraps the model with peft.get_peft_model(model,
LoraConfig(r=R, lora_alpha=--lora-alpha, lora_dropout=--lora-dropout,
target_modules=--lora-target-modules, task_type=the task's)) before tracing:
only the adapter (and the head PEFT keeps trainable, its modules_to_save)
requires gradients, and accum-run trains only those. Without
--lora-target-modules PEFT's default for the model type applies. The module
then also carries hf/adapter_config.json (as PeftModel.save_pretrained writes
it) and hf/adapter.json ({"adapter_name", "weights": {PEFT's saved key: the
module's parameter}, "trainable": [the module's trainable parameters]}): the
engine writes adapter_model.safetensors and adapter_config.json into each
checkpoint and the output, which PeftModel.from_pretrained(model, DIR) loads.

--format pt2 writes, instead of the TorchScript module, the training step
compiled by AOTInductor (examples/accum_pt2.py; no torch.jit call): FILE.pt2
with a train graph (dropout as configured, drawn from a seed input; off with
--dropout off), an eval graph, the weights, and the same hf/ extra files
(parameter_prefix "": the names are the Transformers model's own).

The data file: a torch.save dict {"train": {...}, "validation": {...}} of
input_ids, attention_mask, token_type_ids (where the tokenizer gives them and
the model takes them) and labels; or, for an output name ending in
.safetensors, the same tensors under the keys train.input_ids, ...,
validation.labels."""
import argparse
import copy
import inspect
import json
import os
import sys
import tempfile

TASKS = {
    "sequence-classification": "AutoModelForSequenceClassification",
    "token-classification": "AutoModelForTokenClassification",
    "causal-lm": "AutoModelForCausalLM",
}
FORMATS = {".csv": "csv", ".json": "json", ".jsonl": "json", ".parquet": "parquet"}
PARAMETER_PREFIX = "model."  # the wrapper's attribute holding the Transformers model
IGNORE = -100


class Refused(Exception):
    """A problem with the input, said in one message (exit 2)."""


def reason(error):
    """The library's own reason, on one line (a list of every model type cut short)."""
    text = " ".join((str(error).strip() or type(error).__name__).split())
    return text if len(text) <= 600 else text[:600] + " ..."


# ------------------------------------------------------------------ the model

def parse_sets(items):
    """--set KEY=VALUE: the value as JSON where it parses (2, 0.1, true), else a string."""
    out = {}
    for item in items or []:
        if "=" not in item:
            raise Refused("--set %s: expected KEY=VALUE" % item)
        key, value = item.split("=", 1)
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def load_config(args, num_labels, label_names):
    import transformers
    extra = parse_sets(args.set)
    if args.task != "causal-lm":
        extra["num_labels"] = num_labels
        if label_names:
            extra["id2label"] = {i: name for i, name in enumerate(label_names)}
            extra["label2id"] = {name: i for i, name in enumerate(label_names)}
    if args.model:
        if not os.path.isdir(args.model):
            raise Refused("--model %s: no such folder (a folder from save_pretrained: config.json and the weights)"
                          % args.model)
        try:
            return transformers.AutoConfig.from_pretrained(args.model, **extra)
        except Exception as e:
            raise Refused("--model %s: not a Transformers model folder: %s" % (args.model, reason(e)))
    source = args.config
    try:
        if os.path.isfile(source):
            with open(source) as f:
                values = json.load(f)
            if "model_type" not in values:
                raise Refused("--config %s: no \"model_type\" (gpt2, bert, distilbert, ...), so no model class "
                              "fits it" % source)
            values.update(extra)
            return transformers.AutoConfig.for_model(values.pop("model_type"), **values)
        if os.sep in source or source.endswith(".json"):
            raise Refused("--config %s: no such file" % source)
        return transformers.AutoConfig.for_model(source, **extra)
    except Refused:
        raise
    except Exception as e:
        raise Refused("--config %s: %s" % (source, reason(e)))


def build_model(args, config, tokenizer):
    import torch
    import transformers
    auto = getattr(transformers, TASKS[args.task])
    if tokenizer.pad_token_id is not None and getattr(config, "pad_token_id", None) is None:
        config.pad_token_id = tokenizer.pad_token_id  # sequence classification finds each row's last token by it
    if args.task == "causal-lm":
        config.use_cache = False  # no key/value cache in a trained graph
    torch.manual_seed(args.seed)  # a new head's (or a new model's) initial weights
    try:
        if args.model:
            model = auto.from_pretrained(args.model, config=config, attn_implementation=args.attn)
        else:
            if getattr(config, "vocab_size", None) is not None and config.vocab_size < len(tokenizer):
                print("note: vocab_size %d < the tokenizer's %d tokens: the model is made with %d" %
                      (config.vocab_size, len(tokenizer), len(tokenizer)), flush=True)
                config.vocab_size = len(tokenizer)
            model = auto.from_config(config, attn_implementation=args.attn)
    except Exception as e:
        where = "--model %s" % args.model if args.model else "--config %s" % args.config
        raise Refused("%s: %s cannot make a model of it: %s" % (where, TASKS[args.task], reason(e)))
    return model


def forward_arguments(model, data):
    """The batch's columns the model's forward takes, in the wrapper's order."""
    accepted = inspect.signature(model.forward).parameters
    names = ["input_ids", "attention_mask", "token_type_ids", "labels"]
    return [n for n in names if n in data and n in accepted]


def make_wrapper(names):
    """A module with the Transformers model as `model` and forward / forward_eval
    taking exactly `names` (TorchScript keeps the argument names: the engine feeds
    them by name)."""
    import torch
    signature = ", ".join(names)
    call = ", ".join("%s=%s" % (n, n) for n in names)
    source = (
        "def forward(self, {sig}):\n"
        "    self.model.train(self.dropout)\n"
        "    out = self.model({call}, return_dict=True)\n"
        "    return out.loss, out.logits\n"
        "def forward_eval(self, {sig}):\n"
        "    self.model.eval()\n"
        "    out = self.model({call}, return_dict=True)\n"
        "    return out.loss, out.logits\n").format(sig=signature, call=call)
    methods = {}
    exec(source, {}, methods)

    class Traced(torch.nn.Module):
        def __init__(self, model, dropout):
            super().__init__()
            self.model = model
            self.dropout = dropout

    Traced.forward = methods["forward"]
    Traced.forward_eval = methods["forward_eval"]
    return Traced


def trace(model, split, names, dropout):
    """forward in train mode (dropout on, unless `dropout` is False), forward_eval
    in eval mode, over the same parameters, each on two rows of the split."""
    import torch
    wrapper = make_wrapper(names)(model, dropout)
    example = tuple(split[n][:2] for n in names)
    traced = torch.jit.trace_module(wrapper, {"forward": example, "forward_eval": example}, check_trace=False)
    model.eval()
    return traced


def dropout_applies(traced, split, names):
    """Whether forward draws dropout masks: two calls on the same rows differ."""
    import torch
    example = tuple(split[n][:2] for n in names)
    with torch.no_grad():
        state = torch.get_rng_state()
        first, second = traced.forward(*example)[1], traced.forward(*example)[1]
        torch.set_rng_state(state)
    return not torch.equal(first, second)


def user_config_json(model, use_cache):
    """The config as model.save_pretrained writes it, without the tracing's overrides."""
    config = copy.deepcopy(model.config)
    config.torchscript = False
    if use_cache is not None:
        config.use_cache = use_cache
    config.architectures = [type(model).__name__]
    with tempfile.TemporaryDirectory() as directory:
        config.save_pretrained(directory)
        with open(os.path.join(directory, "config.json")) as f:
            return f.read()


def state_dict_keys(model):
    """The model's state_dict() keys, a tied tensor once (under its first name, as save_pretrained
    writes it): the engine writes exactly these into model.safetensors, so a non-persistent buffer
    the trace keeps (BERT's token_type_ids) stays out."""
    seen, keys = set(), []
    for name, tensor in model.state_dict(keep_vars=True).items():
        if id(tensor) not in seen:
            seen.add(id(tensor))
            keys.append(name)
    return keys


def tokenizer_files(tokenizer):
    """hf/tokenizer/NAME for each file tokenizer.save_pretrained writes."""
    out = {}
    with tempfile.TemporaryDirectory() as directory:
        tokenizer.save_pretrained(directory)
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    out["hf/tokenizer/" + name] = f.read()
    return out


LORA_TASK_TYPES = {"sequence-classification": "SEQ_CLS", "token-classification": "TOKEN_CLS",
                   "causal-lm": "CAUSAL_LM"}


def lora_wrap(args, model):
    """The model wrapped by peft.get_peft_model with the --lora-* options (LoraConfig's fields)."""
    import torch
    try:
        import peft
        from peft.utils.constants import TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING as defaults
    except ImportError as e:
        raise Refused("--lora-r needs the peft package (scripts/requirements-models.txt): %s" % reason(e))
    model_type = getattr(model.config, "model_type", None)
    if args.lora_target_modules:
        targets = [m.strip() for m in args.lora_target_modules.split(",") if m.strip()]
        if not targets:
            raise Refused("--lora-target-modules %r: no module names" % args.lora_target_modules)
    elif model_type in defaults:
        targets = list(defaults[model_type])
    else:
        linear = sorted({name.rsplit(".", 1)[-1] for name, m in model.named_modules()
                         if isinstance(m, torch.nn.Linear)})
        raise Refused("--lora-r: PEFT has no default target modules for model type %r; name them with "
                      "--lora-target-modules (its linear layers: %s)" % (model_type, ", ".join(linear[:20])))
    try:
        config = peft.LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=args.lora_dropout,
                                 target_modules=targets, task_type=LORA_TASK_TYPES[args.task])
        return peft.get_peft_model(model, config)
    except Exception as e:
        raise Refused("--lora-r %d --lora-target-modules %s: peft.get_peft_model refuses the model: %s" %
                      (args.lora_r, ",".join(targets), reason(e)))


def adapter_files(peft_model):
    """hf/adapter_config.json as PeftModel.save_pretrained writes it, and hf/adapter.json:
    each key of its adapter_model.safetensors and the module parameter that holds it."""
    from peft.utils import get_peft_model_state_dict
    names = {p.data_ptr(): PARAMETER_PREFIX + n for n, p in peft_model.named_parameters()}
    weights = {}
    for key, t in get_peft_model_state_dict(peft_model).items():
        if t.data_ptr() not in names:
            raise Refused("PEFT saves %s, which is no parameter of the model" % key)
        weights[key] = names[t.data_ptr()]
    trainable = [PARAMETER_PREFIX + n for n, p in peft_model.named_parameters() if p.requires_grad]
    with tempfile.TemporaryDirectory() as directory:
        peft_model.save_pretrained(directory)
        with open(os.path.join(directory, "adapter_config.json")) as f:
            config = f.read()
        from safetensors import safe_open
        with safe_open(os.path.join(directory, "adapter_model.safetensors"), "pt") as f:
            saved = set(f.keys())
    if saved != set(weights):
        raise Refused("PEFT's adapter_model.safetensors and its adapter state dict differ in %s" %
                      ", ".join(sorted(saved ^ set(weights))[:3]))
    return {"hf/adapter_config.json": config,
            "hf/adapter.json": json.dumps({"adapter_name": peft_model.active_adapter, "weights": weights,
                                           "trainable": trainable}, indent=1)}


# ------------------------------------------------------------------ the data

def load_splits(args):
    import datasets
    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    fraction = args.validation_split
    if fraction is not None and args.validation:
        raise Refused("--validation-split %s and --validation %s: the evaluation split comes from one of them"
                      % (fraction, args.validation))
    if fraction is not None and not 0 < fraction < 1:
        raise Refused("--validation-split %s: the fraction of --train's rows to evaluate on, above 0 and below 1"
                      % fraction)
    files = {"train": args.train}
    if args.validation:
        files["validation"] = args.validation
    kinds = set()
    for split, path in files.items():
        if not os.path.isfile(path):
            raise Refused("--%s %s: no such file" % (split, path))
        ext = os.path.splitext(path)[1].lower()
        if ext not in FORMATS:
            raise Refused("--%s %s: the data file must end in %s (datasets.load_dataset reads those)" %
                          (split, path, " / ".join(FORMATS)))
        kinds.add(FORMATS[ext])
    if len(kinds) != 1:
        raise Refused("--train %s and --validation %s: one format for both" % (args.train, args.validation))
    kind = kinds.pop()
    try:
        loaded = datasets.load_dataset(kind, data_files=files)
    except Exception as e:
        raise Refused("%s: datasets.load_dataset(%r) cannot read it: %s" %
                      (" and ".join(files.values()), kind, reason(e)))
    for split, path in files.items():
        if len(loaded[split]) == 0:
            raise Refused("--%s %s: no rows" % (split, path))
    if fraction is not None:
        # The one file split as datasets splits it: Dataset.train_test_split itself,
        # with --seed, so the validation rows are the library's for that seed.
        rows = loaded["train"]
        try:
            parts = rows.train_test_split(test_size=fraction, seed=args.seed)
        except ValueError as e:  # a split left empty: the library's reason, with our option
            raise Refused("--validation-split %s of the %d rows of --train %s: %s" % (fraction, len(rows), args.train,
                                                                                      reason(e)))
        named = "%s (--validation-split %s, --seed %d)" % (args.train, fraction, args.seed)
        return {"train": (parts["train"], named), "validation": (parts["test"], named)}
    return {split: (loaded[split], files[split]) for split in files}


def require_columns(splits, columns):
    for split, (rows, path) in splits.items():
        for option, column in columns:
            if column not in rows.column_names:
                raise Refused("--%s %s: no column '%s' (%s; the file has %s)" %
                              (split, path, column, option, ", ".join(rows.column_names) or "none"))


def column_of(rows, name):
    """A column as Python values (datasets gives a lazy Column object)."""
    return rows.to_dict()[name] if hasattr(rows, "to_dict") else list(rows[name])


def label_mapping(values, what):
    """(numbering, names): integers as they are; strings numbered in sorted order."""
    kinds = {type(v) for v in values}
    if kinds <= {int}:
        if min(values) < 0:
            raise Refused("%s: label %d is negative (classes are 0, 1, ...)" % (what, min(values)))
        return None, None
    if kinds <= {str}:
        names = sorted(set(values))
        return {name: i for i, name in enumerate(names)}, names
    raise Refused("%s: labels must be all integers or all strings, got %s" %
                  (what, ", ".join(sorted(k.__name__ for k in kinds))))


def flat_labels(splits, column, per_word):
    values = []
    for split, (rows, path) in splits.items():
        for i, v in enumerate(column_of(rows, column)):
            items = v if per_word else [v]
            if per_word and not isinstance(v, list):
                raise Refused("--%s %s: row %d: column '%s' holds %r, not a list of per-word tags" %
                              (split, path, i, column, v))
            if any(x is None for x in items):
                raise Refused("--%s %s: row %d: column '%s' has no value" % (split, path, i, column))
            values += items
    return values


def tokenize(args, tokenizer, splits, numbering):
    import torch
    out = {}
    for split, (rows, path) in splits.items():
        common = dict(padding="max_length", truncation=True, max_length=args.max_length)
        if args.task == "token-classification":
            words = column_of(rows, args.tokens_column)
            tags = column_of(rows, args.tags_column)
            for i, (w, t) in enumerate(zip(words, tags)):
                if not isinstance(w, list) or not all(isinstance(x, str) for x in w):
                    raise Refused("--%s %s: row %d: column '%s' holds %r, not a list of words" %
                                  (split, path, i, args.tokens_column, w))
                if len(w) != len(t):
                    raise Refused("--%s %s: row %d: %d words in '%s' but %d tags in '%s'" %
                                  (split, path, i, len(w), args.tokens_column, len(t), args.tags_column))
            encoded = tokenizer(words, is_split_into_words=True, **common)
            labels = []
            for i, row_tags in enumerate(tags):
                previous, row = None, []
                for word in encoded.word_ids(i):
                    # The first sub-word of a word carries its tag; the others and the specials none.
                    row.append(IGNORE if word is None or word == previous else
                               (numbering[row_tags[word]] if numbering else row_tags[word]))
                    previous = word
                labels.append(row)
            split_out = {k: torch.tensor(v) for k, v in encoded.items()}
            split_out["labels"] = torch.tensor(labels, dtype=torch.int64)
        else:
            texts = column_of(rows, args.text_column)
            pairs = column_of(rows, args.text_pair_column) if args.text_pair_column else None
            for i, text in enumerate(texts):
                if not isinstance(text, str):
                    raise Refused("--%s %s: row %d: column '%s' holds %r, not text" %
                                  (split, path, i, args.text_column, text))
            if args.task == "causal-lm":
                encoded = tokenizer(texts, return_token_type_ids=False, **common)
                split_out = {k: torch.tensor(v) for k, v in encoded.items()}
                split_out["labels"] = split_out["input_ids"].masked_fill(split_out["attention_mask"] == 0, IGNORE)
            else:
                encoded = tokenizer(texts, pairs, **common) if pairs else tokenizer(texts, **common)
                split_out = {k: torch.tensor(v) for k, v in encoded.items()}
                values = column_of(rows, args.label_column)
                split_out["labels"] = torch.tensor([numbering[v] if numbering else v for v in values],
                                                   dtype=torch.int64)
        out[split] = {k: v.to(torch.int64).contiguous() for k, v in split_out.items()
                      if k in ("input_ids", "attention_mask", "token_type_ids", "labels")}
    return out


def save_data(path, data):
    import torch
    if path.endswith(".safetensors"):
        from safetensors.torch import save_file
        save_file({"%s.%s" % (split, name): t for split, tensors in data.items() for name, t in tensors.items()}, path)
    else:
        torch.save(data, path)


# ------------------------------------------------------------------ main

def convert(args):
    import torch
    import transformers
    if bool(args.model) == bool(args.config):
        raise Refused("give the model as --model DIR (a from_pretrained folder) or --config CONFIG.json / a model "
                      "type name (a new model), one of them")
    tokenizer_source = args.tokenizer or args.model
    if not tokenizer_source:
        raise Refused("--tokenizer DIR is needed with --config (a new model has no tokenizer of its own)")

    splits = load_splits(args)
    if args.task == "token-classification":
        require_columns(splits, [("--tokens-column", args.tokens_column), ("--tags-column", args.tags_column)])
    else:
        require_columns(splits, [("--text-column", args.text_column)] +
                        ([("--text-pair-column", args.text_pair_column)] if args.text_pair_column else []))
    if args.task == "sequence-classification":
        require_columns(splits, [("--label-column", args.label_column)])

    numbering, names, num_labels = None, None, None
    if args.task != "causal-lm":
        column = args.tags_column if args.task == "token-classification" else args.label_column
        values = flat_labels(splits, column, args.task == "token-classification")
        numbering, names = label_mapping(values, "column '%s'" % column)
        found = len(names) if names else max(values) + 1
        num_labels = args.num_labels or found
        if num_labels < found:
            raise Refused("--num-labels %d: the data's column '%s' has %s %s" %
                          (num_labels, column, "label" if not names else "%d distinct labels, up to" % len(names),
                           max(values) if not names else names[-1]))

    config = load_config(args, num_labels, names)
    is_folder = os.path.isdir(tokenizer_source)
    try:
        if not is_folder and args.tokenizer:
            raise OSError("no such folder")
        kwargs = {}
        config_for_type = None
        if args.task == "token-classification":
            # Byte-level BPE tokenizers need a space before each word to split words
            # as in running text (Transformers' token-classification example does this).
            try:
                config_for_type = transformers.AutoConfig.from_pretrained(tokenizer_source)
            except Exception:
                config_for_type = None
            if config_for_type is not None and config_for_type.model_type in {"bloom", "gpt2", "roberta", "deberta"}:
                kwargs["add_prefix_space"] = True
        tokenizer = transformers.AutoTokenizer.from_pretrained(tokenizer_source, **kwargs)
    except Refused:
        raise
    except Exception as e:
        raise Refused("--tokenizer %s: no tokenizer there: %s" % (tokenizer_source, reason(e)))
    if args.task == "token-classification" and not tokenizer.is_fast:
        raise Refused("--tokenizer %s: token classification aligns tags with word_ids(), which only a fast "
                      "tokenizer gives" % tokenizer_source)
    if tokenizer.pad_token is None:
        if tokenizer.eos_token is None:
            raise Refused("--tokenizer %s: no padding token and no end-of-sequence token to pad with" %
                          tokenizer_source)
        tokenizer.pad_token = tokenizer.eos_token  # GPT-2's tokenizer has no pad token; its EOS pads, masked out

    data = tokenize(args, tokenizer, splits, numbering)
    use_cache = getattr(config, "use_cache", None)
    model = build_model(args, config, tokenizer)
    model.config.torchscript = True
    base = model
    if args.lora_r is not None:
        model = lora_wrap(args, model)
    arguments = forward_arguments(base, data["train"])
    for split in data.values():  # what the model's forward does not take stays out of the file
        for name in list(split):
            if name not in arguments:
                del split[name]
    if "labels" not in arguments:
        raise Refused("%s's forward takes no labels" % type(base).__name__)
    if args.format == "pt2":
        if args.lora_r is not None:
            raise Refused("--lora-r with --format pt2: a LoRA module is converted to TorchScript only for now "
                          "(leave out --format pt2)")
        return convert_pt2(args, model, tokenizer, data, arguments, use_cache)
    traced = trace(model, data["train"], arguments, args.dropout == "on")
    if args.dropout == "on" and not dropout_applies(traced, data["train"], arguments):
        print("note: the model's config has no dropout that applies (all rates 0): forward and forward_eval compute "
              "the same", flush=True)
    extra = {
        "hf/config.json": user_config_json(base, use_cache),
        "hf/model.json": json.dumps({"auto_class": TASKS[args.task], "task": args.task,
                                     "parameter_prefix": PARAMETER_PREFIX,
                                     "state_dict_keys": state_dict_keys(model)}),
    }
    if args.lora_r is not None:
        extra.update(adapter_files(model))
    if not args.no_tokenizer_files:
        extra.update(tokenizer_files(tokenizer))
    torch.jit.save(traced, args.output_model, _extra_files=extra)
    save_data(args.output_data, data)
    sizes = " / ".join("%d %s" % (len(split["input_ids"]), name) for name, split in data.items())
    if args.lora_r is not None:
        print("LoRA: %d of %d parameters train (the adapter and PEFT's modules_to_save), the rest frozen" %
              (sum(p.numel() for p in model.parameters() if p.requires_grad),
               sum(p.numel() for p in model.parameters())), flush=True)
    print("wrote %s (%s, %s, %d parameters, traced with %s attention; dropout %s in forward, off in forward_eval) "
          "and %s (%s rows of %d tokens: %s)" %
          (args.output_model, type(base).__name__, args.task, sum(p.numel() for p in model.parameters()), args.attn,
           "as configured" if args.dropout == "on" else "off", args.output_data, sizes, args.max_length,
           ", ".join(arguments)))


def convert_pt2(args, model, tokenizer, data, arguments, use_cache):
    """--format pt2: the training step compiled by AOTInductor (examples/accum_pt2.py), no TorchScript."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import accum_pt2
    model.config.torchscript = False  # tuples are for tracing; tied weights stay tied
    example = {k: v[:2] for k, v in data["train"].items() if k in arguments}
    extra = {
        "hf/config.json": user_config_json(model, use_cache),
        # The package's parameters are the Transformers model's own: no prefix.
        "hf/model.json": json.dumps({"auto_class": TASKS[args.task], "task": args.task, "parameter_prefix": "",
                                     "state_dict_keys": state_dict_keys(model)}),
    }
    if not args.no_tokenizer_files:
        extra.update(tokenizer_files(tokenizer))
    meta = accum_pt2.export_training_package(model, example, args.output_model, extra_files=extra,
                                             dropout=args.dropout == "on")
    save_data(args.output_data, data)
    print("wrote %s (%s, %s, %d parameters, an AOTInductor package for torch %s: dropout %s in its train graph, off "
          "in its eval graph; sequences of %d tokens, any batch size) and %s" %
          (args.output_model, type(model).__name__, args.task, sum(p.numel() for p in model.parameters()),
           meta["torch_version"], "as configured" if meta["dropout"] else "off", args.max_length, args.output_data))


def parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog="See docs/own-model.md.")
    source = p.add_argument_group("the model")
    source.add_argument("--model", metavar="DIR", help="a from_pretrained folder (config.json and weights)")
    source.add_argument("--config", metavar="CONFIG",
                        help="a config .json file or a model type name (gpt2, bert, ...): a new model")
    source.add_argument("--set", action="append", metavar="KEY=VALUE",
                        help="a config value (JSON where it parses), e.g. --set n_layer=2; repeatable")
    source.add_argument("--task", required=True, choices=list(TASKS))
    source.add_argument("--tokenizer", metavar="DIR", help="the tokenizer's folder (default: --model)")
    source.add_argument("--num-labels", type=int, help="classes (default: as many as the data has)")
    source.add_argument("--attn", choices=["eager", "sdpa"], default="eager",
                        help="attention: eager (default; runs on every LibTorch build) or sdpa "
                             "(Transformers' default; needs the LibTorch 2.x build)")
    source.add_argument("--dropout", choices=["on", "off"], default="on",
                        help="on (default): forward trains with the config's dropout; off: traced in eval mode")
    source.add_argument("--seed", type=int, default=0,
                        help="initial weights of a new model or head, and --validation-split's shuffle (default 0)")
    lora = p.add_argument_group("LoRA (PEFT's LoraConfig fields)")
    lora.add_argument("--lora-r", type=int, metavar="R", help="the adapter's rank: wraps the model in LoRA")
    lora.add_argument("--lora-alpha", type=int, default=8, metavar="A", help="scaling alpha / r (default 8)")
    lora.add_argument("--lora-dropout", type=float, default=0.0, metavar="P", help="dropout before the adapter (0)")
    lora.add_argument("--lora-target-modules", metavar="M1,M2",
                      help="the modules that get an adapter (default: PEFT's for the model type)")
    lora.add_argument("--lora-base-dtype", choices=["float32", "bf16"], default="float32",
                      help="the frozen base weights' dtype: float32 (bf16 is refused: not available)")
    data = p.add_argument_group("the data")
    data.add_argument("--train", required=True, metavar="FILE", help=".csv, .json, .jsonl or .parquet")
    data.add_argument("--validation", metavar="FILE", help="the evaluation split, same format")
    data.add_argument("--validation-split", type=float, metavar="FRACTION",
                      help="without --validation: evaluate on this fraction of --train's rows, split off as "
                           "datasets' Dataset.train_test_split(test_size=FRACTION, seed=--seed) does")
    data.add_argument("--text-column", default="text")
    data.add_argument("--text-pair-column", help="a second text (sentence pairs)")
    data.add_argument("--label-column", default="label")
    data.add_argument("--tokens-column", default="tokens", help="token classification: the list of words")
    data.add_argument("--tags-column", default="tags", help="token classification: one tag per word")
    data.add_argument("--max-length", type=int, default=128, help="tokens per row, padded and truncated (128)")
    out = p.add_argument_group("the output")
    out.add_argument("--output-model", required=True, metavar="FILE.pt")
    out.add_argument("--format", choices=["torchscript", "pt2"], default="torchscript",
                     help="torchscript (default): a traced module, FILE.pt; pt2: the training step compiled by "
                          "AOTInductor through torch.export (examples/accum_pt2.py), FILE.pt2, no torch.jit")
    out.add_argument("--output-data", required=True, metavar="FILE.pt|FILE.safetensors")
    out.add_argument("--no-tokenizer-files", action="store_true",
                     help="leave the tokenizer's files out of the module file")
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    if args.max_length < 2:
        print("hf_to_accum.py: error: --max-length %d: at least 2" % args.max_length, file=sys.stderr)
        return 2
    if args.format == "pt2" and not args.output_model.endswith(".pt2"):
        print("hf_to_accum.py: error: --format pt2 --output-model %s: name it FILE.pt2 (accum-run tells a package "
              "by its name)" % args.output_model, file=sys.stderr)
        return 2
    if args.num_labels is not None and args.num_labels < 1:
        print("hf_to_accum.py: error: --num-labels %d: at least 1" % args.num_labels, file=sys.stderr)
        return 2
    if args.lora_r is not None and args.lora_r < 1:
        print("hf_to_accum.py: error: --lora-r %d: at least 1" % args.lora_r, file=sys.stderr)
        return 2
    if not 0 <= args.lora_dropout < 1:
        print("hf_to_accum.py: error: --lora-dropout %g: from 0 up to 1 (excluded)" % args.lora_dropout, file=sys.stderr)
        return 2
    if args.lora_base_dtype == "bf16":
        # A traced graph runs in the dtypes it was traced with: a bf16 base would
        # compute the whole forward in bf16, and accum-run's mixed precision
        # (autocast, float32 master weights) is the way to bf16 compute.
        print("hf_to_accum.py: error: --lora-base-dtype bf16: frozen base weights in bf16 beside a float32 adapter "
              "are not available; the base stays float32 (for bf16 compute, accum-run --bf16)", file=sys.stderr)
        return 2
    if args.lora_r is None and (args.lora_target_modules or args.lora_dropout or args.lora_alpha != 8):
        print("hf_to_accum.py: error: --lora-alpha, --lora-dropout and --lora-target-modules need --lora-r",
              file=sys.stderr)
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything local: a name that is no folder is an error
    try:
        convert(args)
    except Refused as e:
        print("hf_to_accum.py: error: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
