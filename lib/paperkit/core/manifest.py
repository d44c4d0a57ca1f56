"""``manifest.json``: what produced an output, so a result can be traced and rerun.

Holds argv, every resolved parameter and where its value came from (default, config, env, flag),
the seed, paperkit's version and git commit, Python and platform, the main dependencies' versions,
sha256 of inputs and outputs, and wall time. Timestamps live only here, never inside data files.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from paperkit import __version__
from paperkit.core import io

MAIN_DEPENDENCIES = (
    "numpy", "scipy", "torch", "numba", "scikit-learn", "sympy", "click", "pyyaml", "tqdm", "matplotlib", "triton",
)


@lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The commit of the paperkit checkout this code runs from (``+dirty`` if modified), or None."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "--show-toplevel", "HEAD"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.split()
        top, commit = out[0], out[1]
        if not (Path(top) / "lib" / "paperkit").is_dir():
            return None  # some other repository that happens to contain an installed paperkit
        dirty = subprocess.run(
            ["git", "-C", top, "status", "--porcelain", "--untracked-files=no", "--", "lib", "cli"],
            capture_output=True, text=True, timeout=5,
        ).stdout.strip()
        return commit + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError, IndexError):
        return None


@lru_cache(maxsize=1)
def environment() -> dict[str, Any]:
    from importlib import metadata

    versions = {}
    for name in MAIN_DEPENDENCIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {
        "paperkit_version": __version__,
        "git_commit": git_commit(),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "dependencies": versions,
    }


def describe_files(paths: Iterable[str | os.PathLike]) -> list[dict[str, Any]]:
    """Path, size and sha256 of each file (folders are walked; stdin/stdout is listed without a hash)."""
    out: list[dict[str, Any]] = []
    for p in paths:
        if p is None:
            continue
        if io.is_stdio(p):
            out.append({"path": "-", "sha256": None})
            continue
        path = Path(p)
        files = sorted(f for f in path.rglob("*") if f.is_file()) if path.is_dir() else [path]
        for f in files:
            if f.is_file():
                out.append({"path": str(f), "bytes": f.stat().st_size, "sha256": io.sha256_file(f)})
    return out


def build_manifest(
    *,
    command: str,
    argv: list[str],
    parameters: Mapping[str, Mapping[str, Any]],
    seed: int | None = None,
    inputs: Iterable[str | os.PathLike] = (),
    outputs: Iterable[str | os.PathLike] = (),
    wall_time_s: float | None = None,
    status: str = "complete",
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest as a dict. ``parameters`` maps name → {"value": ..., "source": ...}."""
    manifest: dict[str, Any] = {
        "command": command,
        "status": status,
        "argv": list(argv),
        "parameters": {k: dict(v) for k, v in parameters.items()},
        "seed": seed,
        "inputs": describe_files(inputs),
        "outputs": describe_files(outputs),
        "wall_time_s": None if wall_time_s is None else round(float(wall_time_s), 4),
        "environment": environment(),
    }
    if extra:
        manifest["extra"] = dict(extra)
    return manifest


def write_manifest(path: str | os.PathLike, manifest: Mapping[str, Any]) -> None:
    io.write_json(path, manifest)


def manifest_path_for(output: str | os.PathLike) -> Path:
    """Where the manifest of a single-file output goes: ``<output>.manifest.json`` beside it."""
    p = Path(output)
    return p.with_name(p.name + ".manifest.json")
