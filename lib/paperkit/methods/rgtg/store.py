"""Files of the rgtg commands: LM/RM checkpoints (ours, weights-only), local HF directories, vocabularies,
and the JSONL inputs (prompts; prompt/chosen/rejected pairs; prompt/response prefixes; rollouts with rewards)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperkit.core import io
from paperkit.core.errors import InputError, UsageError

from .model import TinyLM, load_hf_causal_lm
from .rm import MarkovLM, ScalarRM, Seqs

LM_FORMAT, RM_FORMAT = "paperkit-rgtg-lm", "paperkit-rgtg-rm"


class WordVocab:
    """Whitespace-separated tokens of a fixed vocabulary (our models and the toy language)."""

    kind, sep = "word", " "

    def __init__(self, tokens):
        self.tokens = list(tokens)
        self.index = {t: i for i, t in enumerate(self.tokens)}
        self.eos_id = None

    def __len__(self) -> int:
        return len(self.tokens)

    def split(self, text: str) -> list[str]:
        return text.split()

    def encode(self, text: str, where: str) -> list[int]:
        ids = []
        for tok in self.split(text):
            if tok not in self.index:
                raise InputError(f"{where}: token {tok[:40]!r} is not in the model's vocabulary "
                                 f"({len(self.tokens)} tokens, e.g. {' '.join(map(repr, self.tokens[:5]))})")
            ids.append(self.index[tok])
        return ids

    def decode(self, ids) -> str:
        return self.sep.join(self.tokens[i] for i in ids)


class CharVocab(WordVocab):
    """One token per character (the char-level text task): text is read and written as is."""

    kind, sep = "char", ""

    def split(self, text: str) -> list[str]:
        return list(text)


def make_vocab(tokens, kind: str = "word") -> WordVocab:
    return (CharVocab if kind == "char" else WordVocab)(tokens)


class HFVocab:
    """A local HF tokenizer (the same directory as the model)."""

    def __init__(self, path):
        from transformers import AutoTokenizer

        try:
            self.tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(f"{path}: no usable tokenizer in the model directory ({exc.__class__.__name__})") from None
        self.eos_id = self.tok.eos_token_id
        self.size = len(self.tok)

    def __len__(self) -> int:
        return self.size

    def encode(self, text: str, where: str) -> list[int]:
        return list(self.tok(text, add_special_tokens=False)["input_ids"])

    def decode(self, ids) -> str:
        return self.tok.decode(list(ids))


@dataclass
class Loaded:
    """A model ready to decode: the module, its vocabulary, its kind and the raw metadata."""

    module: Any
    vocab: Any
    kind: str  # markov | tiny | hf (LMs); token | scalar (RMs)
    meta: dict
    vocab_size: int


def _load_checkpoint(path, fmt: str, what: str) -> dict:
    io.require_file(path)
    obj = io.load_torch(path)
    if not isinstance(obj, dict) or obj.get("format") != fmt:
        raise InputError(f"{path}: not a paperkit {what} checkpoint (no '{fmt}' format marker); write one with "
                         f"{'rgtg-toy' if what == 'LM' else 'rgtg-train-rm'} or give a local HF model directory")
    return obj


def _tiny(config: dict, state: dict, path) -> TinyLM:
    try:
        net = TinyLM(**config)
        net.load_state_dict(state)
    except (TypeError, RuntimeError, KeyError) as exc:
        raise InputError(f"{path}: weights do not match their config ({str(exc).splitlines()[0][:120]})") from None
    return net.eval()


def _vocab_size(module) -> int:
    if isinstance(module, MarkovLM):
        return module.log_trans.shape[1]
    if isinstance(module, ScalarRM):
        return module.body.tok.num_embeddings
    if isinstance(module, TinyLM):
        return module.head.out_features
    return module.hf.config.vocab_size


def load_lm(path) -> Loaded:
    """``LM.pt`` (toy Markov chain or our transformer) or a local HF causal-LM directory."""
    path = Path(path)
    if path.is_dir():
        module = load_hf_causal_lm(path)
        return Loaded(module, HFVocab(path), "hf", {}, _vocab_size(module))
    obj = _load_checkpoint(path, LM_FORMAT, "LM")
    vocab = make_vocab(obj["vocab"], obj.get("vocab_kind", "word"))
    if obj.get("arch") == "markov":
        module = MarkovLM(obj["log_trans"])
    else:
        module = _tiny(obj["config"], obj["state"], path)
    return Loaded(module, vocab, obj.get("arch", "tiny"), obj, _vocab_size(module))


def load_rm(path) -> Loaded:
    """``RM.pt`` from rgtg-train-rm (token-level or scalar head), or a local HF causal-LM directory (token-level)."""
    path = Path(path)
    if path.is_dir():
        module = load_hf_causal_lm(path)
        return Loaded(module, HFVocab(path), "token", {"loss": "hf"}, _vocab_size(module))
    obj = _load_checkpoint(path, RM_FORMAT, "RM")
    net = _tiny(obj["config"], obj["state"], path) if obj["head"] == "token" else None
    if obj["head"] == "scalar":
        body = TinyLM(**obj["config"])
        net = ScalarRM(body)
        try:
            net.load_state_dict(obj["state"])
        except RuntimeError as exc:
            raise InputError(f"{path}: weights do not match their config ({str(exc).splitlines()[0][:120]})") from None
        net.eval()
    return Loaded(net, make_vocab(obj["vocab"], obj.get("vocab_kind", "word")), obj["head"], obj, _vocab_size(net))


def save_markov_lm(path, log_trans, log_init, vocab: WordVocab) -> None:
    io.save_torch(path, {"format": LM_FORMAT, "arch": "markov", "vocab": vocab.tokens, "vocab_kind": vocab.kind,
                         "log_trans": torch.as_tensor(log_trans, dtype=torch.float32),
                         "log_init": torch.as_tensor(log_init, dtype=torch.float32)})


def save_tiny_lm(path, net: TinyLM, vocab: WordVocab, metrics: dict) -> None:
    io.save_torch(path, {"format": LM_FORMAT, "arch": "tiny", "vocab": vocab.tokens, "vocab_kind": vocab.kind,
                         "config": dict(net.config), "state": net.state_dict(), "metrics": dict(metrics)})


def save_rm(path, net, *, head: str, loss: str, vocab: WordVocab, metrics: dict) -> None:
    body = net.body if head == "scalar" else net
    io.save_torch(path, {"format": RM_FORMAT, "head": head, "loss": loss, "vocab": vocab.tokens,
                         "vocab_kind": vocab.kind, "config": dict(body.config), "state": net.state_dict(),
                         "metrics": dict(metrics)})


def check_same_vocab(lm: Loaded, rm: Loaded, lm_path, rm_path) -> None:
    if lm.vocab_size != rm.vocab_size:
        raise InputError(f"{rm_path}: the RM's vocabulary has {rm.vocab_size} tokens but the LM's ({lm_path}) has "
                         f"{lm.vocab_size}; FaRMA and ARGS need an RM that shares the LM's vocabulary")
    if isinstance(lm.vocab, WordVocab) and isinstance(rm.vocab, WordVocab) and (lm.vocab.tokens, lm.vocab.kind) != \
            (rm.vocab.tokens, rm.vocab.kind):
        raise InputError(f"{rm_path}: the RM's vocabulary differs from the LM's ({lm_path}) although both have "
                         f"{lm.vocab_size} tokens")


# ------------------------------------------------------------------------------------------- JSONL inputs
def _finite(x) -> bool:
    """A JSON number that is a finite float (not a bool, NaN, inf, or an integer beyond float range)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def _rows(path, fields: tuple[str, ...], what: str) -> list[tuple[str, dict]]:
    """(where, row) per JSON line: ``where`` names the file and its 1-based line, blank lines counted, as the
    rest of paperkit's errors do."""
    io.require_file(path)
    with io.text_reader(path) as f:
        lines = f.readlines()
    rows = io.parse_jsonl_stream(lines, io.display_name(path))
    if not rows:
        raise InputError(f"{path}: no {what} (the file is empty)")
    numbers = [n for n, line in enumerate(lines, start=1) if line.strip()]  # parse_jsonl_stream skips blank lines
    out = []
    for n, r in zip(numbers, rows, strict=True):
        where = f"{path}: line {n}"
        if not isinstance(r, dict):
            raise InputError(f"{where} is not a JSON object")
        for f in fields:
            if not isinstance(r.get(f), str):
                raise InputError(f"{where} has no '{f}' string (each line needs {', '.join(fields)})")
        out.append((where, r))
    return out


