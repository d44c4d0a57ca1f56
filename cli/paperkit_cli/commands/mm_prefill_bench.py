"""``paperkit mm-prefill-bench``: dense SDPA vs the sparse-prefill operator across sizes and densities."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._mm_prefill_common import backend_option, memory_option

SETTINGS = "paperkit.methods.mm_prefill.run:MmPrefillBenchSettings"


@options.command("mm-prefill-bench", short_help="Benchmark dense SDPA vs sparse prefill: CSV and speedup plot.")
@click.option("--n", "n", type=options.ListOf(click.IntRange(min=1)), default="4096,8192", show_default=True,
              metavar="N[,N...]", help="Sequence lengths, a list.")
@click.option("--heads", type=click.IntRange(min=1), default=8, show_default=True, help="Attention heads.")
@click.option("--dim", type=click.IntRange(min=8), default=64, show_default=True, help="Head dimension.")
@click.option("--density", "density", type=options.ListOf(options.FiniteFloat(0.0, 1.0, min_open=True)),
              default="0.05", show_default=True, metavar="D[,D...]",
              help="Fractions of causal pairs computed (VS index sized to each), a list of numbers in (0, 1]; "
                   "bench.csv keeps the target and the achieved density, and a warning says when the 64-token "
                   "tiles cannot go that low at an N.")
@click.option("--dtype", type=click.Choice(["float32", "bfloat16", "float16"]), default="float32",
              show_default=True, help="Tensor dtype (bf16/fp16 are for CUDA).")
@backend_option
@options.device_option
@click.option("--repeats", type=click.IntRange(min=1, max=1000), default=3, show_default=True, help="Timed runs (median).")
@options.jobs_option
@memory_option
@options.seed_option
@options.run_dir_options
def cli(run_dir, resume, force, **_):
    """Time causal dense SDPA against the sparse-prefill operator (MMInference) on random Q/K/V.

    For every N and density: the VS index is sized to the density once, then index building, the sparse
    operator and dense SDPA are timed side by side (median of --repeats after a warm-up). Writes to DIR:
    bench.csv (n, heads, dim, dtype, device, backend, density, dense_ms, sparse_ms, index_ms, speedup,
    speedup with index, index share of sparse time, output rel-L2 vs dense) and speedup.png; each point
    is checkpointed and --resume continues an interrupted run. -j/--jobs sets torch's CPU threads (0 =
    one per core). Sizes whose estimated memory exceeds --max-memory-gb are refused before anything is
    allocated. Prints the table on stderr and one JSON line on stdout.

    \b
    Examples:
      $ paperkit mm-prefill-bench --n 4096,8192,16384 --density 0.02,0.05,0.2 --device cpu --run-dir bench/
      $ paperkit mm-prefill-bench --n 32768,131072 --heads 8 --dim 128 --dtype bfloat16 --device cuda --run-dir gpu/
    """
    import json

    import torch

    from paperkit.core import plots, tables
    from paperkit.methods.mm_prefill.plots import speedup_figure
    from paperkit.methods.mm_prefill.run import (
        MmPrefillBenchSettings,
        execute_mm_prefill_bench,
        prepare_mm_prefill_bench,
    )
    from paperkit_cli import runtime

    s = runtime.settings(MmPrefillBenchSettings)
    inputs = prepare_mm_prefill_bench(s)
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("max_memory_gb",))
    rows = execute_mm_prefill_bench(inputs, run)
    tables.write_table(run.file("bench.csv"), rows)
    plots.save_figure(speedup_figure(rows), run.file("speedup.png"))
    runtime.write_manifest(run_dir=run.path, seed=s.seed, extra={"backend": rows[0]["backend"],
                                                                "device": inputs.device.type,
                                                                "threads": torch.get_num_threads()})
    options.report_table(rows, [("n", "n", ""), ("density", "density", ".4f"), ("dense_ms", "dense ms", ".1f"),
                                ("sparse_ms", "sparse ms", ".1f"), ("index_ms", "index ms", ".1f"),
                                ("speedup", "speedup", ".2f")])
    options.echo_data(json.dumps({"run_dir": str(run.path), "device": inputs.device.type,
                                  "backend": rows[0]["backend"],
                                  "speedup": {f"{r['n']}@{r['density_target']:g}": r["speedup"] for r in rows}}))
