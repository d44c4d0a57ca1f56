"""Federated tasks that run offline: models, client shards, losses and evaluation.

* ``digits``: sklearn's bundled digits with a 64-32-10 MLP (d = 2,410), Dirichlet non-IID over labels.
* ``instruct``: a generated character-level instruction-following family (copy / reverse / add / sort /
  upper / count prompts) for a small causal transformer; one family per client group mimics the
  task split of Natural Instructions (Sec. 6 of the paper).
* ``jsonl:PATH``: user instruction records (``instruction``, ``input``, ``output``; ``category`` if present
  drives a Dirichlet split as for Dolly-15K), scored with Rouge-L on greedy generations.
* ``--model DIR``: any Hugging Face causal LM saved in a local folder, with its tokenizer or, when the
  folder has none, a byte-level one (ids 0–255, needs vocab_size ≥ 258).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from paperkit.core.errors import ConfigError, InputError
from paperkit.datasets import dirichlet_partition

TASKS = ("digits", "instruct")
FAMILIES = ("copy", "reverse", "add", "sort", "upper", "count")


# ----------------------------------------------------------------------------------------- the task
@dataclass
class Task:
    """What the federated loop needs from a task. Batches are tensors or tuples of tensors."""

    name: str
    make_model: Callable[[], nn.Module]
    client_sizes: list[int]
    sample_batch: Callable[[int, int, torch.Generator], Any]   # (client, batch size, generator)
    loss: Callable[[nn.Module, Any], torch.Tensor]
    evaluate: Callable[[nn.Module], dict[str, float]]
    final_metrics: Callable[[nn.Module], dict[str, float]] = field(default=lambda m: {})
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def n_clients(self) -> int:
        return len(self.client_sizes)


def _check_shards(parts: list[np.ndarray], what: str) -> None:
    empty = [i for i, p in enumerate(parts) if len(p) == 0]
    if empty:
        raise InputError(f"{what}: {len(empty)} of {len(parts)} clients would get no examples (e.g. client "
                         f"{empty[0]}); use fewer clients or more data")


def _seed_model(seed: int) -> None:
    torch.manual_seed(int(seed) & 0x7FFFFFFFFFFFFFFF)


# --------------------------------------------------------------------------------------------- digits
class MLP(nn.Module):
    def __init__(self, sizes: tuple[int, ...] = (64, 32, 10)):
        super().__init__()
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=False)):
            layers.append(nn.Linear(a, b))
            if i < len(sizes) - 2:
                layers.append(nn.ReLU())
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def digits_task(n_clients: int = 20, alpha: float | None = 0.5, seed: int = 0, hidden: int = 32,
                test_fraction: float = 0.25) -> Task:
    """Digits MLP (64-hidden-10); Dirichlet(alpha) label skew over clients (alpha=None: IID)."""
    from paperkit.datasets import load_bundled, train_test_indices

    data = load_bundled("digits")
    X = torch.tensor(data.X / 16.0, dtype=torch.float32)
    y = torch.tensor(data.y, dtype=torch.long)
    rng = np.random.default_rng(seed)
    tr, te = train_test_indices(len(y), test_fraction, rng, stratify=data.y)
    parts = _split(data.y[tr], n_clients, alpha, rng, "digits")
    shards = [(X[tr[p]], y[tr[p]]) for p in parts]
    Xte, yte = X[te], y[te]

    def sample(client: int, bs: int, gen: torch.Generator):
        Xc, yc = shards[client]
        idx = torch.randint(len(yc), (bs,), generator=gen)
        return Xc[idx], yc[idx]

    def loss(model: nn.Module, batch) -> torch.Tensor:
        dev = next(model.parameters()).device
        return nn.functional.cross_entropy(model(batch[0].to(dev)), batch[1].to(dev))

    @torch.no_grad()
    def evaluate(model: nn.Module) -> dict[str, float]:
        dev = next(model.parameters()).device
        logits, y = model(Xte.to(dev)), yte.to(dev)
        return {"test_loss": float(nn.functional.cross_entropy(logits, y)),
                "test_acc": float((logits.argmax(1) == y).float().mean())}

    def make():
        _seed_model(seed)
        return MLP((64, hidden, 10))

    return Task("digits", make, [len(p) for p in parts], sample, loss, evaluate,
                info={"n_train": len(tr), "n_test": len(te)})


def _split(labels: np.ndarray, n_clients: int, alpha: float | None, rng: np.random.Generator,
           what: str) -> list[np.ndarray]:
    if n_clients > len(labels):
        raise InputError(f"{what}: {n_clients} clients but only {len(labels)} training examples; every client "
                         "needs at least one (use fewer clients)")
    if alpha is None:
        parts = [np.sort(p) for p in np.array_split(rng.permutation(len(labels)), n_clients)]
    else:
        parts = dirichlet_partition(labels, n_clients, alpha, rng)
    _check_shards(parts, what)
    return parts


# ---------------------------------------------------------------------------- sequence (LM) machinery
class ByteTokenizer:
    """Bytes 0–255, then PAD=256 and EOS=257."""

    pad_id, eos_id, vocab_size = 256, 257, 258

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def decode(self, ids: list[int]) -> str:
        return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")


class CharTokenizer:
    """A fixed small alphabet for the generated tasks (keeps the embedding small)."""

    def __init__(self, alphabet: str):
        self.chars = alphabet
        self.index = {c: i for i, c in enumerate(alphabet)}
        self.pad_id, self.eos_id = len(alphabet), len(alphabet) + 1
        self.vocab_size = len(alphabet) + 2

    def encode(self, text: str) -> list[int]:
        return [self.index[c] for c in text]

    def decode(self, ids: list[int]) -> str:
        return "".join(self.chars[i] for i in ids if i < len(self.chars))


class HFTokenizer:
    def __init__(self, tok: Any, vocab_size: int):
        self.tok = tok
        self.eos_id = tok.eos_token_id if tok.eos_token_id is not None else vocab_size - 1
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else self.eos_id
        self.vocab_size = vocab_size

    def encode(self, text: str) -> list[int]:
        return list(self.tok.encode(text, add_special_tokens=False))

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids, skip_special_tokens=True)


class TinyCausalLM(nn.Module):
    """A small pre-norm causal transformer returning next-token logits."""

    def __init__(self, vocab_size: int, d_model: int = 64, n_layers: int = 2, n_heads: int = 4,
                 max_len: int = 64, ff_mult: int = 4):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(d_model, n_heads, ff_mult * d_model, dropout=0.0, batch_first=True,
                                       norm_first=True) for _ in range(n_layers)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)
        self.max_len = max_len

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        n = ids.shape[1]
        h = self.embed(ids) + self.pos(torch.arange(n, device=ids.device))
        mask = torch.triu(torch.full((n, n), float("-inf"), device=ids.device), diagonal=1)
        for layer in self.layers:
            h = layer(h, src_mask=mask, is_causal=True)
        return self.head(self.norm(h))


class HFWrapper(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=ids).logits


@dataclass
class SeqExample:
    prompt: list[int]
    target: list[int]   # ends with EOS
    group: int = 0
    reference: str = ""


def _pad_batch(examples: list[SeqExample], pad: int, max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and next-token labels (−100 outside the answer), trimmed from the left to max_len."""
    seqs = [(e.prompt + e.target)[-(max_len + 1):] for e in examples]
    n_ans = [min(len(e.target), len(s) - 1) for e, s in zip(examples, seqs, strict=False)]
    width = max(len(s) for s in seqs) - 1
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    labels = torch.full((len(seqs), width), -100, dtype=torch.long)
    for i, (s, a) in enumerate(zip(seqs, n_ans, strict=False)):
        ids[i, :len(s) - 1] = torch.tensor(s[:-1])
        labels[i, len(s) - 1 - a:len(s) - 1] = torch.tensor(s[len(s) - a:])
    return ids, labels


