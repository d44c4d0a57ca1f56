"""The model registry (``mechanisms.yaml``): every state, equation and parameter of the simulator once.

Parameter paths name one scalar of the model: ``rho``, ``lam.econ`` (a per-system parameter), ``W.econ.state``
(the spillover from econ to state); a path without its last part (``lam``, ``W``) names every entry.
Values are plain floats; nothing here evaluates text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from paperkit.core.errors import InputError, UsageError

SYSTEMS: tuple[str, ...] = ("econ", "culture", "state")
N_SYSTEMS = len(SYSTEMS)
KINDS = ("scalar", "per_system", "matrix")


@dataclass(frozen=True)
class Parameter:
    name: str
    symbol: str
    kind: str
    default: np.ndarray  # () scalar, (3,) per system, (3, 3) matrix with a zero diagonal
    range: tuple[float, float]
    prior: tuple[float, float] | None
    claim: int
    section: str
    anchor: str
    description: str
    toggle: dict[str, Any] | None = None

    def paths(self) -> list[str]:
        """Every scalar path of this parameter (``W`` has six: its off-diagonal entries)."""
        if self.kind == "scalar":
            return [self.name]
        if self.kind == "per_system":
            return [f"{self.name}.{s}" for s in SYSTEMS]
        return [f"{self.name}.{a}.{b}" for a in SYSTEMS for b in SYSTEMS if a != b]


@dataclass(frozen=True)
class Registry:
    parameters: dict[str, Parameter]
    states: dict[str, dict[str, Any]]
    equations: list[dict[str, Any]] = field(default_factory=list)
    interventions: dict[str, dict[str, Any]] = field(default_factory=dict)
    monitoring: dict[str, dict[str, Any]] = field(default_factory=dict)

    def paths(self) -> list[str]:
        return [p for par in self.parameters.values() for p in par.paths()]

    def resolve(self, path: str, *, source: str = "") -> tuple[Parameter, tuple[int, ...] | None]:
        """``path`` → (parameter, index into its default); index None means every entry."""
        where = f"{source}: " if source else ""
        parts = str(path).split(".")
        par = self.parameters.get(parts[0])
        if par is None:
            raise UsageError(f"{where}unknown parameter '{path}'; known: {', '.join(self.parameters)}")
        rest = parts[1:]
        want = {"scalar": 0, "per_system": 1, "matrix": 2}[par.kind]
        if not rest:
            return par, None
        if len(rest) != want:
            shape = {0: par.name, 1: f"{par.name}.SYSTEM", 2: f"{par.name}.FROM.TO"}[want]
            raise UsageError(f"{where}parameter path '{path}' does not exist; expected {shape}")
        index = []
        for r in rest:
            if r not in SYSTEMS:
                raise UsageError(f"{where}unknown system '{r}' in '{path}'; systems are {', '.join(SYSTEMS)}")
            index.append(SYSTEMS.index(r))
        if want == 2 and index[0] == index[1]:
            raise UsageError(f"{where}'{path}': W has no diagonal (a system does not spill into itself)")
        return par, tuple(index)

    def check_value(self, par: Parameter, value: Any, path: str, *, source: str = "", error: type = InputError) -> float:
        where = f"{source}: " if source else ""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise error(f"{where}'{path}' = {value!r} is not a number")
        x = float(value)
        lo, hi = par.range
        if not (np.isfinite(x) and lo <= x <= hi):
            raise error(f"{where}'{path}' = {value!r} is out of range; expected a value in [{lo:g}, {hi:g}]")
        return x


def _per_system(raw: Any, name: str) -> np.ndarray:
    if isinstance(raw, dict):
        return np.array([float(raw[s]) for s in SYSTEMS])
    return np.full(N_SYSTEMS, float(raw))


def _matrix(raw: dict[str, dict[str, float]]) -> np.ndarray:
    out = np.zeros((N_SYSTEMS, N_SYSTEMS))
    for a, row in raw.items():
        for b, v in row.items():
            out[SYSTEMS.index(a), SYSTEMS.index(b)] = float(v)
    return out


@cache
def load_registry() -> Registry:
    """The shipped ``mechanisms.yaml`` as a :class:`Registry` (read once)."""
    import yaml

    text = resources.files(__package__).joinpath("mechanisms.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    params = {}
    for name, d in data["parameters"].items():
        kind = d["kind"]
        default = {"scalar": lambda r, n: np.array(float(r)), "per_system": _per_system,
                   "matrix": lambda r, n: _matrix(r)}[kind](d["default"], name)
        params[name] = Parameter(name=name, symbol=d["symbol"], kind=kind, default=default,
                                 range=(float(d["range"][0]), float(d["range"][1])),
                                 prior=tuple(float(x) for x in d["prior"]) if "prior" in d else None,
                                 claim=int(d["claim"]), section=str(d["section"]), anchor=d["anchor"],
                                 description=d["description"], toggle=d.get("toggle"))
    return Registry(parameters=params, states=data["states"], equations=data["equations"],
                    interventions=data["interventions"], monitoring=data["monitoring"])


def default_values() -> dict[str, np.ndarray]:
    """Every parameter's default (copies)."""
    return {n: p.default.copy() for n, p in load_registry().parameters.items()}


def set_path(values: dict[str, np.ndarray], path: str, value: float) -> None:
    """Set one path (or every entry of a parameter) in a values dict as made by :func:`default_values`."""
    par, index = load_registry().resolve(path)
    if index is None:
        if par.kind == "matrix":
            values[par.name] = np.full((N_SYSTEMS, N_SYSTEMS), float(value)) * (1 - np.eye(N_SYSTEMS))
        else:
            values[par.name] = np.full(par.default.shape, float(value))
    else:
        values[par.name] = values[par.name].copy()
        values[par.name][index] = float(value)


def get_path(values: dict[str, np.ndarray], path: str) -> np.ndarray:
    """The value(s) at ``path``; for a whole parameter, all its entries."""
    par, index = load_registry().resolve(path)
    v = values[par.name]
    return v if index is None else v[(Ellipsis, *index)]


def stack(values: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Draws (one values dict each) → arrays with a leading draw axis."""
    return {n: np.stack([v[n] for v in values]) for n in values[0]}


def broadcast(values: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """One values dict → arrays of ``n`` identical draws."""
    return {k: np.broadcast_to(v, (n, *np.shape(v))).copy() for k, v in values.items()}