def read_prompts(path, vocab) -> list[list[int]]:
    out = []
    for where, r in _rows(path, ("prompt",), "prompts"):
        ids = vocab.encode(r["prompt"], where)
        if not ids:
            raise InputError(f"{where} has an empty prompt")
        out.append(ids)
    return out


def read_pairs(path, vocab) -> tuple[Seqs, Seqs]:
    """prompt + chosen and prompt + rejected, as token sequences."""
    chosen, rejected = [], []
    for where, r in _rows(path, ("prompt", "chosen", "rejected"), "pairs"):
        p = vocab.encode(r["prompt"], where)
        c, j = p + vocab.encode(r["chosen"], where), p + vocab.encode(r["rejected"], where)
        if c == j:
            raise InputError(f"{where}: chosen and rejected are identical; a preference pair needs two responses")
        if min(len(c), len(j)) < 2:
            raise InputError(f"{where}: prompt + response must have at least 2 tokens")
        chosen.append(c)
        rejected.append(j)
    return Seqs.from_lists(chosen), Seqs.from_lists(rejected)


def read_sequences(path, vocab, *, reward: bool = False) -> tuple[Seqs, np.ndarray | None]:
    """prompt + response rows (prefixes; with ``reward``, pi_ref rollouts and their rewards)."""
    seqs, rewards = [], []
    for where, r in _rows(path, ("prompt", "response"), "sequences"):
        s = vocab.encode(r["prompt"], where) + vocab.encode(r["response"], where)
        if len(s) < 2:
            raise InputError(f"{where}: prompt + response must have at least 2 tokens")
        seqs.append(s)
        if reward:
            v = r.get("reward")
            if not _finite(v):
                raise InputError(f"{where}: 'reward' must be a finite number, got {v!r}")
            rewards.append(float(v))
    return Seqs.from_lists(seqs), (np.array(rewards) if reward else None)


