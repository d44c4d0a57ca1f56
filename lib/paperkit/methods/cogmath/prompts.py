"""Editable prompt templates (``prompts.yaml`` shipped with the package, overridable by a user file)."""

from __future__ import annotations

import copy
import functools
import os
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from paperkit.core import io
from paperkit.core.errors import ConfigError
from paperkit.methods.cogmath.extract import ExtractConfig

TOP_KEYS = ("solve", "extraction", "score_judge", "agents")


@dataclass(frozen=True)
class Prompts:
    data: dict[str, Any]

    @functools.cached_property
    def _extraction(self) -> ExtractConfig:
        return ExtractConfig.from_mapping(self.data.get("extraction"))

    @property
    def solve(self) -> str:
        return self.data["solve"]

    @property
    def score_judge(self) -> str:
        return self.data["score_judge"]

    @property
    def extraction(self) -> ExtractConfig:
        return self._extraction

    def agent(self, role: str, dim: int | None = None) -> str:
        agents = self.data["agents"]
        if dim is None:
            return agents[role]
        table = agents.get(role) or {}
        t = table.get(dim, table.get(str(dim)))
        if t is None:
            raise ConfigError(f"prompts: no agents.{role} template for dimension {dim}")
        return t


@functools.cache
def _shipped() -> dict[str, Any]:
    text = resources.files("paperkit.methods.cogmath").joinpath("prompts.yaml").read_text(encoding="utf-8")
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def default_data() -> dict[str, Any]:
    """The shipped templates (a fresh copy)."""
    return copy.deepcopy(_shipped())


def _merge(base: dict, over: dict, where: str) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v, f"{where}.{k}")
        else:
            out[k] = v
    return out


def fill(template: str, **values: Any) -> str:
    """Replace ``{name}`` placeholders (only those given; other braces, e.g. LaTeX, are left alone).

    One pass over the template: text put in by one placeholder is never searched again, so a problem
    that itself contains ``{answer}`` does not get the reference answer injected.
    """
    if not values:
        return template
    pattern = re.compile("{(" + "|".join(re.escape(k) for k in values) + ")}")
    return pattern.sub(lambda m: "" if values[m.group(1)] is None else str(values[m.group(1)]), template)


def load_prompts(path: str | os.PathLike | None = None) -> Prompts:
    data = default_data()
    if path is not None:
        user = io.read_yaml(path)
        if user is None:
            user = {}
        if not isinstance(user, dict):
            raise ConfigError(f"{path}: expected a mapping with keys {', '.join(TOP_KEYS)}")
        unknown = sorted(set(user) - set(TOP_KEYS))
        if unknown:
            raise ConfigError(f"{path}: unknown key(s) {', '.join(unknown)}; expected {', '.join(TOP_KEYS)}")
        data = _merge(data, user, str(path))
    if not isinstance(data.get("solve"), str) or "{inquiry}" not in data["solve"]:
        raise ConfigError("prompts: 'solve' must be a text containing the placeholder {inquiry}")
    ExtractConfig.from_mapping(data.get("extraction"))  # validate now, not mid-run
    return Prompts(data)
