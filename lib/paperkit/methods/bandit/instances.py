"""DR-MAB problem instances (Wang et al., ICML 2025, Section 2 and Section 6).

An instance is K Bernoulli reward means ``mu`` and a K×K preference matrix ``nu`` (``nu[k, l]`` is the
probability that arm k beats arm l in a duel) with ``nu + nu.T == 1`` and a diagonal of 1/2. The
optimal arm is the Condorcet winner (``nu[best, k] > 1/2`` for every other k) and must also have the
largest mean; it need not be arm 0.

Generators: the official 16-arm instance of the paper's code, the reward-gap and preference-gap families
of its sweeps (Section 6; the official code fills the lower triangle of the preference-gap matrix with
``0.5 - nu``, which is not a probability; here it is ``1 - nu``), Bradley–Terry matrices from
utilities, a user matrix, and a Bradley–Terry fit from pairwise win counts (Hunter's MM algorithm).
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from paperkit.core.errors import InputError

log = logging.getLogger(__name__)

# The official instance (include/environment.h of the paper's code): 16 means and a transitive matrix.
OFFICIAL16_MEANS = (0.86, 0.80, 0.75, 0.70, 0.65, 0.60, 0.55, 0.50,
                    0.45, 0.40, 0.35, 0.30, 0.25, 0.20, 0.15, 0.10)
OFFICIAL16_PREFERENCE = (
    (0.50, 0.54, 0.57, 0.60, 0.63, 0.65, 0.69, 0.71, 0.73, 0.76, 0.78, 0.82, 0.86, 0.91, 0.95, 0.98),
    (0.46, 0.50, 0.54, 0.58, 0.61, 0.64, 0.67, 0.70, 0.74, 0.76, 0.79, 0.81, 0.84, 0.87, 0.89, 0.92),
    (0.43, 0.46, 0.50, 0.54, 0.58, 0.60, 0.63, 0.66, 0.69, 0.72, 0.76, 0.79, 0.83, 0.85, 0.88, 0.91),
    (0.40, 0.42, 0.46, 0.50, 0.54, 0.58, 0.61, 0.64, 0.66, 0.69, 0.72, 0.76, 0.79, 0.82, 0.85, 0.88),
    (0.37, 0.39, 0.42, 0.46, 0.50, 0.54, 0.56, 0.59, 0.63, 0.66, 0.69, 0.72, 0.76, 0.78, 0.82, 0.86),
    (0.35, 0.36, 0.40, 0.42, 0.46, 0.50, 0.54, 0.57, 0.59, 0.63, 0.67, 0.70, 0.73, 0.76, 0.79, 0.82),
    (0.31, 0.33, 0.37, 0.39, 0.44, 0.46, 0.50, 0.54, 0.58, 0.61, 0.64, 0.68, 0.71, 0.72, 0.75, 0.79),
    (0.29, 0.30, 0.34, 0.36, 0.41, 0.43, 0.46, 0.50, 0.54, 0.57, 0.59, 0.62, 0.65, 0.68, 0.72, 0.76),
    (0.27, 0.26, 0.31, 0.34, 0.37, 0.41, 0.42, 0.46, 0.50, 0.54, 0.58, 0.61, 0.63, 0.66, 0.69, 0.73),
    (0.24, 0.24, 0.28, 0.31, 0.34, 0.37, 0.39, 0.43, 0.46, 0.50, 0.54, 0.56, 0.59, 0.62, 0.66, 0.69),
    (0.22, 0.21, 0.24, 0.28, 0.31, 0.33, 0.36, 0.41, 0.42, 0.46, 0.50, 0.54, 0.56, 0.58, 0.61, 0.65),
    (0.18, 0.19, 0.21, 0.24, 0.28, 0.30, 0.32, 0.38, 0.39, 0.44, 0.46, 0.50, 0.54, 0.57, 0.58, 0.62),
    (0.14, 0.16, 0.17, 0.21, 0.24, 0.27, 0.29, 0.35, 0.37, 0.41, 0.44, 0.46, 0.50, 0.54, 0.56, 0.59),
    (0.09, 0.13, 0.15, 0.18, 0.22, 0.24, 0.28, 0.32, 0.34, 0.38, 0.42, 0.43, 0.46, 0.50, 0.54, 0.56),
    (0.05, 0.11, 0.12, 0.15, 0.18, 0.21, 0.25, 0.28, 0.31, 0.34, 0.39, 0.42, 0.44, 0.46, 0.50, 0.54),
    (0.02, 0.08, 0.09, 0.12, 0.14, 0.18, 0.21, 0.24, 0.27, 0.31, 0.35, 0.38, 0.41, 0.44, 0.46, 0.50),
)
REWARD_GAPS = (0.06, 0.11, 0.16, 0.21)
PREFERENCE_GAPS = (0.03, 0.05, 0.07, 0.09, 0.11)
TOL = 1e-9


def _floats(value: Any, what: str, source: str) -> np.ndarray:
    """``value`` as a float array, or an InputError naming ``source`` and ``what`` (non-numbers, ragged rows)."""
    try:
        return np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise InputError(f"{source}: {what} = {shown}; expected numbers (a matrix needs rows of equal "
                         "length)") from None


def _number(value: Any, what: str, source: str) -> float:
    """A finite scalar (YAML may give ``1e-3`` as a string), or an InputError naming it."""
    try:
        if isinstance(value, bool):
            raise TypeError
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{source}: {what} = {value!r} is not a number; expected a finite number") from None
    if not math.isfinite(x):
        raise InputError(f"{source}: {what} = {x!r}; expected a finite number")
    return x


@dataclass(frozen=True)
class Instance:
    """A validated DR-MAB instance; build it with :func:`make_instance` or a generator."""

    means: np.ndarray
    preference: np.ndarray
    name: str = "custom"
    best: int = field(default=0)
    files: tuple[str, ...] = field(default=(), compare=False)  # the files it was read from (YAML, CSVs)
    names: tuple[str, ...] | None = None  # arm names (the YAML's 'names'); None: arms are known by index

    def label(self, k: int) -> str:
        """How messages name arm ``k`` (0-based): ``arm 3`` or ``arm 3 ('gpt-4o')``."""
        return _arm(k, self.names)

    @property
    def n_arms(self) -> int:
        return int(self.means.shape[0])

    @property
    def reward_gaps(self) -> np.ndarray:
        """Δ^R_k = μ_best − μ_k (0 for the best arm)."""
        return self.means[self.best] - self.means

    @property
    def duel_gaps(self) -> np.ndarray:
        """Δ^D_k = ν_{best,k} − 1/2 (0 for the best arm)."""
        g = self.preference[self.best] - 0.5
        g[self.best] = 0.0
        return g

    def to_dict(self) -> dict[str, Any]:
        out = {"name": self.name, "n_arms": self.n_arms, "best_arm": self.best}
        if self.names:
            out.update(names=list(self.names), best_arm_name=self.names[self.best])
        return {**out, "means": [float(x) for x in self.means],
                "preference": [[float(x) for x in row] for row in self.preference]}


def _arm(k: int, names: tuple[str, ...] | None = None) -> str:
    return f"arm {k}" + (f" ({names[k]!r})" if names and 0 <= k < len(names) else "")


def check_names(value: Any, k: int, source: str = "instance") -> tuple[str, ...]:
    """Arm names: K distinct non-empty strings (numbers are taken as their text)."""
    if not isinstance(value, (list, tuple)):
        raise InputError(f"{source}: names = {value!r}; expected a list of {k} arm names")
    names = tuple(str(x).strip() for x in value)
    if len(names) != k:
        raise InputError(f"{source}: names has {len(names)} entries but there are {k} means; expected one name per arm")
    for i, (raw, n) in enumerate(zip(value, names, strict=True)):
        if raw is None or isinstance(raw, (dict, list)) or not n:
            raise InputError(f"{source}: names[{i}] = {raw!r}; expected a non-empty name")
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise InputError(f"{source}: names: {dup!r} is given twice; expected distinct arm names")
    return names


def make_instance(means: Any, preference: Any, name: str = "custom", source: str = "instance",
                  names: Any = None) -> Instance:
    """Validate means, matrix and optional arm ``names`` (InputError naming the bad entry) and return an
    :class:`Instance`.

    Arms and entries are 0-based in messages, like every index in paperkit (the paper's arm 1 is arm 0).
    """
    mu = _floats(means, "means", source)
    nu = _floats(preference, "preference", source)
    if mu.ndim != 1 or mu.size < 2:
        raise InputError(f"{source}: means has shape {mu.shape}; expected a list of at least 2 numbers")
    k = mu.size
    labels = None if names is None else check_names(names, k, source)
    if nu.ndim != 2 or nu.shape[0] != nu.shape[1]:
        raise InputError(f"{source}: preference matrix has shape {nu.shape}; expected a square K×K matrix")
    if nu.shape[0] != k:
        raise InputError(f"{source}: preference matrix is {nu.shape[0]}×{nu.shape[1]} but there are {k} means; "
                         "expected one row and column per arm")
    for i, m in enumerate(mu):
        if not (np.isfinite(m) and 0.0 <= m <= 1.0):
            raise InputError(f"{source}: means[{i}] = {float(m)!r} is not a Bernoulli mean; expected a value in [0, 1]")
    for i in range(k):
        for j in range(k):
            v = nu[i, j]
            if not (np.isfinite(v) and 0.0 <= v <= 1.0):
                raise InputError(f"{source}: preference[{i},{j}] = {float(v)!r} is not a probability; "
                                 "expected a value in [0, 1]")
    for i in range(k):
        if abs(nu[i, i] - 0.5) > TOL:
            raise InputError(f"{source}: preference[{i},{i}] = {float(nu[i, i])!r}; expected 0.5 on the diagonal")
        for j in range(i + 1, k):
            if abs(nu[i, j] + nu[j, i] - 1.0) > TOL:
                raise InputError(f"{source}: preference[{i},{j}] + preference[{j},{i}] = "
                                 f"{float(nu[i, j] + nu[j, i])!r}; expected ν + νᵀ = 1")
    winners = [i for i in range(k) if all(nu[i, j] > 0.5 for j in range(k) if j != i)]
    if not winners:
        raise InputError(f"{source}: preference matrix has no Condorcet winner (no arm beats every other arm "
                         "with probability > 0.5)")
    best = winners[0]
    if mu[best] < mu.max() - TOL:
        raise InputError(f"{source}: the Condorcet winner, {_arm(best, labels)}, has mean {float(mu[best])!r} below the "
                         f"largest mean {float(mu.max())!r} ({_arm(int(mu.argmax()), labels)}); expected the same optimal arm for both "
                         "feedback types")
    # exact symmetry, so simulated duels see ν and 1 − ν as the same number
    upper = np.triu(nu, 1)
    nu = upper + (1.0 - upper.T) * np.tril(np.ones((k, k)), -1)
    np.fill_diagonal(nu, 0.5)
    mu.setflags(write=False)
    nu.setflags(write=False)
    return Instance(mu, nu, name=name, best=best, names=labels)


# ------------------------------------------------------------------------------------------ generators
def official16() -> Instance:
    """The 16-arm instance of the paper's experiments (means 0.86, 0.80, 0.75, ..., 0.10)."""
    return make_instance(OFFICIAL16_MEANS, OFFICIAL16_PREFERENCE, name="official16")


def reward_gap_instance(gap: float, n_arms: int = 16, top: float = 0.9, preference: Any = None) -> Instance:
    """μ_1 = top, μ_{k+1} = μ_k − gap, clipped to [0, 1]; the official matrix unless one is given."""
    if not gap > 0:
        raise InputError(f"reward gap = {gap!r}; expected a positive number")
    means = np.clip(top - gap * np.arange(n_arms), 0.0, 1.0)
    if preference is None:
        if n_arms != 16:
            preference = preference_gap_matrix(0.03, n_arms)
        else:
            preference = OFFICIAL16_PREFERENCE
    return make_instance(means, preference, name=f"reward-gap:{gap:g}")


def preference_gap_matrix(gap: float, n_arms: int) -> np.ndarray:
    """ν_{k,l} = 1/2 + (l − k)·gap for l > k, clipped to [0, 1], and ν_{l,k} = 1 − ν_{k,l}."""
    if not gap > 0:
        raise InputError(f"preference gap = {gap!r}; expected a positive number")
    idx = np.arange(n_arms)
    nu = np.clip(0.5 + (idx[None, :] - idx[:, None]) * gap, 0.0, 1.0)
    upper = np.triu(nu, 1)
    return upper + (1.0 - upper.T) * np.tril(np.ones((n_arms, n_arms)), -1) + 0.5 * np.eye(n_arms)


def preference_gap_instance(gap: float, means: Any = OFFICIAL16_MEANS) -> Instance:
    """The official means with the linear preference-gap matrix (lower triangle 1 − ν, not 0.5 − ν)."""
    means = np.asarray(means, dtype=np.float64)
    return make_instance(means, preference_gap_matrix(gap, means.size), name=f"pref-gap:{gap:g}")


def bradley_terry_matrix(utilities: Any, scale: float = 1.0) -> np.ndarray:
    """ν_{k,l} = σ(scale·(u_k − u_l)), with exact ν + νᵀ = 1."""
    u = np.asarray(utilities, dtype=np.float64)
    with np.errstate(over="ignore"):  # a huge scale overflows to ±inf, where σ is exactly 0 or 1
        z = scale * (u[:, None] - u[None, :])
    nu = 0.5 * (1.0 + np.tanh(0.5 * z))  # σ(z), antisymmetric about 1/2 to the last bit
    return nu


def bradley_terry_instance(means: Any, scale: float = 4.0, utilities: Any = None, *, name: str | None = None,
                           source: str = "instance", names: Any = None) -> Instance:
    """Bernoulli means plus ν = σ(scale·(u_k − u_l)) with utilities u = means unless given."""
    means = _floats(means, "means", source)
    scale = _number(scale, "scale", source)
    if not scale > 0:
        raise InputError(f"{source}: Bradley–Terry scale = {scale!r}; expected a positive number")
    u = means if utilities is None else _floats(utilities, "utilities", source)
    if u.shape != means.shape:
        raise InputError(f"{source}: utilities has {u.size} entries but there are {means.size} means")
    if not np.all(np.isfinite(u)):
        i = int(np.flatnonzero(~np.isfinite(u))[0])
        raise InputError(f"{source}: utilities[{i}] = {float(u[i])!r}; expected finite numbers")
    return make_instance(means, bradley_terry_matrix(u, scale), name=name or f"bradley-terry:{scale:g}", source=source,
                         names=names)


def fit_bradley_terry(wins: Any, *, prior: float = 0.0, tol: float = 1e-12, max_iter: int = 10000,
                      source: str = "Bradley–Terry fit") -> np.ndarray:
    """Maximum-likelihood Bradley–Terry utilities from a K×K win-count matrix (``wins[k, l]`` = times k beat l).

    Hunter's (2004) MM iteration π_k ← W_k / Σ_l n_{kl}/(π_k + π_l); ``prior`` adds that many wins to
    every ordered pair (a pseudo-count that makes the maximum-likelihood estimate exist when some arm
    never won or never lost). Returns utilities u = log π centred to mean 0. Logs a warning when the
    iteration stops at ``max_iter`` before the change falls below ``tol``.
    """
    w = _floats(wins, "wins", source)
    prior = _number(prior, "prior", source)
    if prior < 0:
        raise InputError(f"{source}: prior = {prior!r}; expected a non-negative pseudo-count")
    if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] < 2:
        raise InputError(f"{source}: win counts have shape {w.shape}; expected a square K×K matrix, K ≥ 2")
    bad = np.argwhere(~np.isfinite(w) | (w < 0))
    if bad.size:
        i, j = bad[0]
        raise InputError(f"{source}: wins[{i},{j}] = {float(w[i, j])!r}; expected a non-negative count")
    k = w.shape[0]
    np.fill_diagonal(w, 0.0)
    if prior > 0:
        w = w + prior * (1.0 - np.eye(k))
    n = w + w.T
    total = w.sum(axis=1)
    # the MLE exists iff the directed "beats" graph is strongly connected
    reach = _strongly_connected(w > 0)
    if not reach:
        raise InputError(f"{source}: the Bradley–Terry maximum-likelihood fit does not exist (some group of arms "
                         "never lost, or never won, against the rest); add a pseudo-count with prior > 0")
    pi = np.ones(k)
    change = math.inf
    for _ in range(max_iter):
        denom = (n / (pi[:, None] + pi[None, :])).sum(axis=1)
        new = total / denom
        new /= np.exp(np.mean(np.log(new)))
        change = float(np.max(np.abs(np.log(new) - np.log(pi))))
        pi = new
        if change < tol:
            break
    else:
        log.warning("%s: the Bradley–Terry fit stopped after max_iter = %d iterations (last change of the "
                    "log-utilities %.3g > tol = %.3g); the utilities may be inaccurate", source, max_iter, change, tol)
    u = np.log(pi)
    return u - u.mean()


