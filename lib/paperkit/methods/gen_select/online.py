"""The online router of ``gen-select-online``: JSON lines in, picks out, scores fed back; the
learner's state lives in a file so a generation loop can stop and resume.

Protocol (one JSON object per line):
* ``{"prompt": "text"}`` or ``{"context": [floats]}``, optional ``"id"`` → ``{"id", "arm", "model"}``;
* ``{"id": ..., "score": s}`` (or ``"passed": true/false``) → the pick of that id learns from s (no output);
* ``{"add_model": "name"}`` → ``{"model", "arm"}`` (the model joins with empty statistics).

The state file (``.npz``) keeps the settings, the model names, the learning history (contexts, arms,
scores), the open picks and the learner's random-generator state; loading rebuilds the learner by
replaying the history (the same operations in the same order, so the same numbers).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from paperkit.core.errors import InputError, UsageError
from paperkit.methods.gen_select.kernels import Kernel
from paperkit.methods.gen_select.learners import LEARNERS, Learner, LearnerSettings, eta_formula, make_learner
from paperkit.methods.gen_select.simulate import learner_seed

STATE_VERSION = 1


@dataclass(frozen=True)
class OnlineSettings(LearnerSettings):
    learner: str = "pak-ucb"
    models: tuple[str, ...] | None = None
    horizon: int = 10_000
    seed: int = 0
    save_every: int = 1


class Router:
    def __init__(self, settings: OnlineSettings, models: list[str]) -> None:
        from paperkit.methods.gen_select.run import parse_eta

        if settings.learner not in LEARNERS or settings.learner == "oracle":
            raise UsageError(f"--learner {settings.learner!r}: expected one of "
                             f"{', '.join(n for n in LEARNERS if n != 'oracle')} (the oracle needs hindsight)")
        if len(models) < 2 or len(set(models)) != len(models):
            raise UsageError("--models: expected at least 2 distinct model names")
        self.s = settings
        self.kernel = Kernel(settings.kernel, bandwidth=settings.bandwidth, gamma=settings.gamma,
                             degree=settings.poly_degree)
        eta = parse_eta(settings.eta)
        self.eta = eta_formula(settings.learner, len(models), settings.horizon, settings.delta) if eta is None else eta
        self.models = list(models)
        self.n_initial = len(models)
        self.added: list[tuple[int, str]] = []  # (history length when added, name)
        self.learner: Learner | None = None
        self.dim: int | None = None
        self.rng = np.random.default_rng(learner_seed(settings.seed, 0, settings.learner))
        self.hist_x: list[np.ndarray] = []
        self.hist_arm: list[int] = []
        self.hist_score: list[float] = []
        self.pending: dict[str, tuple[int, list[float]]] = {}
        self.next_id = 0

    def _ensure(self, dim: int) -> Learner:
        if self.learner is None:
            self.dim = dim
            self.learner = make_learner(self.s.learner, self.n_initial, dim, self.rng, kernel=self.kernel,
                                        alpha=self.s.alpha, eta=self.eta, rff_dim=self.s.rff_dim,
                                        rff_variant=self.s.rff_variant)
            for _ in self.added:
                self.learner.add_arm()
        return self.learner

    def route(self, x: np.ndarray, ident: str | None) -> dict[str, Any]:
        if self.dim is not None and len(x) != self.dim:
            raise InputError(f"context has {len(x)} values; expected {self.dim} (the first context's size)")
        learner = self._ensure(len(x))
        if ident is None:
            ident = f"p{self.next_id}"
        if ident in self.pending:
            raise InputError(f"id {ident!r} is already waiting for its score")
        self.next_id += 1
        arm = learner.select(x)
        self.pending[ident] = (arm, [float(v) for v in x])
        return {"id": ident, "arm": arm, "model": self.models[arm]}

    def feedback(self, ident: str, score: float) -> None:
        if ident not in self.pending:
            raise InputError(f"score for unknown id {ident!r} (no open pick with that id)")
        arm, x = self.pending.pop(ident)
        xa = np.asarray(x)
        self.learner.update(xa, arm, score)
        self.hist_x.append(xa)
        self.hist_arm.append(arm)
        self.hist_score.append(score)

    def add_model(self, name: str) -> dict[str, Any]:
        if name in self.models:
            raise InputError(f"model {name!r} is already routed to")
        self.models.append(name)
        self.added.append((len(self.hist_arm), name))
        if self.learner is not None:
            self.learner.add_arm()
        return {"model": name, "arm": len(self.models) - 1}

    # -- state ------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        from paperkit.core.io import write_arrays

        meta = {"version": STATE_VERSION, "settings": {**asdict(self.s), "models": list(self.models[: self.n_initial])},
                "added": self.added, "dim": self.dim, "next_id": self.next_id,
                "pending": {k: [a, x] for k, (a, x) in self.pending.items()},
                "rng": self.rng.bit_generator.state}
        d = self.dim or 0
        write_arrays(path, {"meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                            "x": np.asarray(self.hist_x, dtype=np.float64).reshape(len(self.hist_x), d),
                            "arm": np.asarray(self.hist_arm, dtype=np.int64),
                            "score": np.asarray(self.hist_score, dtype=np.float64)})

    @classmethod
    def load(cls, path: str | os.PathLike) -> Router:
        from paperkit.core.io import read_arrays

        try:
            arrays = read_arrays(path)
            meta = json.loads(bytes(arrays["meta"].astype(np.uint8)).decode())
            if meta.get("version") != STATE_VERSION:
                raise ValueError("unknown state version")
            raw = dict(meta["settings"])
            raw["models"] = tuple(raw["models"])
            s = OnlineSettings(**raw)
        except (KeyError, ValueError, TypeError, UnicodeDecodeError) as e:
            raise InputError(f"{path}: not a gen-select-online state file ({e})") from None
        r = cls(s, list(s.models))
        added = [(int(n), str(name)) for n, name in meta["added"]]
        if meta["dim"] is not None:
            learner = r._ensure(int(meta["dim"]))
            X, arms, scores = arrays["x"], arrays["arm"], arrays["score"]
            # replay, adding each model when it was added
            todo = list(added)
            for k in range(len(arms)):
                while todo and todo[0][0] <= k:
                    r.models.append(todo.pop(0)[1])
                    learner.add_arm()
                learner.update(X[k], int(arms[k]), float(scores[k]))
                r.hist_x.append(X[k])
                r.hist_arm.append(int(arms[k]))
                r.hist_score.append(float(scores[k]))
            for _, name in todo:
                r.models.append(name)
                learner.add_arm()
            r.added = added
        else:
            r.added = added
            r.models += [name for _, name in added]
        r.next_id = int(meta["next_id"])
        r.pending = {str(k): (int(a), list(x)) for k, (a, x) in meta["pending"].items()}
        r.rng.bit_generator.state = meta["rng"]
        return r


def _ident(v: Any, where: str) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise InputError(f"{where}: 'id' must be a string or an integer")
    return str(v)


def serve(router: Router, lines: Iterable[str], emit: Callable[[str], None], *,
          embed: Callable[[list[str]], np.ndarray] | None, save: Callable[[], None], save_every: int = 1,
          name: str = "stdin") -> int:
    """Handle each line; returns the number of lines handled. The state is saved every ``save_every``
    handled lines, at the end, and before an error is raised for a bad line."""
    handled = 0
    try:
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{name} line {n}"
            try:
                msg = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"{where}: not JSON ({e.msg})") from None
            if not isinstance(msg, dict):
                raise InputError(f"{where}: expected a JSON object")
            out = _handle(router, msg, where, embed)
            if out is not None:
                emit(json.dumps(out))
            handled += 1
            if handled % save_every == 0:
                save()
    finally:
        save()
    return handled


def _handle(router: Router, msg: dict[str, Any], where: str, embed: Any) -> dict[str, Any] | None:
    try:
        if "add_model" in msg:
            name = msg["add_model"]
            if not isinstance(name, str) or not name.strip():
                raise InputError("'add_model' must be a non-empty model name")
            return router.add_model(name)
        if "score" in msg or "passed" in msg:
            ident = _ident(msg.get("id"), where)
            if ident is None:
                raise InputError("a score needs the 'id' of its pick")
            if "score" in msg:
                s = msg["score"]
                if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s) or not -1 <= s <= 1:
                    raise InputError(f"'score' must be a finite number in [-1, 1], got {s!r}")
            else:
                if not isinstance(msg["passed"], bool):
                    raise InputError(f"'passed' must be true or false, got {msg['passed']!r}")
                s = 1.0 if msg["passed"] else 0.0
            router.feedback(ident, float(s))
            return None
        ident = _ident(msg.get("id"), where)
        if "context" in msg:
            x = msg["context"]
            if not isinstance(x, list) or not x or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in x):
                raise InputError("'context' must be a non-empty list of finite numbers")
            return router.route(np.asarray(x, dtype=np.float64), ident)
        if "prompt" in msg:
            text = msg["prompt"]
            if not isinstance(text, str) or not text.strip():
                raise InputError("'prompt' must be a non-empty string")
            if embed is None:
                raise UsageError("prompts need the embedding model; send 'context' vectors instead")
            return router.route(np.asarray(embed([text])[0], dtype=np.float64), ident)
        raise InputError("expected 'prompt' or 'context' (a pick), 'id' + 'score' (feedback) or 'add_model'")
    except InputError as e:
        raise InputError(f"{where}: {e}") from None

