"""``paperkit mm-prefill-search``: offline per-head sparse-pattern search (MMInference), patterns JSON out."""

from __future__ import annotations

from pathlib import Path

import click

from paperkit_cli import options
from paperkit_cli.commands._mm_prefill_common import CANDIDATES, input_options, memory_option

SETTINGS = "paperkit.methods.mm_prefill.run:MmPrefillSearchSettings"


@options.command("mm-prefill-search", short_help="Search the best sparse pattern per layer/head; write patterns JSON.")
@input_options
@click.option("--density", type=options.FiniteFloat(0.0, 1.0, min_open=True), default=0.1, show_default=True,
              help="Matched budget: fraction of causal (query, key) pairs every candidate may compute (a warning "
                   "gives the achieved density when the tiles cannot go that low).")
@click.option("--candidates", type=options.ListOf(choices=CANDIDATES, unique=True), default=",".join(CANDIDATES),
              show_default=True, help="Patterns to try, a list (boundary ones need a modality array).")
@click.option("--sample-blocks", type=click.IntRange(min=0), default=32, show_default=True,
              help="Query blocks per head on which recall is scored (0: all).")
@options.device_option
@memory_option
@options.seed_option
@click.option("-o", "--output", default="-", show_default=True, metavar="PATH", help="patterns.json ('-' = stdout).")
@click.option("--manifest", "manifest_path", default=None, metavar="PATH",
              help="Where to write the manifest [default: beside the output].")
@click.option("--run-dir", default=None, type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Keep a checkpoint per finished (layer, head) here (with config.yaml and manifest.json), so that "
                   "--resume continues an interrupted search [default: no checkpoints].")
@click.option("--resume", is_flag=True, help="Continue an unfinished search from the heads checkpointed in --run-dir.")
@click.option("--force", is_flag=True, help="Start over in a --run-dir that holds a finished or unfinished search.")
def cli(qkv_path, synthetic, output, manifest_path, run_dir, resume, force, **_):
    """Offline, kernel-aware per-head pattern search (MMInference, Li et al. ICML 2025).

    For every layer and head of a calibration sample, builds each candidate pattern online (A-shape,
    vertical-slash, block-sparse, Grid with estimated stride/phase, Q-/2D-boundary) sized to the same
    density, scores it by the attention mass of dense attention it keeps on sampled query blocks, and
    keeps the best (near-ties go to the simpler pattern). Writes JSON: layer → head → pattern, params,
    score, density, every candidate's score and the grid estimate; mm-prefill --patterns reads it back.
    Boundary candidates need a modality array (skipped without one; an error if they are all that was
    asked for). Runs whose estimated memory exceeds --max-memory-gb are refused before loading. With
    --run-dir each finished (layer, head) is checkpointed and --resume searches only the missing heads, giving
    the same bytes as an uninterrupted search. A per-head
    summary goes to stderr. Layers and heads are numbered from 0. When even the smallest index of a head
    (whole diagonal tiles, sinks, local window) is above --density, it is used and a warning gives the
    achieved density and why (a smaller --block-size lowers that floor, about block-size/N).

    \b
    Examples:
      $ paperkit mm-prefill-search --synthetic video --density 0.1 -o patterns.json
      $ paperkit mm-prefill-search --qkv calib.npz --candidates vs,block,grid --run-dir search/ -o patterns.json
    """
    from paperkit.core import io
    from paperkit.core.errors import UsageError
    from paperkit.methods.mm_prefill.run import (
        MmPrefillSearchSettings,
        execute_mm_prefill_search,
        prepare_mm_prefill_search,
    )
    from paperkit.methods.mm_prefill.search import dumps
    from paperkit_cli import runtime

    if run_dir is None and (resume or force):
        raise UsageError("--resume and --force need --run-dir (where the search keeps its checkpoints)")
    s = runtime.settings(MmPrefillSearchSettings)
    inputs = prepare_mm_prefill_search(s, qkv_path=qkv_path, synthetic=synthetic)
    run = None
    if run_dir is not None:
        run = runtime.start_run(run_dir, resume=resume, force=force,
                                resume_free=("max_memory_gb", "output", "manifest_path"))
    doc = execute_mm_prefill_search(inputs, run)
    text = dumps(doc) + "\n"
    if io.is_stdio(output):
        options.echo_data(text.rstrip("\n"))
    else:
        with io.atomic_write(output) as f:
            f.write(text)
    runtime.write_manifest(inputs=inputs.sample.files, output=output, manifest_path=manifest_path, seed=s.seed)
    if run is not None:
        runtime.write_manifest(inputs=inputs.sample.files, run_dir=run.path, seed=s.seed)
    planted = doc.get("planted")
    rows = [{"layer": int(lk), "head": int(hk), "pattern": e["pattern"], "score": e["score"], "density": e["density"],
             "planted": planted[int(lk)][int(hk)] if planted else None}
            for lk, row in doc["layers"].items() for hk, e in row.items()]
    options.report_table(rows, [("layer", "L", ""), ("head", "H", ""), ("pattern", "pattern", ""),
                                ("score", "score", ".4f"), ("density", "density", ".4f")]
                         + ([("planted", "planted", "")] if planted else []))