def read_text(path) -> str:
    """A UTF-8 text file (the char-level LM's corpus)."""
    with io.text_reader(path) as f:
        text = f.read()
    if len(text) < 2:
        raise InputError(f"{path}: the text is empty (a character LM needs at least 2 characters)")
    return text


def builtin_text(name: str) -> dict:
    """A text shipped with paperkit: ``shakespeare`` (the first ~100 KB of tinyshakespeare; public domain)."""
    from importlib import resources

    if name != "shakespeare":
        raise UsageError(f"--corpus {name!r}: the shipped corpus is 'shakespeare'")
    return json.loads(resources.files(__package__).joinpath("shakespeare.json").read_text(encoding="utf-8"))


def read_true_reward(path) -> dict:
    """reward.json of rgtg-toy: vocabulary, lexicon weights and rewarded bigrams."""
    io.require_file(path)
    obj = io.read_json(path)
    if not isinstance(obj, dict) or obj.get("kind") != "toy-lexicon-bigram":
        raise UsageError(f"{path}: not a toy reward spec (rgtg-toy's reward.json); give an RM.pt to --scorer")
    # the scores index these arrays by token id: a short lexicon or a bad pair crashed, NaN gave NaN scores,
    # and a negative index silently rewarded another token
    vocab = obj.get("vocab")
    if not isinstance(vocab, list) or not vocab or not all(isinstance(t, str) for t in vocab):
        raise InputError(f"{path}: vocab must be a non-empty list of token strings")
    v = len(vocab)
    lexicon = obj.get("lexicon")
    if not isinstance(lexicon, list) or len(lexicon) != v:
        got = f"has {len(lexicon)} weights" if isinstance(lexicon, list) else f"is {type(lexicon).__name__}"
        raise InputError(f"{path}: lexicon {got}; expected a list of {v} numbers, one per vocab token")
    for i, x in enumerate(lexicon):
        if not _finite(x):
            raise InputError(f"{path}: lexicon[{i}] = {repr(x)[:60]}; expected a finite number")
    bigrams = obj.get("bigrams")
    if not isinstance(bigrams, list):
        raise InputError(f"{path}: bigrams must be a list of [a, b] token-index pairs")
    for i, pair in enumerate(bigrams):
        if not (isinstance(pair, list) and len(pair) == 2
                and all(isinstance(a, int) and not isinstance(a, bool) and 0 <= a < v for a in pair)):
            raise InputError(f"{path}: bigrams[{i}] = {repr(pair)[:60]}; expected a pair [a, b] of token indices in [0, {v})")
    return obj