def lcs_length(a: list, b: list) -> int:
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def rouge_l(prediction: str, reference: str, *, unit: str = "word") -> float:
    """Rouge-L F1 (beta = 1) over words (lower-cased) or characters."""
    if unit == "char":
        p, r = list(prediction), list(reference)
    else:
        p, r = prediction.lower().split(), reference.lower().split()
    lcs = lcs_length(p, r)
    if lcs == 0:
        return 0.0
    prec, rec = lcs / len(p), lcs / len(r)
    return 2 * prec * rec / (prec + rec)


@torch.no_grad()
def greedy_generate(model: nn.Module, prompt: list[int], eos: int, max_new: int, max_len: int) -> list[int]:
    ids = list(prompt)
    out: list[int] = []
    for _ in range(max_new):
        x = torch.tensor([ids[-max_len:]], dtype=torch.long, device=next(model.parameters()).device)
        nxt = int(model(x)[0, -1].argmax())
        if nxt == eos:
            break
        out.append(nxt)
        ids.append(nxt)
    return out


def sequence_task(name: str, train: list[SeqExample], test: list[SeqExample], tokenizer: Any,
                  make_model: Callable[[], nn.Module], n_clients: int, alpha: float | None, seed: int,
                  max_len: int, rouge_unit: str, task_split: bool = False, n_generate: int = 64,
                  max_new: int = 16) -> Task:
    rng = np.random.default_rng(seed)
    groups = np.array([e.group for e in train])
    if task_split:
        # One family per client group: client c holds family c mod F (Natural Instructions' task split).
        fams = np.unique(groups)
        if n_clients > len(train):
            raise InputError(f"{name}: {n_clients} clients but only {len(train)} training examples")
        parts = []
        for c in range(n_clients):
            fam_idx = np.flatnonzero(groups == fams[c % len(fams)])
            holders = [cc for cc in range(n_clients) if cc % len(fams) == c % len(fams)]
            parts.append(np.array_split(fam_idx, len(holders))[holders.index(c)])
        _check_shards(parts, name)
    else:
        parts = _split(groups, n_clients, alpha, rng, name)
    pad = tokenizer.pad_id

    def sample(client: int, bs: int, gen: torch.Generator):
        idx = parts[client]
        pick = torch.randint(len(idx), (bs,), generator=gen).tolist()
        return _pad_batch([train[idx[i]] for i in pick], pad, max_len)

    def loss(model: nn.Module, batch) -> torch.Tensor:
        ids, labels = batch
        dev = next(model.parameters()).device
        logits = model(ids.to(dev))
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.to(dev).reshape(-1))

    @torch.no_grad()
    def evaluate(model: nn.Module) -> dict[str, float]:
        total, correct, count = 0.0, 0, 0
        dev = next(model.parameters()).device
        for i in range(0, len(test), 128):
            ids, labels = _pad_batch(test[i:i + 128], pad, max_len)
            logits = model(ids.to(dev))
            labels = labels.to(dev)
            m = labels != -100
            total += float(nn.functional.cross_entropy(logits[m], labels[m], reduction="sum"))
            correct += int((logits.argmax(-1)[m] == labels[m]).sum())
            count += int(m.sum())
        return {"test_loss": total / max(count, 1), "test_acc": correct / max(count, 1)}

    @torch.no_grad()
    def final(model: nn.Module) -> dict[str, float]:
        scores = []
        for e in test[:n_generate]:
            pred = tokenizer.decode(greedy_generate(model, e.prompt, tokenizer.eos_id, max_new, max_len))
            scores.append(rouge_l(pred, e.reference, unit=rouge_unit))
        return {"rouge_l": float(np.mean(scores)) if scores else float("nan"), "rouge_l_n": len(scores)}

    return Task(name, make_model, [len(p) for p in parts], sample, loss, evaluate, final,
                info={"n_train": len(train), "n_test": len(test), "vocab_size": tokenizer.vocab_size})


