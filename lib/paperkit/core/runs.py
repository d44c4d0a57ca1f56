"""Run directories for commands that produce several artefacts or train for a while.

A run dir holds ``config.yaml`` (the resolved parameters, written first), checkpoints under
``checkpoints/``, results, plots, and ``manifest.json`` — written last, so its presence means the run
finished. Rules:

* a finished run is never overwritten unless ``force``;
* an unfinished run continues only with ``resume``, and only with the same parameters (except those a
  command names as ``additive``: flags that only add stages, which a resumed run may switch on);
* ``force`` clears a previous paperkit run (recognised by its ``config.yaml``), never a foreign folder;
* a run that stopped before finishing any stage (only its ``config.yaml`` exists, e.g. it failed on
  bad input) is simply started again: the corrected command needs neither ``--resume`` nor ``--force``.

Long runs are split into stages with :meth:`RunDir.cached`, the one checkpoint/resume mechanism:
a stage's result is saved atomically under ``checkpoints/`` when it is computed and loaded instead of
recomputed when the run is resumed.
"""

from __future__ import annotations

import collections
import os
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from paperkit.core import io
from paperkit.core.errors import RunDirError, UsageError

CONFIG_NAME = "config.yaml"
MANIFEST_NAME = "manifest.json"
CHECKPOINT_DIR = "checkpoints"

# Parameters that may differ between a run and its resumption.
RESUME_FREE = frozenset({"resume", "force", "run_dir", "quiet", "verbose", "debug", "jobs", "device", "config",
                         "max_memory_gb"})


