"""``paperkit mm-prefill-bench``: dense SDPA vs the sparse-prefill operator across sizes and densities."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands.mm_prefill import memory_option


def int_list(ctx, param, value):
    try:
        out = [int(x) for x in str(value).split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"'{value}' is not a comma-separated list of integers") from None
    if not out or min(out) < 1:
        raise click.BadParameter("expected positive integers")
    return out


def float_list(ctx, param, value):
    import math

    try:
        out = [float(x) for x in str(value).split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"'{value}' is not a comma-separated list of numbers") from None
    bad = [x for x in out if not math.isfinite(x)]
    if bad:
        raise click.BadParameter(f"{bad[0]!r} is not a finite number")
    if not out or min(out) <= 0 or max(out) > 1:
        raise click.BadParameter("expected densities in (0, 1]")
    return out


@options.command("mm-prefill-bench", short_help="Benchmark dense SDPA vs sparse prefill: CSV and speedup plot.")
@click.option("--n", "ns", default="4096,8192", show_default=True, callback=int_list, metavar="N[,N...]",
              help="Sequence lengths.")
@click.option("--heads", type=click.IntRange(min=1), default=8, show_default=True, help="Attention heads.")
@click.option("--dim", type=click.IntRange(min=8), default=64, show_default=True, help="Head dimension.")
@click.option("--density", "densities", default="0.05", show_default=True, callback=float_list,
              metavar="D[,D...]", help="Fractions of causal pairs computed (VS index sized to each).")
@click.option("--dtype", type=click.Choice(["float32", "bfloat16", "float16"]), default="float32",
              show_default=True, help="Tensor dtype (bf16/fp16 are for CUDA).")
@click.option("--backend", type=click.Choice(["auto", "torch", "triton"]), default="auto", show_default=True,
              help="Sparse operator: auto = Triton on CUDA, torch on CPU.")
@options.device_option
@click.option("--repeats", type=click.IntRange(min=1), default=3, show_default=True, help="Timed runs (median).")
@options.jobs_option
@memory_option
@options.seed_option
@options.run_dir_options
def cli(ns, heads, dim, densities, dtype, backend, device, repeats, jobs, max_memory_gb, seed, run_dir, resume,
        force):
    """Time causal dense SDPA against the sparse-prefill operator (MMInference) on random Q/K/V.

    For every N and density: the VS index is sized to the density once, then index building, the sparse
    operator and dense SDPA are timed side by side (median of --repeats after a warm-up). Writes to DIR:
    bench.csv (n, heads, dim, dtype, device, backend, density, dense_ms, sparse_ms, index_ms, speedup,
    speedup with index, index share of sparse time, output rel-L2 vs dense) and speedup.png. -j/--jobs
    sets torch's CPU threads (0 = one per core). Sizes whose estimated memory exceeds --max-memory-gb
    are refused before anything is allocated. Prints the table on stderr and one JSON line on stdout.

    \b
    Examples:
      $ paperkit mm-prefill-bench --n 4096,8192,16384 --density 0.02,0.05,0.2 --device cpu --run-dir bench/
      $ paperkit mm-prefill-bench --n 32768,131072 --heads 8 --dim 128 --dtype bfloat16 --device cuda --run-dir gpu/
    """
    import json

    import torch

    from paperkit.core import plots, tables
    from paperkit.core.devices import resolve_device
    from paperkit.core.errors import UsageError
    from paperkit.core.progress import progress
    from paperkit.methods.mm_prefill import evaluate
    from paperkit_cli import runtime

    dev = resolve_device(device)
    if dtype != "float32" and dev.type != "cuda":
        raise UsageError(f"--dtype {dtype} is for CUDA; on CPU use float32")
    if backend == "triton" and dev.type != "cuda":
        raise UsageError("--backend triton needs a CUDA device (the CPU interpreter is for tests only)")
    if min(ns) < 64:
        raise UsageError(f"--n {min(ns)} is smaller than one 64-token block")
    from paperkit.methods.mm_prefill import memory

    itemsize = torch.empty((), dtype=getattr(torch, dtype)).element_size()
    need, at = max((memory.bench_bytes(n, heads, dim, itemsize=itemsize, block_size=64, density=d), (n, d))
                   for n in ns for d in densities)
    memory.check_memory(need, f"mm-prefill-bench at --n {at[0]} --heads {heads} --dim {dim} --density {at[1]:g}",
                        max_memory_gb)
    import os

    torch.set_num_threads(jobs if jobs > 0 else (os.cpu_count() or 1))
    run = runtime.start_run(run_dir, resume=resume, force=force)
    rows = []
    points = [(n, d) for n in ns for d in densities]
    with progress(total=len(points), desc="mm-prefill-bench", unit="point") as bar:
        for n, d in points:
            rows.append(evaluate.bench_point(n, heads, dim, d, device=dev, backend=backend,
                                             dtype=getattr(torch, dtype), repeats=repeats, seed=seed))
            bar.update(1)
    tables.write_table(run.file("bench.csv"), rows)
    plots.save_figure(evaluate.speedup_figure(rows), run.file("speedup.png"))
    runtime.write_manifest(run_dir=run.path, seed=seed, extra={"backend": rows[0]["backend"], "device": dev.type,
                                                                "threads": torch.get_num_threads()})
    from paperkit_cli import state

    if not state.settings.get("quiet"):
        lines = [f"{'n':>7} {'density':>8} {'dense ms':>10} {'sparse ms':>10} {'index ms':>9} {'speedup':>8}"]
        for r in rows:
            lines.append(f"{r['n']:>7} {r['density']:>8.4f} {r['dense_ms']:>10.1f} {r['sparse_ms']:>10.1f} "
                         f"{r['index_ms']:>9.1f} {r['speedup']:>8.2f}")
        click.echo("\n".join(lines), err=True)
    options.echo_data(json.dumps({"run_dir": str(run.path), "device": dev.type, "backend": rows[0]["backend"],
                                  "speedup": {f"{r['n']}@{r['density_target']:g}": r["speedup"] for r in rows}}))
