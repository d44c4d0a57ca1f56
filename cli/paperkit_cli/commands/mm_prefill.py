"""``paperkit mm-prefill``: apply MMInference sparse-prefill patterns to Q/K/V and measure them vs dense."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._mm_prefill_common import (
    PATTERN_CHOICES,
    backend_option,
    input_options,
    memory_option,
)

SETTINGS = "paperkit.methods.mm_prefill.run:MmPrefillSettings"


@options.command("mm-prefill", short_help="Apply sparse-prefill patterns to Q/K/V: density, recall, error, time.")
@input_options
@click.option("--patterns", "patterns_path", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="patterns.json from mm-prefill-search (a pattern per layer and head).")
@click.option("--pattern", type=click.Choice(PATTERN_CHOICES), default=None,
              help="One pattern for every head instead of --patterns [default: vs].")
@click.option("--density", type=options.FiniteFloat(0.0, 1.0, min_open=True), default=None,
              help="Budget: fraction of causal (query, key) pairs computed [default: the searched one, else 0.1]; met "
                   "when the tiles allow it, else a warning gives the achieved density (below about "
                   "block-size/N no index fits).")
@backend_option
@options.device_option
@click.option("--masks", is_flag=True, default=False, help="Also write masks/L<l>_H<h>.png (computed pairs per head).")
@click.option("--save-out", is_flag=True, default=False, help="Also write out.npy, the sparse attention output [L,H,N,D].")
@memory_option
@options.seed_option
@options.run_dir_options
def cli(qkv_path, synthetic, patterns_path, run_dir, resume, force, **_):
    """Apply sparse-prefill patterns (MMInference, Li et al. ICML 2025) to captured or synthetic Q/K/V.

    Builds each head's index online (from --patterns, or one --pattern for all heads at --density), runs
    the sparse operator and dense attention, and writes to DIR: metrics.json (per head and a summary),
    heads.csv (layer, head, pattern, params, density, tile cost, attention-mass recall, output rel-L2 vs
    dense, backend), timing.csv (per layer: index build, sparse and dense SDPA milliseconds), optional
    masks/*.png and out.npy. Each layer is checkpointed when it finishes; --resume continues an
    interrupted run. Same inputs and seed give the same bytes in every file but timing.csv, the
    checkpoints and the manifest. The memory a run needs is estimated from the shapes first; over
    --max-memory-gb (default 3/4 of RAM) it is refused. Prints the per-head table on stderr and one JSON
    summary line on stdout (with heads_over_budget: heads whose density exceeds --density).

    Each head's index is sized to the largest one whose density stays within --density. Indices are
    whole tiles: the diagonal tiles alone are about block-size/N of the causal pairs, so a short
    sequence (N = 512 with 64-token tiles: at least 0.357 for vs) cannot meet a small budget; then the
    smallest index is used and a warning gives the achieved density and why (use a smaller
    --block-size). Layers and heads are numbered from 0, like every index in paperkit (L0_H0.png is
    the first head of the first layer).

    \b
    Examples:
      $ paperkit mm-prefill --synthetic video --pattern vs --density 0.1 --run-dir apply/
      $ paperkit mm-prefill --qkv calib.npz --patterns patterns.json --masks --run-dir apply/
    """
    import json

    from paperkit.core import io, plots, tables
    from paperkit.methods.mm_prefill.plots import mask_figure
    from paperkit.methods.mm_prefill.run import MmPrefillSettings, execute_mm_prefill, prepare_mm_prefill
    from paperkit_cli import runtime

    s = runtime.settings(MmPrefillSettings)
    inputs = prepare_mm_prefill(s, qkv_path=qkv_path, synthetic=synthetic, patterns_path=patterns_path)
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("max_memory_gb",))
    r = execute_mm_prefill(inputs, run)
    tables.write_table(run.file("heads.csv"), r.rows)
    tables.write_table(run.file("timing.csv"), r.timings)  # the only data that differs run to run
    io.write_json(run.file("metrics.json"), {"summary": r.summary, "heads": r.rows})
    if s.masks:
        run.file("masks").mkdir(exist_ok=True)
        for name, pooled, title in r.masks:
            plots.save_figure(mask_figure(pooled, r.summary["tokens"], title), run.file(f"masks/{name}"))
    if r.out is not None:
        io.write_array(run.file("out.npy"), r.out.numpy())
    runtime.write_manifest(run_dir=run.path, seed=s.seed, inputs=inputs.sample.files,
                           extra={"backend": r.backend, "device": inputs.device.type})
    options.report_table(r.rows, [("layer", "L", ""), ("head", "H", ""), ("pattern", "pattern", ""),
                                  ("density", "density", ".4f"), ("recall", "recall", ".4f"),
                                  ("rel_l2", "rel_l2", ".4f")])
    options.echo_data(json.dumps({"run_dir": str(run.path), **r.summary}))
