"""The claims registry: each paper's headline claims as data, with the experiment that tests them.

How to add a claim
------------------
1. In ``lib/paperkit/methods/<pkg>/claims.py`` define ``CLAIMS = (Claim(...), ...)``. Keep the module
   light: no numpy/torch at the top (``paperkit reproduce --list`` imports every claims module).
2. ``steps`` are paperkit argv lists run in a subprocess, in order, once per seed, in a fresh folder.
   Placeholders: ``{dir}`` the seed's folder, ``{seed}`` the seed, ``{examples}`` the repository's
   ``examples/`` folder — point at the configs the examples use, never a copy. A step whose first item
   ends in ``.py`` runs that script with the same Python.
3. ``measure(dir)`` reads the commands' output files in ``dir`` and returns ``{metric: float}``.
4. ``criterion`` (see :mod:`paperkit.reproduce.criteria`) turns the per-seed measurements into a verdict.
   Say the paper's number in ``paper_value``; do not tune the criterion until the claim holds.
5. ``needs="gpu"`` or ``needs="weights"`` makes the claim ``not run`` with that reason where it is
   missing. A claim whose commands are not built is ``not run (tool not built)`` automatically
   (:func:`available`), so a new tool's claims need nothing but its ``claims.py``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Argv = tuple[str, ...]

_METHODS_DIR = Path(__file__).resolve().parent.parent / "methods"
EXAMPLES_DIR = Path(__file__).resolve().parents[3] / "examples"


@dataclass(frozen=True)
class Claim:
    id: str                      # "<pkg>/<name>"
    paper: str                   # the paper's key in paperkit_cli.registry.PAPERS (its first command)
    claim: str                   # the claim in one sentence
    where: str                   # where the paper states it (table / figure / section)
    paper_value: str             # what the paper reports
    steps: tuple[Argv, ...]      # the experiment, --quick scale
    measure: Callable[[Path], dict[str, float]]
    criterion: Any               # a criterion from paperkit.reproduce.criteria
    metric: str = ""             # what "ours" shows (default: the criterion's headline metric)
    seeds: tuple[int, ...] = (0,)
    full_steps: tuple[Argv, ...] | None = None   # --full scale (default: the quick steps)
    full_seeds: tuple[int, ...] | None = None
    quick_s: float = 30.0        # expected seconds on 2 cores, all seeds
    full_s: float = 300.0
    figure: str | None = None    # a PNG the commands write in the seed-0 folder, copied into the report
    needs: str | None = None     # "gpu" | "weights" | None
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def package(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def shown_metric(self) -> str:
        return self.metric or self.criterion.shown

    def plan(self, mode: str) -> tuple[tuple[Argv, ...], tuple[int, ...]]:
        if mode == "full":
            return self.full_steps or self.steps, self.full_seeds or self.seeds
        return self.steps, self.seeds

    def commands(self) -> set[str]:
        return {s[0] for s in (*self.steps, *(self.full_steps or ())) if not s[0].endswith(".py")}


def claim_packages() -> list[str]:
    """Paper packages that have a claims module (found on disk, nothing imported)."""
    return sorted(p.name for p in _METHODS_DIR.iterdir() if (p / "claims.py").is_file())


def load(packages: list[str] | None = None) -> list[Claim]:
    """Every registered claim, package by package in name order."""
    out: list[Claim] = []
    for pkg in packages or claim_packages():
        mod = importlib.import_module(f"paperkit.methods.{pkg}.claims")
        for c in mod.CLAIMS:
            if c.package != pkg:
                raise ValueError(f"paperkit.methods.{pkg}.claims: claim '{c.id}' must start with '{pkg}/'")
            out.append(c)
    ids = [c.id for c in out]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ValueError(f"duplicate claim ids: {', '.join(sorted(dup))}")
    return out


def _is_command(name: str) -> bool:
    from paperkit_cli.registry import is_available

    return is_available(name)


def available(claim: Claim, is_command: Callable[[str], bool] | None = None) -> str | None:
    """None when the claim can run here, else the reason it cannot (checked at run time)."""
    check = is_command or _is_command
    missing = sorted(c for c in claim.commands() if not check(c))
    if missing:
        return f"tool not built ({', '.join(missing)})"
    if claim.needs == "gpu":
        try:
            import torch

            if not torch.cuda.is_available():
                return "needs a GPU"
        except ImportError:
            return "needs a GPU (torch not installed)"
    if claim.needs == "weights" and not os.environ.get("PAPERKIT_WEIGHTS"):
        return "needs weights"
    return None


def expand(argv: Argv, *, dir: Path, seed: int) -> list[str]:
    return [a.format(dir=str(dir), seed=seed, examples=str(EXAMPLES_DIR)) for a in argv]