def _strongly_connected(adj: np.ndarray) -> bool:
    k = adj.shape[0]
    for a in (adj, adj.T):
        seen = np.zeros(k, dtype=bool)
        stack = [0]
        seen[0] = True
        while stack:
            i = stack.pop()
            for j in np.flatnonzero(a[i] & ~seen):
                seen[j] = True
                stack.append(int(j))
        if not seen.all():
            return False
    return True


# -------------------------------------------------------------------------------------- presets, files
PRESETS = ("official16", "reward-gap:G", "pref-gap:G", "bradley-terry:S")
# Parameter ranges of the presets. Past these bounds the families stop changing (a reward gap over 0.9
# sets every other mean to 0, a preference gap over 1/2 makes every duel certain) and huge values would
# only overflow; a Bradley–Terry scale over 1000 makes every duel certain to machine precision.
PRESET_RANGES = {"reward-gap": (0.0, 0.9), "pref-gap": (0.0, 0.5), "bradley-terry": (0.0, 1000.0)}
PRESET_DEFAULTS = {"reward-gap": 0.06, "pref-gap": 0.03, "bradley-terry": 4.0}


def preset(spec: str) -> Instance:
    """An instance by name: ``official16``, ``reward-gap:0.11``, ``pref-gap:0.05``, ``bradley-terry:4``.

    The spec is an option value, so a bad one is a :class:`UsageError` (exit 2) naming it: an unknown
    name, a parameter that is not a number or lies outside ``PRESET_RANGES`` (a range ``(0, hi]``).
    """
    from paperkit.core.errors import UsageError

    name, _, arg = spec.partition(":")
    name = name.strip().lower()
    name = "bradley-terry" if name == "bt" else name
    if name == "official16" and not arg:
        return official16()
    if name not in PRESET_RANGES:
        raise UsageError(f"--preset {spec!r}: unknown preset; expected one of {', '.join(PRESETS)}")
    try:
        value = float(arg) if arg else PRESET_DEFAULTS[name]
    except ValueError:
        raise UsageError(f"--preset {spec!r}: {arg!r} is not a number") from None
    lo, hi = PRESET_RANGES[name]
    if not lo < value <= hi:  # NaN fails too
        raise UsageError(f"--preset {spec!r}: {name} parameter {value!r} is out of range; expected a number in "
                         f"({lo:g}, {hi:g}]")
    if name == "reward-gap":
        return reward_gap_instance(value)
    if name == "pref-gap":
        return preference_gap_instance(value)
    return bradley_terry_instance(OFFICIAL16_MEANS, scale=value)