# ------------------------------------------------------------------------------- generated instructions
_LETTERS = "abcdefghij"
INSTRUCT_ALPHABET = _LETTERS + _LETTERS.upper() + "0123456789" + ":=+ "


def _family_example(fam: str, rng: np.random.Generator) -> tuple[str, str]:
    if fam == "add":
        a, b = int(rng.integers(0, 100)), int(rng.integers(0, 100))
        return f"{a}+{b}", str(a + b)
    n = int(rng.integers(2, 7))
    s = "".join(rng.choice(list(_LETTERS), n))
    return s, {"copy": s, "reverse": s[::-1], "sort": "".join(sorted(s)), "upper": s.upper(),
               "count": str(n)}[fam]


def instruct_examples(n: int, families: tuple[str, ...], rng: np.random.Generator) -> list[tuple[int, str, str]]:
    out = []
    for i in range(n):
        f = i % len(families)
        x, y = _family_example(families[f], rng)
        out.append((f, x, y))
    return out


def instruct_task(n_clients: int = 10, seed: int = 0, n_train: int = 3000, n_test: int = 300,
                  families: tuple[str, ...] = FAMILIES, d_model: int = 64, n_layers: int = 2,
                  task_split: bool = True, alpha: float | None = None, model_dir: str | None = None) -> Task:
    """The generated instruction family; prompts are '<family>:<input>=' and answers end with EOS."""
    bad = [f for f in families if f not in FAMILIES]
    if bad:
        raise ConfigError(f"unknown instruction family '{bad[0]}'; expected some of {', '.join(FAMILIES)}")
    rng = np.random.default_rng(seed)
    tag = {f: "ABCDEF"[FAMILIES.index(f)] for f in families}  # one-letter task tag in the prompt
    if model_dir is not None:
        tokenizer, make = load_hf_causal_lm(model_dir, seed)
        max_len = 48
    else:
        tokenizer = CharTokenizer(INSTRUCT_ALPHABET)
        max_len = 32

        def make():
            _seed_model(seed)
            return TinyCausalLM(tokenizer.vocab_size, d_model=d_model, n_layers=n_layers, max_len=max_len)

    def encode(items):
        return [SeqExample(tokenizer.encode(f"{tag[families[f]]}:{x}="), tokenizer.encode(y) + [tokenizer.eos_id],
                           f, y) for f, x, y in items]

    train = encode(instruct_examples(n_train, families, rng))
    test = encode(instruct_examples(n_test, families, rng))
    return sequence_task("instruct", train, test, tokenizer, make, n_clients, alpha, seed, max_len, "char",
                         task_split=task_split and alpha is None, max_new=8)


