"""Per-invocation bookkeeping for commands: run directories and manifests.

    from paperkit_cli import runtime

    run = runtime.start_run(run_dir, resume=resume, force=force)     # RunDir, config.yaml written
    ...
    runtime.write_manifest(inputs=[train], run_dir=run.path, seed=seed)  # manifest.json, written last

For single-output commands: ``runtime.write_manifest(inputs=[...], output=output, manifest_path=...)``
puts ``<output>.manifest.json`` beside the output (none when the output is stdout and no path is given).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from paperkit_cli import state
from paperkit_cli.options import META_KEY, resolved_parameters

_START_KEY = "paperkit.start_time"
_RUN_KEY = "paperkit.run_dir"


def _ctx() -> click.Context:
    return click.get_current_context()


def elapsed() -> float:
    ctx = _ctx()
    start = ctx.meta.setdefault(_START_KEY, time.perf_counter())
    return time.perf_counter() - start


def mark_start() -> None:
    _ctx().meta[_START_KEY] = time.perf_counter()


def parameters() -> dict[str, dict[str, Any]]:
    return resolved_parameters(_ctx())


def settings(cls: type, **overrides: Any) -> Any:
    """The command's settings dataclass filled from this invocation's parameters (fields by name).

    Options that are not fields (paths, --run-dir, --resume ...) are ignored; ``overrides`` set fields
    whose option is spelled differently or needs converting.
    """
    import dataclasses

    names = {f.name for f in dataclasses.fields(cls)}
    values = {k: v for k, v in _ctx().params.items() if k in names}
    values.update(overrides)
    return cls(**values)


def start_run(run_dir: str | os.PathLike, *, resume: bool = False, force: bool = False,
              resume_free: tuple[str, ...] = (), additive: tuple[str, ...] = (),
              extra: dict[str, Any] | None = None, before: dict[str, Any] | None = None) -> Any:
    """Prepare ``run_dir`` (see :class:`paperkit.core.runs.RunDir`) with this invocation's parameters.

    ``resume_free`` names further parameters (Python names) that do not change results and may differ
    when resuming, such as a server's address or a timeout; they are left out of ``config.yaml``.
    ``additive`` names parameters that only add stages (see :meth:`RunDir.prepare`): recorded in
    ``config.yaml``, but a resumed run may switch them on.
    ``extra`` adds entries to ``config.yaml`` that must also match on ``--resume``, such as the sha256
    of an input file, so an edited input is not mixed with checkpoints made from the old one.
    ``before`` gives, for an option whose default is not what runs made before it existed did, the value
    those runs had (Python names): a ``config.yaml`` without the key is compared as holding it.
    """
    from paperkit.core.runs import RESUME_FREE, RunDir

    free = RESUME_FREE | set(resume_free)
    params = {k.replace("-", "_"): v for k, v in parameters().items() if k.replace("-", "_") not in free}
    config = {k: v["value"] for k, v in params.items()}
    hashes = _input_hashes(config)
    if hashes:
        # an input edited in place keeps its name: without its hash a resume mixed old checkpoints with new data
        config["inputs_sha256"] = hashes
    config.update(extra or {})
    # a run made before inputs were hashed has no such key: it still resumes
    defaulted = frozenset(k for k, v in params.items() if v["source"] == "default") | {"inputs_sha256"}
    run = RunDir(run_dir, force=force, resume=resume).prepare(config, command=_ctx().command.name or "",
                                                              additive=frozenset(additive), defaulted=defaulted,
                                                              before=before)
    _ctx().meta[_RUN_KEY] = run     # write_manifest adds its stage timings
    return run


def _input_hashes(config: dict[str, Any]) -> dict[str, str]:
    """sha256 of every regular file a parameter names (also the FILE of a KIND:FILE source), by parameter."""
    from paperkit.core import io

    out = {}
    for key, value in config.items():
        files = [f for f in io.files_named(value) if os.path.isfile(f)]
        for i, f in enumerate(files):
            out[key if len(files) == 1 and not isinstance(value, (list, tuple)) else f"{key}[{i}]"] = io.sha256_file(f)
    return out

def write_manifest(*, inputs: list[Any] = (), outputs: list[Any] = (), output: Any = None,
                   run_dir: str | os.PathLike | None = None, manifest_path: str | os.PathLike | None = None,
                   seed: int | None = None, extra: dict[str, Any] | None = None) -> Path | None:
    """Write the manifest for this invocation; returns its path (or None when there is nowhere to put it)."""
    from paperkit.core import io, manifest, runs

    ctx = _ctx()
    run = ctx.meta.get(_RUN_KEY)
    if run is not None and run_dir is not None and Path(run_dir) == Path(run.path) and run.stage_seconds:
        extra = {**(extra or {}), "stage_seconds": dict(run.stage_seconds)}   # stages computed by this invocation
    outs = list(outputs)
    if manifest_path is not None:
        target = Path(manifest_path)
    elif run_dir is not None:
        target = Path(run_dir) / runs.MANIFEST_NAME
        if not outs:
            outs = runs.RunDir(run_dir).outputs()
    elif output is not None and not io.is_stdio(output):
        target = manifest.manifest_path_for(output)
    else:
        return None
    if output is not None and output not in outs:
        outs.insert(0, output)
    m = manifest.build_manifest(
        command=ctx.command.name or "",
        argv=state.settings.get("argv") or sys.argv,
        parameters=parameters(),
        seed=seed,
        inputs=[i for i in inputs if i is not None],
        outputs=[o for o in outs if o is not None and (io.is_stdio(o) or Path(o).exists())],
        wall_time_s=elapsed(),
        extra=extra,
    )
    manifest.write_manifest(target, m)
    return target


def meta_flag(name: str) -> Any:
    return _ctx().meta.get(META_KEY, {}).get(name)