INSTANCE_KEYS = ("name", "names", "means", "preference", "scale", "utilities", "wins", "prior")

def instance_from_mapping(data: Any, *, source: str = "instance", base: Path | None = None) -> Instance:
    """An instance from a YAML mapping.

    ``means`` (list) is required. ``preference`` is a K×K list of rows, the path of a K×K CSV matrix
    (no header), or ``bradley-terry`` (with optional ``scale`` and ``utilities``). Instead of
    ``preference``, ``wins`` may give a K×K win-count matrix (list or CSV path) to fit Bradley–Terry
    (with optional ``prior``). ``name`` and ``names`` (one distinct name per arm) are optional. Paths are
    relative to the YAML file. See the schema in the bandit commands' --help.
    """
    if not isinstance(data, dict):
        raise InputError(f"{source}: expected a mapping with keys 'means' and 'preference' (or 'wins')")
    unknown = sorted(set(data) - set(INSTANCE_KEYS))
    if unknown:
        raise InputError(f"{source}: unknown key(s) {', '.join(map(repr, unknown))}; expected {', '.join(INSTANCE_KEYS)}")
    if "means" not in data:
        raise InputError(f"{source}: missing key 'means' (the K Bernoulli reward means)")
    means = data["means"]
    name = str(data.get("name", Path(source).stem if source != "instance" else "custom"))
    names = data.get("names")
    pref = data.get("preference")
    wins = data.get("wins")
    if (pref is None) == (wins is None):
        raise InputError(f"{source}: give exactly one of 'preference' (matrix, CSV path or 'bradley-terry') "
                         "and 'wins' (pairwise win counts)")
    files: list[str] = []
    if wins is not None:
        w = _matrix_or_csv(wins, "wins", source, base, files)
        u = fit_bradley_terry(w, prior=data.get("prior", 0.0), source=source)
        inst = make_instance(means, bradley_terry_matrix(u), name=name, source=source, names=names)
    elif isinstance(pref, str) and pref.strip().lower() in ("bradley-terry", "bt"):
        inst = bradley_terry_instance(means, scale=data.get("scale", 4.0), utilities=data.get("utilities"),
                                      name=name, source=source, names=names)
    else:
        inst = make_instance(means, _matrix_or_csv(pref, "preference", source, base, files), name=name,
                             source=source, names=names)
    return replace(inst, files=tuple(files))