# ---------------------------------------------------------------------------------- user JSONL records
REQUIRED_FIELDS = ("instruction", "output")


def read_instruction_jsonl(path: str | Path) -> list[dict[str, str]]:
    """Records with 'instruction', 'output' and optional 'input' / 'category' (Dolly / NI style)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: no such file")
    rows = []
    with open(p, "rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(f"{path}: line {n} is not UTF-8 text (byte 0x{raw[e.start]:02x} at column "
                                 f"{e.start + 1}); expected UTF-8 JSON lines") from None
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"{path}: line {n} is not valid JSON ({e.msg})") from None
            if not isinstance(rec, dict):
                raise InputError(f"{path}: line {n} is not a JSON object")
            missing = [k for k in REQUIRED_FIELDS if not isinstance(rec.get(k), str)]
            if missing:
                raise InputError(f"{path}: line {n} lacks the text field '{missing[0]}'; expected 'instruction', "
                                 "'output' and optionally 'input' and 'category'")
            rows.append({"instruction": rec["instruction"], "input": str(rec.get("input") or ""),
                         "output": rec["output"], "category": str(rec.get("category") or "")})
    if len(rows) < 2:
        raise InputError(f"{path}: {len(rows)} record(s); need at least 2 (some are held out for evaluation)")
    return rows


def format_prompt(rec: dict[str, str]) -> str:
    return f"{rec['instruction']}\n{rec['input']}\n" if rec["input"] else f"{rec['instruction']}\n"


def jsonl_task(path: str, n_clients: int = 10, alpha: float | None = 0.5, seed: int = 0,
               model_dir: str | None = None, test_fraction: float = 0.1, d_model: int = 64,
               n_layers: int = 2, max_len: int = 128) -> Task:
    rows = read_instruction_jsonl(path)
    if model_dir is not None:
        tokenizer, make = load_hf_causal_lm(model_dir, seed)
    else:
        tokenizer = ByteTokenizer()

        def make():
            _seed_model(seed)
            return TinyCausalLM(tokenizer.vocab_size, d_model=d_model, n_layers=n_layers, max_len=max_len)

    cats = sorted({r["category"] for r in rows})
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(rows))
    n_test = max(1, int(round(test_fraction * len(rows))))
    ex = [SeqExample(tokenizer.encode(format_prompt(r)), tokenizer.encode(r["output"]) + [tokenizer.eos_id],
                     cats.index(r["category"]), r["output"]) for r in rows]
    test = [ex[i] for i in perm[:n_test]]
    train = [ex[i] for i in perm[n_test:]]
    split_alpha = alpha if len(cats) > 1 else None
    return sequence_task(f"jsonl:{Path(path).name}", train, test, tokenizer, make, n_clients, split_alpha, seed,
                         max_len, "word", max_new=32)


# ---------------------------------------------------------------------------- Hugging Face causal LMs
def load_hf_causal_lm(model_dir: str, seed: int) -> tuple[Any, Callable[[], nn.Module]]:
    """(tokenizer, factory) for a causal LM in a local folder; nothing is downloaded."""
    p = Path(model_dir)
    if not (p / "config.json").is_file():
        raise InputError(f"{model_dir}: not a Hugging Face model folder (no config.json)")
    try:
        import transformers
    except ImportError:
        raise ConfigError("--model needs the 'transformers' package (pip install 'paperkit-icml25[hf]')") from None
    from transformers import AutoConfig, AutoModelForCausalLM

    try:
        config = AutoConfig.from_pretrained(str(p), local_files_only=True)
    except Exception as e:  # noqa: BLE001 - transformers raises many kinds for a bad folder
        raise InputError(f"{model_dir}: cannot read the model config ({str(e).splitlines()[0]})") from None
    if type(config) not in AutoModelForCausalLM._model_mapping:
        raise InputError(f"{model_dir}: model type '{config.model_type}' is not a causal language model")
    vocab = int(getattr(config, "vocab_size", 0))
    has_tok = any((p / f).exists() for f in ("tokenizer.json", "tokenizer_config.json", "vocab.json"))
    if has_tok:
        tok = HFTokenizer(transformers.AutoTokenizer.from_pretrained(str(p), local_files_only=True), vocab)
    else:
        if vocab < ByteTokenizer.vocab_size:
            raise InputError(f"{model_dir}: no tokenizer files and vocab_size {vocab} < 258 (byte-level fallback)")
        tok = ByteTokenizer()

    def make() -> nn.Module:
        _seed_model(seed)
        try:
            m = AutoModelForCausalLM.from_pretrained(str(p), local_files_only=True, torch_dtype=torch.float32)
        except Exception as e:  # noqa: BLE001
            raise InputError(f"{model_dir}: cannot load the weights ({str(e).splitlines()[0]})") from None
        return HFWrapper(m)

    return tok, make


def build_task(task: str, *, n_clients: int, alpha: float | None, seed: int, model_dir: str | None = None,
               d_model: int = 64, n_layers: int = 2) -> Task:
    """'digits', 'instruct' or 'jsonl:PATH' (a JSONL path alone works too)."""
    if task == "digits":
        if model_dir is not None:
            raise ConfigError("--model applies to the instruct and JSONL tasks, not digits")
        return digits_task(n_clients, alpha, seed)
    if task == "instruct":
        return instruct_task(n_clients, seed, d_model=d_model, n_layers=n_layers, model_dir=model_dir,
                             alpha=None)
    path = task[len("jsonl:"):] if task.startswith("jsonl:") else task
    if path.endswith(".jsonl") or task.startswith("jsonl:"):
        return jsonl_task(path, n_clients, alpha, seed, model_dir=model_dir, d_model=d_model, n_layers=n_layers)
    raise ConfigError(f"task '{task}' is unknown; expected digits, instruct or jsonl:PATH")


def param_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
