"""Instances for prompt-aware model selection (Hu, Leung & Farnia, ICML 2025, Section 6 and the
offline substitutes of the paperkit spec): the switching simulator (prompt types as clusters, the
best model depends on the type), the null instance of the official script (i.i.d. uniform scores),
and user data — contexts ``.npy`` + scores ``.npy`` (G×N×S), a long CSV (prompt_id, model, sample,
score) or JSONL records (prompt, model, score or passed) whose texts are embedded offline.

An :class:`Instance` holds N prompts (contexts N×d), G models and for every (model, prompt) cell the
stored score samples (G×N×S, NaN-padded where a cell has fewer samples). Replay draws one stored
sample per round; a synthetic instance may instead add fresh Gaussian noise to the cell's mean.
Models and prompt types may join mid-stream (``arm_start``, ``type_start``: the first round each is
available).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from paperkit.core.errors import InputError, UsageError

MAX_LISTED = 5  # missing cells listed in an error message


@dataclass(frozen=True)
class Instance:
    name: str
    contexts: np.ndarray            # N×d
    samples: np.ndarray             # G×N×S, NaN where a cell has fewer than S samples
    models: tuple[str, ...]
    types: np.ndarray | None = None  # N prompt-type labels (ints), when known
    type_names: tuple[str, ...] = ()
    noise_sd: float | None = None    # synthetic: score = mean + N(0, noise_sd²), clipped to [−1, 1]
    arm_start: np.ndarray | None = None   # G first rounds
    type_start: np.ndarray | None = None  # one first round per type
    prompts: tuple[str, ...] = ()
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def n_models(self) -> int:
        return self.samples.shape[0]

    @property
    def n_prompts(self) -> int:
        return self.contexts.shape[0]

    @property
    def dim(self) -> int:
        return self.contexts.shape[1]

    @property
    def counts(self) -> np.ndarray:
        return np.sum(~np.isnan(self.samples), axis=2)

    @property
    def means(self) -> np.ndarray:
        """s̄_g(y): the mean stored score of each (model, prompt) cell, G×N."""
        return np.nanmean(self.samples, axis=2)

    def starts(self) -> np.ndarray:
        return np.zeros(self.n_models, dtype=np.int64) if self.arm_start is None else np.asarray(self.arm_start)

    def prompt_start(self) -> np.ndarray:
        """The first round each prompt may be drawn."""
        if self.type_start is None or self.types is None:
            return np.zeros(self.n_prompts, dtype=np.int64)
        return np.asarray(self.type_start)[self.types]

    def best_fixed_arm(self) -> int:
        """The one-arm oracle: the model present from round 0 with the best mean over the prompts."""
        initial = np.flatnonzero(self.starts() == 0)
        avg = self.means[initial].mean(axis=1)
        return int(initial[int(np.argmax(avg))])

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "models": list(self.models), "prompts": self.n_prompts, "dim": self.dim,
                "samples_per_cell": int(self.samples.shape[2]), "types": len(self.type_names) or None,
                "arm_start": None if self.arm_start is None else [int(v) for v in self.arm_start],
                "type_start": None if self.type_start is None else [int(v) for v in self.type_start],
                **({"provenance": self.provenance} if self.provenance else {})}


def check_instance(inst: Instance, source: str, *, rescale: bool = False) -> Instance:
    """Shapes, finiteness, score range [−1, 1] (or rescaled to [0, 1] with ``rescale``), ≥ 2 models."""
    if inst.contexts.ndim != 2 or inst.contexts.shape[0] == 0 or inst.contexts.shape[1] == 0:
        raise InputError(f"{source}: contexts have shape {inst.contexts.shape}; expected N×d with N, d ≥ 1")
    if not np.all(np.isfinite(inst.contexts)):
        bad = np.argwhere(~np.isfinite(inst.contexts))[0]
        raise InputError(f"{source}: contexts hold NaN or inf (first at row {bad[0]}); expected finite numbers")
    G, N = inst.samples.shape[:2]
    if G < 2:
        raise InputError(f"{source}: {G} model(s); expected at least 2 models to select from")
    if N != inst.n_prompts:
        raise InputError(f"{source}: scores cover {N} prompts but the contexts have {inst.n_prompts} rows; "
                         "expected the same prompt count")
    counts = inst.counts
    if np.any(counts == 0):
        g, i = np.argwhere(counts == 0)[0]
        raise InputError(f"{source}: model '{inst.models[g]}' has no score for prompt {i}")
    finite = inst.samples[~np.isnan(inst.samples)]
    if not np.all(np.isfinite(finite)):
        raise InputError(f"{source}: scores hold inf; expected finite numbers")
    lo, hi = float(finite.min()), float(finite.max())
    if lo < -1.0 or hi > 1.0:
        if not rescale:
            raise InputError(f"{source}: scores range over [{lo:g}, {hi:g}], outside [-1, 1]; rescale them or "
                             "pass --rescale (maps the range onto [0, 1])")
        span = hi - lo
        inst = replace(inst, samples=(inst.samples - lo) / span if span > 0 else inst.samples * 0.0,
                       provenance={**inst.provenance, "rescaled_from": [lo, hi]})
    return inst


# ------------------------------------------------------------------------------------- synthetic
def switching_means(types: int, models: int, *, base: float = 0.5, best: float = 0.75,
                    bonus0: float = 0.05) -> np.ndarray:
    """G×types mean scores: ``base`` everywhere, ``best`` for model (type mod G) on each type, plus
    ``bonus0`` for model 0 (so model 0 is the best single model)."""
    m = np.full((models, types), base)
    for k in range(types):
        m[k % models, k] = best
    m[0] += bonus0
    return m


def make_switching(rng: np.random.Generator, *, types: int = 4, dim: int = 16, models: int = 3, prompts: int = 1000,
                   spread: float = 0.3, noise: float = 0.1, add_model: bool = False) -> Instance:
    """The switching simulator: type centres c_k ~ N(0, I_d), prompt contexts c_k + spread·N(0, I_d),
    mean scores from :func:`switching_means`, score noise sd ``noise``. With ``add_model``, one more
    model (listed last) scores 0.9 on the last type and ``base`` elsewhere: once it joins, it is the
    best model on that type."""
    if types < 1 or models < 2 or prompts < 1 or dim < 1:
        raise UsageError("switching instance: expected types ≥ 1, models ≥ 2, prompts ≥ 1 and dim ≥ 1")
    centres = rng.standard_normal((types, dim))
    labels = rng.integers(types, size=prompts)
    X = centres[labels] + spread * rng.standard_normal((prompts, dim))
    m = switching_means(types, models)
    names = [f"model{g}" for g in range(models)]
    if add_model:
        extra = np.full((1, types), 0.5)
        extra[0, types - 1] = 0.9
        m = np.vstack([m, extra])
        names.append(f"model{models}")
    samples = m[:, labels][:, :, None]
    return Instance("switching", X, samples, tuple(names), types=labels,
                    type_names=tuple(f"type{k}" for k in range(types)), noise_sd=float(noise))


def make_null(rng: np.random.Generator, *, models: int = 5, prompts: int = 1000, dim: int = 512,
              samples: int = 5) -> Instance:
    """The official script's setup: random contexts (rows N(0, I)/sqrt(d)), ``samples`` i.i.d.
    uniform [0, 1] scores per (model, prompt): no model is better on any prompt type."""
    if models < 2 or prompts < 1 or dim < 1 or samples < 1:
        raise UsageError("null instance: expected models ≥ 2 and prompts, dim, samples ≥ 1")
    X = rng.standard_normal((prompts, dim)) / math.sqrt(dim)
    S = rng.uniform(0.0, 1.0, (models, prompts, samples))
    return Instance("null", X, S, tuple(f"model{g}" for g in range(models)))


def draw_samples(inst: Instance, rng: np.random.Generator, n_samples: int) -> Instance:
    """A stored-sample copy of a synthetic instance (noise drawn once), for writing to files."""
    if inst.noise_sd is None:
        return inst
    means = inst.means
    S = means[:, :, None] + inst.noise_sd * rng.standard_normal(means.shape + (n_samples,))
    return replace(inst, samples=np.clip(S, -1.0, 1.0), noise_sd=None)


# ------------------------------------------------------------------------------------- user files
def from_arrays(contexts_path: str, scores_path: str, *, rescale: bool = False) -> Instance:
    """Contexts (N×d) and scores (G×N×S, or G×N for one sample) from .npy/.npz/.csv files."""
    from paperkit.core.readers import read_numeric

    X = read_numeric(contexts_path, "contexts", ndim=2)
    S = read_numeric(scores_path, "scores", ndim=(2, 3), finite=False)
    if S.ndim == 2:
        S = S[:, :, None]
    if np.any(np.isnan(S)):
        g, i, s = np.argwhere(np.isnan(S))[0]
        raise InputError(f"{scores_path}: scores hold NaN (first at model {g}, prompt {i}, sample {s}); "
                         "expected finite numbers")
    inst = Instance("files", X, S, tuple(f"model{g}" for g in range(S.shape[0])),
                    provenance={"contexts": str(contexts_path), "scores": str(scores_path)})
    return check_instance(inst, f"{contexts_path} + {scores_path}", rescale=rescale)


def _key(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip()


def _cells(source: str, prompt_ids: Sequence[str], models: Sequence[str], scores: np.ndarray,
           ) -> tuple[list[str], list[str], np.ndarray]:
    """Group long-format rows into a G×N×S sample array (order of first appearance)."""
    p_order = list(dict.fromkeys(prompt_ids))
    m_order = list(dict.fromkeys(models))
    p_index = {p: i for i, p in enumerate(p_order)}
    m_index = {m: g for g, m in enumerate(m_order)}
    cells: dict[tuple[int, int], list[float]] = {}
    for p, m, s in zip(prompt_ids, models, scores, strict=True):
        cells.setdefault((m_index[m], p_index[p]), []).append(float(s))
    missing = [(m, p) for p in p_order for m in m_order if (m_index[m], p_index[p]) not in cells]
    if missing:
        shown = ", ".join(f"(prompt {p!r}, model {m!r})" for m, p in missing[:MAX_LISTED])
        more = f" and {len(missing) - MAX_LISTED} more" if len(missing) > MAX_LISTED else ""
        raise InputError(f"{source}: {len(missing)} (prompt, model) cell(s) have no score: {shown}{more}")
    S = np.full((len(m_order), len(p_order), max(len(v) for v in cells.values())), np.nan)
    for (g, i), vals in cells.items():
        S[g, i, : len(vals)] = vals
    return p_order, m_order, S


def read_long_csv(path: str) -> tuple[list[str], list[str], np.ndarray, dict[str, str]]:
    """(prompt ids, model names, G×N×S samples, prompt id → text from a ``prompt`` column if any)."""
    from paperkit.core.tables import read_table

    t = read_table(path)
    for col in ("prompt_id", "model", "score"):
        t.column(col)
    scores = t.numeric(["score"], finite=True)[:, 0]
    if not len(scores):
        raise InputError(f"{path}: no rows; expected prompt_id, model, sample, score rows")
    pids = [_key(v) for v in t.column("prompt_id")]
    models = [_key(v) for v in t.column("model")]
    texts: dict[str, str] = {}
    if t.has("prompt"):
        for row, (p, text) in enumerate(zip(pids, t.column("prompt"), strict=True), start=2):
            text = "" if text is None else str(text)
            if texts.setdefault(p, text) != text:
                raise InputError(f"{path}: line {row}: prompt_id {p!r} has two different prompt texts")
    p_order, m_order, S = _cells(path, pids, models, scores)
    return p_order, m_order, S, texts


def read_jsonl_records(path: str) -> tuple[list[str], list[str], np.ndarray]:
    """JSONL records ``{"prompt": text, "model": name, "score": x}`` (or ``"passed": true/false``, read
    as 1/0), one sample each; returns (prompt texts, model names, G×N×S samples)."""
    from paperkit.core.io import read_jsonl

    rows = read_jsonl(path)
    if not rows:
        raise InputError(f"{path}: no records; expected prompt, model and score (or passed) per line")
    prompts, models, scores = [], [], []
    for n, r in enumerate(rows, start=1):
        where = f"{path}: record {n}"
        if not isinstance(r, dict):
            raise InputError(f"{where}: expected a JSON object")
        if not isinstance(r.get("prompt"), str) or not r["prompt"].strip():
            raise InputError(f"{where}: 'prompt' must be a non-empty string")
        if not isinstance(r.get("model"), (str, int)) or isinstance(r.get("model"), bool):
            raise InputError(f"{where}: 'model' must be a string")
        if "score" in r:
            s = r["score"]
            if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s):
                raise InputError(f"{where}: 'score' must be a finite number, got {s!r}")
        elif "passed" in r:
            if not isinstance(r["passed"], bool):
                raise InputError(f"{where}: 'passed' must be true or false, got {r['passed']!r}")
            s = 1.0 if r["passed"] else 0.0
        else:
            raise InputError(f"{where}: needs 'score' (a number) or 'passed' (true/false)")
        prompts.append(r["prompt"])
        models.append(str(r["model"]))
        scores.append(float(s))
    p_order, m_order, S = _cells(path, prompts, models, np.asarray(scores))
    return p_order, m_order, S


def read_lines(path: str, what: str = "texts") -> list[str]:
    """Non-empty lines of a UTF-8 text file ('-' for stdin)."""
    from paperkit.core.io import text_reader

    try:
        with text_reader(path) as f:
            lines = [ln.rstrip("\r\n") for ln in f]
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text ({e.reason}); expected one {what[:-1]} per line") from None
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        raise InputError(f"{path}: no {what}; expected one per line")
    return lines


def from_long(source: str, p_order: list[str], m_order: list[str], S: np.ndarray, *,
              contexts: np.ndarray | None, texts: Sequence[str] | None, embed: Callable[[list[str]], np.ndarray] | None,
              rescale: bool = False, name: str = "files") -> Instance:
    """An instance from long-format cells plus the prompts' contexts: a given N×d array indexed by the
    (integer) prompt ids, or texts embedded with ``embed``."""
    if contexts is None:
        if texts is None or embed is None:
            raise UsageError(f"{source}: no contexts; give --contexts, a 'prompt' text column, or --texts")
        X = embed(list(texts))
    else:
        idx = []
        for p in p_order:
            if not p.lstrip("-").isdigit() or not 0 <= int(p) < len(contexts):
                raise InputError(f"{source}: prompt_id {p!r} is not a row of the contexts (0 to {len(contexts) - 1})")
            idx.append(int(p))
        X = contexts[idx]
    inst = Instance(name, np.asarray(X, dtype=np.float64), S, tuple(m_order),
                    prompts=tuple(texts) if texts is not None else (), provenance={"source": str(source)})
    return check_instance(inst, source, rescale=rescale)