def _matrix_or_csv(value: Any, key: str, source: str, base: Path | None, files: list[str]) -> Any:
    if isinstance(value, str):
        path = Path(value)
        if base is not None and not path.is_absolute():
            path = base / path
        files.append(str(path))
        return read_matrix_csv(path)
    return value


def read_matrix_csv(path: str | os.PathLike) -> np.ndarray:
    """A numeric matrix from a CSV/TSV file (``.gz`` too) without a header; a first row of labels is skipped.

    The format follows the suffix (``.tsv`` for tabs; anything else is read as CSV).
    """
    from paperkit.core import io
    from paperkit.core.readers import read_numeric

    fmt = io.detect_format(path, default="csv")
    return read_numeric(path, "matrix", fmt=fmt if fmt in ("csv", "tsv") else "csv", ndim=2, header="auto",
                        finite=False)


def load_instance(path: str | os.PathLike) -> Instance:
    """An instance from a YAML file (see :func:`instance_from_mapping`); ``-`` reads it from stdin, and
    CSV paths inside it are then relative to the working folder."""
    from paperkit.core import io

    if io.is_stdio(path):
        inst = instance_from_mapping(io.read_yaml("-"), source="<stdin>", base=Path.cwd())
        return replace(inst, files=("-", *inst.files))
    p = io.require_file(path)
    inst = instance_from_mapping(io.read_yaml(p), source=str(path), base=p.parent)
    return replace(inst, files=(str(path), *inst.files))


def resolve_instance(preset_name: str | None = None, path: str | os.PathLike | None = None) -> Instance:
    """The instance a command asked for: ``--instance FILE`` or ``--preset NAME`` (default official16)."""
    from paperkit.core.errors import UsageError

    if preset_name and path:
        raise UsageError("--preset and --instance are mutually exclusive; give one")
    if path:
        return load_instance(path)
    return preset(preset_name or "official16")