class RunDir:
    def __init__(self, path: str | os.PathLike, *, force: bool = False, resume: bool = False):
        self.path = Path(path)
        self.force = force
        self.resume = resume
        self.resumed = False
        self.stage_seconds: dict[str, float] = {}   # wall time of each stage computed (not loaded) by this process

    # -- lifecycle ---------------------------------------------------------------------------------
    def prepare(self, config: Mapping[str, Any], *, command: str, additive: frozenset[str] = frozenset(),
                defaulted: frozenset[str] = frozenset(), before: Mapping[str, Any] | None = None) -> RunDir:
        """Check the folder against ``force``/``resume`` and write ``config.yaml``.

        ``additive`` names flags that only add stages whose results no other stage reads (e.g. extra
        baselines on the same frozen models): they are kept in ``config.yaml`` and may be switched on by a
        ``resume`` (not off), so a finished run can gain its baselines without being trained again.
        ``defaulted`` names the parameters left at their defaults: one missing from an older ``config.yaml``
        is an option added since, whose default keeps the behaviour that run had, so it does not block a resume.
        ``before`` is for an option whose default does not: the value such a run had, compared as if recorded."""
        p = self.path
        if p.exists() and not p.is_dir():
            raise RunDirError(f"{p}: exists and is not a folder")
        if not p.exists():
            from paperkit.core.io import check_writable

            check_writable(p, "--run-dir")   # a parent that is a file gave NotADirectoryError, exit 70
        previous = self.read_config() if (p / CONFIG_NAME).exists() else None
        non_empty = p.is_dir() and any(p.iterdir())
        if non_empty and previous is None:
            if self.force:
                raise RunDirError(f"{p}: not empty and not a paperkit run (no {CONFIG_NAME}); refusing to clear it")
            raise RunDirError(f"{p}: not empty and not a paperkit run; choose a new --run-dir")
        if previous is not None and not self.finished and self._nothing_done():
            previous = None  # a failed start: nothing to resume or protect
            shutil.rmtree(p)
        if previous is not None:
            finished = self.finished
            if self.force:
                shutil.rmtree(p)
            elif self.resume:
                implied = {k: v for k, v in (before or {}).items() if k not in previous}
                previous = {**implied, **previous}
                if previous.get("_command") not in (None, command):
                    raise RunDirError(f"{p}: made by '{previous.get('_command')}', not '{command}'")
                changed = [k for k in _changed(previous, config) if k in previous or k not in defaulted]
                # an additive flag may be switched on, never off: that would drop finished results
                fixed = [k for k in changed if k not in additive or previous.get(k)]
                if fixed:
                    newer = [k for k in fixed if k not in previous]
                    hint = (f" ({', '.join(newer)}: not in its {CONFIG_NAME}, made before the option existed; "
                            "leave it out to resume at the default)") if newer else ""
                    hint += "".join(f" ({k}: made before the option existed, so it ran with {implied[k]!r})"
                                    for k in fixed if k in implied)
                    raise RunDirError(f"{p}: cannot resume with different parameters ({', '.join(fixed)}); "
                                      f"use the original values or --force to start over{hint}")
                self.resumed = True
                if finished and not changed:
                    return self
                if finished:   # stages are being added: unfinished until the new manifest is written
                    (p / MANIFEST_NAME).unlink()
            elif finished:
                raise RunDirError(f"{p}: holds a finished run; use --force to overwrite or --resume to reuse it")
            else:
                raise RunDirError(f"{p}: holds an unfinished run; use --resume to continue it or --force to restart")
        p.mkdir(parents=True, exist_ok=True)
        io.write_yaml(p / CONFIG_NAME, {"_command": command, **dict(config)})
        return self

    @property
    def finished(self) -> bool:
        return (self.path / MANIFEST_NAME).exists()

    def read_config(self) -> dict[str, Any]:
        data = io.read_yaml(self.path / CONFIG_NAME)
        return dict(data) if isinstance(data, Mapping) else {}

    def _nothing_done(self) -> bool:
        return all(f.name == CONFIG_NAME or f.name.startswith(".")
                   for f in self.path.rglob("*") if f.is_file())

    def file(self, name: str) -> Path:
        """``name`` inside the run dir; a name that would leave it (``../x``, an absolute path) is refused."""
        target = (self.path / name).resolve()
        if not target.is_relative_to(self.path.resolve()):
            raise UsageError(f"file name '{name}' would be written outside the run dir {self.path}")
        return self.path / name

    def cached(self, name: str, compute: Callable[[], Any], *, fmt: str = "json") -> Any:
        """The result of stage ``name``: loaded from its checkpoint when one exists (a resumed run),
        else computed (its wall time kept in ``stage_seconds``, for the manifest), saved atomically (``fmt``:
        json, npz or pt) and returned."""
        file = f"{name}.{fmt}"
        if self.has_checkpoint(file):
            return self.load_checkpoint(file)
        start = time.perf_counter()
        value = compute()
        self.stage_seconds[name] = round(time.perf_counter() - start, 3)
        self.save_checkpoint(file, value)
        return value

    # -- checkpoints -------------------------------------------------------------------------------
    def checkpoint_path(self, name: str) -> Path:
        return self.path / CHECKPOINT_DIR / name

    def has_checkpoint(self, name: str) -> bool:
        return self.checkpoint_path(name).exists()

    def save_checkpoint(self, name: str, state: Any) -> Path:
        """Atomically save ``state`` (torch-serialisable for ``.pt``, arrays for ``.npz``, else JSON)."""
        path = self.checkpoint_path(name)
        fmt = io.detect_format(path, default="json")
        if fmt == "pt":
            _check_weights_only(state, name)   # what load_checkpoint could not read back, no run should write
            io.save_torch(path, state)
        elif fmt == "npz":
            io.write_arrays(path, state)
        else:
            io.write_json(path, state)
        return path

    def load_checkpoint(self, name: str) -> Any:
        path = self.checkpoint_path(name)
        fmt = io.detect_format(path, default="json")
        if fmt == "pt":
            return io.load_torch(path)
        if fmt == "npz":
            return io.read_arrays(path)
        return io.read_json(path)

    def outputs(self) -> list[Path]:
        """Every file in the run dir except the manifest itself, sorted (for hashing)."""
        return sorted(f for f in self.path.rglob("*") if f.is_file() and f.name != MANIFEST_NAME
                      and not f.name.startswith("."))


def _changed(previous: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    keys = (set(previous) | set(current)) - RESUME_FREE - {"_command"}
    return sorted(k for k in keys if io.to_jsonable(previous.get(k)) != io.to_jsonable(current.get(k)))


def _check_weights_only(value: Any, where: str) -> None:
    """TypeError unless ``value`` is what ``torch.load(weights_only=True)`` reads back: tensors, numbers,
    strings, None and lists/tuples/dicts of them (a numpy array in a stage once made --resume fail)."""
    import torch

    if value is None or isinstance(value, (torch.Tensor, torch.dtype, torch.Size, torch.device)) \
            or type(value) in (bool, int, float, complex, str, bytes):   # not numpy's float64, an int subclass
        return
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        for i, v in enumerate(value):
            _check_weights_only(v, f"{where}[{i}]")
        return
    if type(value) in (dict, collections.OrderedDict):   # a state_dict() is an OrderedDict
        for k, v in value.items():
            if type(k) not in (str, int):
                raise TypeError(f"checkpoint {where}: key {k!r} is a {type(k).__name__}; use str or int")
            _check_weights_only(v, f"{where}[{k!r}]")
        return
    raise TypeError(f"checkpoint {where}: a {type(value).__module__}.{type(value).__name__} cannot be read back "
                    "by a weights-only load; store a tensor or plain Python values")

