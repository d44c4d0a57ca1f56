"""Scenarios: YAML files that change parameters and add interventions (the paper's four mitigation families).

A scenario file is untrusted input: it is read with the shared safe YAML reader, every key is checked
against the registry (``mechanisms.yaml``) and every value against its range; nothing is evaluated.
Command-line overrides ``PATH=VALUE`` (``W.econ.state=0.3``) are parsed the same way, the value as a float.

Schema (every key optional except ``name``)::

    name: early_mitigation
    description: all four families at t = 5
    capability: {path: logistic}            # or linear
    parameters: {rho: 0.5, lam: {econ: 0.7}, W: {econ: {state: 0.3}}, "mu.culture": 0.3}
    priors: {rho: [0.2, 0.8]}               # uniform priors for --mc / --morris / --sobol
    monitoring: {lag: 1, noise: 0.02, interval: 1}
    interventions:
      - {type: ai_cap, start: 5, ramp: 2, cap: {econ: 0.3, state: 0.3}}
      - {type: ai_tax, trigger: {below: 0.6}, rate: 0.3}
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from paperkit.core import io
from paperkit.core.errors import InputError, UsageError
from paperkit.methods.disempower.registry import N_SYSTEMS, SYSTEMS, Parameter, default_values, load_registry

TOP_KEYS = ("name", "description", "claim", "capability", "parameters", "priors", "monitoring", "interventions")
TIMING_KEYS = ("type", "start", "trigger", "ramp", "gated", "name")
CAPABILITY_PATHS = ("logistic", "linear")


@dataclass(frozen=True)
class Intervention:
    type: str
    label: str
    family: int
    start: float | None  # years; None when triggered
    below: float | None  # trigger: observed HII below this
    ramp: float
    gated: bool
    fields: dict[str, np.ndarray]  # per field: () or (3,)


@dataclass(frozen=True)
class Monitoring:
    lag: float
    noise: float
    interval: float


@dataclass
class Scenario:
    name: str
    description: str
    source: str  # file the scenario came from ("built-in:<name>" for shipped ones)
    values: dict[str, np.ndarray]
    sources: dict[str, str]  # parameter path -> default | scenario | override
    priors: dict[str, tuple[float, float]]
    capability_path: str = "logistic"
    monitoring: Monitoring = field(default_factory=lambda: Monitoring(1.0, 0.02, 1.0))
    interventions: list[Intervention] = field(default_factory=list)

    @property
    def triggered(self) -> bool:
        return any(iv.below is not None for iv in self.interventions)


# ----------------------------------------------------------------------------------------- built-ins
def builtin_names() -> list[str]:
    folder = resources.files(__package__).joinpath("scenarios")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))


def builtin_path(name: str) -> Any:
    return resources.files(__package__).joinpath("scenarios", f"{name}.yaml")


def locate(spec: str | os.PathLike) -> tuple[Any, str]:
    """A scenario argument (a built-in name or a path) → (readable path, display name)."""
    text = os.fspath(spec)
    if text in builtin_names() and not Path(text).exists():
        return builtin_path(text), f"built-in:{text}"
    path = Path(text)
    if not path.exists():
        raise InputError(f"{text}: no such scenario file and not a built-in scenario "
                         f"({', '.join(builtin_names())})")
    return path, text


# ------------------------------------------------------------------------------------------- loading
def load_scenario(spec: str | os.PathLike | None, overrides: tuple[str, ...] | list[str] = ()) -> Scenario:
    """Read, validate and resolve a scenario (a built-in name or a YAML path; None = the registry
    defaults), then apply ``overrides`` (``PATH=VALUE`` strings)."""
    if spec is None:
        sc = Scenario(name="defaults", description="registry defaults", source="registry", values=default_values(),
                      sources={}, priors=_default_priors())
    else:
        path, shown = locate(spec)
        if isinstance(path, Path):
            data = io.read_yaml(path, strict=True)
        else:
            import yaml

            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        sc = parse_scenario(data, shown)
    apply_overrides(sc, overrides)
    return sc


def _default_priors() -> dict[str, tuple[float, float]]:
    return {n: p.prior for n, p in load_registry().parameters.items() if p.prior is not None}


def parse_scenario(data: Any, source: str) -> Scenario:
    reg = load_registry()
    if not isinstance(data, dict):
        raise InputError(f"{source}: a scenario must be a mapping with keys {', '.join(TOP_KEYS)}")
    for key in data:
        if key not in TOP_KEYS:
            raise InputError(f"{source}: unknown key '{key}'; expected {', '.join(TOP_KEYS)}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"{source}: 'name' must be a non-empty string")
    values = default_values()
    sources: dict[str, str] = {}
    params = data.get("parameters") or {}
    if not isinstance(params, dict):
        raise InputError(f"{source}: 'parameters' must be a mapping of parameter paths to numbers")
    for key, raw in params.items():
        _set_from_yaml(values, sources, str(key), raw, source)
    for par in reg.parameters.values():
        _check_consistency(par, values, source)
    cap = data.get("capability") or {}
    if not isinstance(cap, dict) or set(cap) - {"path"}:
        raise InputError(f"{source}: 'capability' must be a mapping with the key 'path'")
    path = cap.get("path", "logistic")
    if path not in CAPABILITY_PATHS:
        raise InputError(f"{source}: capability.path = {path!r}; expected one of {', '.join(CAPABILITY_PATHS)}")
    priors = _default_priors()
    raw_priors = data.get("priors") or {}
    if not isinstance(raw_priors, dict):
        raise InputError(f"{source}: 'priors' must be a mapping of parameter names to [lower, upper]")
    for key, pr in raw_priors.items():
        par = reg.parameters.get(str(key))
        if par is None:
            raise InputError(f"{source}: priors: unknown parameter '{key}'")
        if not (isinstance(pr, list) and len(pr) == 2 and all(_is_number(x) for x in pr)):
            raise InputError(f"{source}: priors.{key} must be [lower, upper]")
        lo, hi = float(pr[0]), float(pr[1])
        if lo > hi:
            raise InputError(f"{source}: priors.{key}: lower {lo:g} > upper {hi:g}")
        if lo < par.range[0] or hi > par.range[1]:
            raise InputError(f"{source}: priors.{key} = [{lo:g}, {hi:g}] leaves the range [{par.range[0]:g}, {par.range[1]:g}]")
        priors[str(key)] = (lo, hi)
    monitoring = _parse_monitoring(data.get("monitoring"), source)
    raw_iv = data.get("interventions") or []
    if not isinstance(raw_iv, list):
        raise InputError(f"{source}: 'interventions' must be a list of blocks")
    ivs = [_parse_intervention(b, f"{source}: interventions[{i}]") for i, b in enumerate(raw_iv)]
    return Scenario(name=name.strip(), description=str(data.get("description", "")).strip(), source=source,
                    values=values, sources=sources, priors=priors, capability_path=path, monitoring=monitoring,
                    interventions=ivs)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(float(x))


def _set_from_yaml(values: dict, sources: dict, key: str, raw: Any, source: str) -> None:
    """A ``parameters:`` entry: a dotted path with a number, or a parameter with a nested mapping."""
    par, index = _resolve_input(key, f"{source}: parameters")
    if index is not None or par.kind == "scalar":
        _assign(values, sources, par, index, raw, f"parameters.{key}", source)
        return
    if par.kind == "matrix" and isinstance(raw, list):
        arr = np.asarray(raw, dtype=object)
        if arr.shape != (N_SYSTEMS, N_SYSTEMS):
            raise InputError(f"{source}: parameters.{key} must be a 3x3 matrix (rows and columns {', '.join(SYSTEMS)})")
        for i in range(N_SYSTEMS):
            for j in range(N_SYSTEMS):
                if i == j:
                    if not (_is_number(arr[i, j]) and float(arr[i, j]) == 0.0):
                        raise InputError(f"{source}: parameters.{key}: the diagonal must be 0 ({SYSTEMS[i]})")
                    continue
                _assign(values, sources, par, (i, j), arr[i, j], f"parameters.{key}.{SYSTEMS[i]}.{SYSTEMS[j]}", source)
        return
    if isinstance(raw, dict):
        for sub, v in raw.items():
            if par.kind == "matrix" and isinstance(v, dict):
                for sub2, v2 in v.items():
                    p2, idx = _resolve_input(f"{key}.{sub}.{sub2}", f"{source}: parameters")
                    _assign(values, sources, p2, idx, v2, f"parameters.{key}.{sub}.{sub2}", source)
            else:
                p2, idx = _resolve_input(f"{key}.{sub}", f"{source}: parameters")
                _assign(values, sources, p2, idx, v, f"parameters.{key}.{sub}", source)
        return
    _assign(values, sources, par, None, raw, f"parameters.{key}", source)


def _resolve_input(path: str, source: str) -> tuple[Parameter, tuple[int, ...] | None]:
    try:
        return load_registry().resolve(path, source=source)
    except UsageError as e:
        raise InputError(str(e)) from None


def _assign(values: dict, sources: dict, par: Parameter, index: tuple[int, ...] | None, raw: Any, shown: str,
            source: str, origin: str = "scenario", error: type = InputError) -> None:
    reg = load_registry()
    x = reg.check_value(par, raw, shown, source=source, error=error)
    arr = values[par.name].copy()
    if index is None:
        arr[...] = x
        if par.kind == "matrix":
            np.fill_diagonal(arr, 0.0)
        for p in par.paths():
            sources[p] = origin
    else:
        arr[index] = x
        sources[par.name + "." + ".".join(SYSTEMS[i] for i in index)] = origin
    values[par.name] = arr


def _check_consistency(par: Parameter, values: dict, source: str, error: type = InputError) -> None:
    """Constraints across entries: a0 < 1, sum of omega > 0, spillover into each system below 1."""
    v = values[par.name]
    if par.name == "a0" and np.any(v >= 1.0):
        raise error(f"{source}: a0 must be below 1 in every system (the human share must be positive)")
    if par.name == "omega" and not v.sum() > 0:
        raise error(f"{source}: omega must have a positive sum")
    if par.name == "W":
        col = v.sum(axis=0)
        for s, total in zip(SYSTEMS, col, strict=True):
            if total >= 1.0:
                raise error(f"{source}: W: the spillover into '{s}' sums to {total:g}; it must be below 1")


def _parse_monitoring(raw: Any, source: str) -> Monitoring:
    spec = load_registry().monitoring
    raw = raw or {}
    if not isinstance(raw, dict):
        raise InputError(f"{source}: 'monitoring' must be a mapping with keys {', '.join(spec)}")
    out = {}
    for k in raw:
        if k not in spec:
            raise InputError(f"{source}: monitoring: unknown key '{k}'; expected {', '.join(spec)}")
    for k, s in spec.items():
        v = raw.get(k, s["default"])
        lo, hi = s["range"]
        if not (_is_number(v) and lo <= float(v) <= hi):
            raise InputError(f"{source}: monitoring.{k} = {v!r}; expected a number in [{lo:g}, {hi:g}]")
        out[k] = float(v)
    return Monitoring(**out)


def _parse_intervention(block: Any, where: str) -> Intervention:
    spec_all = load_registry().interventions
    if not isinstance(block, dict) or "type" not in block:
        raise InputError(f"{where}: each intervention is a mapping with a 'type' ({', '.join(spec_all)})")
    kind = block["type"]
    if kind not in spec_all:
        raise InputError(f"{where}: unknown intervention type {kind!r}; expected one of {', '.join(spec_all)}")
    spec = spec_all[kind]
    for k in block:
        if k not in TIMING_KEYS and k not in spec["fields"]:
            raise InputError(f"{where}: unknown key '{k}' for {kind}; expected "
                             f"{', '.join(list(TIMING_KEYS[1:]) + list(spec['fields']))}")
    start, below = block.get("start"), None
    trig = block.get("trigger")
    if (start is None) == (trig is None):
        raise InputError(f"{where}: give exactly one of 'start' (a year) or 'trigger' ({{below: HII level}})")
    if start is not None and not (_is_number(start) and float(start) >= 0):
        raise InputError(f"{where}: start = {start!r}; expected a year >= 0")
    if trig is not None:
        if not isinstance(trig, dict) or set(trig) != {"below"} or not _is_number(trig["below"]) \
                or not 0 <= float(trig["below"]) <= 1:
            raise InputError(f"{where}: trigger must be {{below: X}} with X an HII level in [0, 1]")
        below = float(trig["below"])
    ramp = block.get("ramp", 0.0)
    if not (_is_number(ramp) and float(ramp) >= 0):
        raise InputError(f"{where}: ramp = {ramp!r}; expected years >= 0")
    gated = block.get("gated", kind != "capability_freeze")
    if not isinstance(gated, bool):
        raise InputError(f"{where}: gated = {gated!r}; expected true or false")
    fields = {}
    for fname, fs in spec["fields"].items():
        lo, hi = fs["range"]
        raw = block.get(fname, fs["default"])
        if fs["kind"] == "per_system":
            arr = np.full(N_SYSTEMS, float(fs["default"]))
            items = raw.items() if isinstance(raw, dict) else [(s, raw) for s in SYSTEMS]
            for s, v in items:
                if s not in SYSTEMS:
                    raise InputError(f"{where}: {fname}: unknown system '{s}'; systems are {', '.join(SYSTEMS)}")
                if not (_is_number(v) and lo <= float(v) <= hi):
                    raise InputError(f"{where}: {fname}.{s} = {v!r}; expected a number in [{lo:g}, {hi:g}]")
                arr[SYSTEMS.index(s)] = float(v)
            fields[fname] = arr
        else:
            if not (_is_number(raw) and lo <= float(raw) <= hi):
                raise InputError(f"{where}: {fname} = {raw!r}; expected a number in [{lo:g}, {hi:g}]")
            fields[fname] = np.array(float(raw))
    label = block.get("name", kind)
    if not isinstance(label, str) or not label:
        raise InputError(f"{where}: name must be a non-empty string")
    return Intervention(type=kind, label=label, family=int(spec["family"]),
                        start=None if start is None else float(start), below=below, ramp=float(ramp),
                        gated=gated, fields=fields)


# ----------------------------------------------------------------------------------------- overrides
def parse_override(text: str) -> tuple[str, float]:
    """``PATH=VALUE`` → (path, float); a usage error (exit 2) names the bad part. Never evaluates."""
    path, eq, value = str(text).partition("=")
    path, value = path.strip(), value.strip()
    if not eq or not path or not value:
        raise UsageError(f"--set {text!r}: expected PATH=VALUE, e.g. W.econ.state=0.3")
    try:
        x = float(value)
    except ValueError:
        raise UsageError(f"--set {text!r}: '{value}' is not a number") from None
    if not math.isfinite(x):
        raise UsageError(f"--set {text!r}: '{value}' is not a finite number")
    return path, x


def apply_overrides(sc: Scenario, overrides: tuple[str, ...] | list[str]) -> None:
    reg = load_registry()
    for text in overrides:
        path, x = parse_override(text)
        par, index = reg.resolve(path, source=f"--set {text}")
        _assign(sc.values, sc.sources, par, index, x, path, f"--set {text}", origin="override", error=UsageError)
        _check_consistency(par, sc.values, f"--set {text}", error=UsageError)


def value_source(sc: Scenario, path: str) -> str:
    return sc.sources.get(path, "default")
