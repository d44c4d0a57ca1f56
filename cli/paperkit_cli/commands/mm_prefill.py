"""``paperkit mm-prefill``: apply MMInference sparse-prefill patterns to Q/K/V and measure them vs dense."""

from __future__ import annotations

import click

from paperkit_cli import options

PATTERN_CHOICES = ["a_shape", "vs", "block", "grid", "q_boundary", "2d_boundary", "dense"]
BOUNDARY = ("q_boundary", "2d_boundary")


class FiniteFloat(click.FloatRange):
    """A float in a range that also refuses NaN and ±inf (click's ranges let NaN through)."""

    def convert(self, value, param, ctx):
        import math

        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


memory_option = click.option(
    "--max-memory-gb", type=FiniteFloat(0.0, min_open=True), default=None, metavar="GB",
    help="Refuse runs whose estimated memory (from the shapes, before allocating) exceeds GB "
         "[default: 3/4 of RAM].")

input_options = options._compose(
    click.option("--qkv", "qkv_path", default=None, type=click.Path(dir_okay=False), metavar="FILE",
                 help="Captured tensors: .npz (arrays q, k, v, optional modality) or .pt dict; [H,N,D] or [L,H,N,D]."),
    click.option("--synthetic", default=None, metavar="SPEC",
                 help="Synthetic planted heads instead: preset 'video' or 'mixed', or a YAML spec file."),
    click.option("--block-size", type=click.Choice(["16", "32", "64", "128"]), default="64", show_default=True,
                 help="Tile size (query and key blocks)."),
)


def _stored_bytes(path) -> int:
    """Uncompressed size of the arrays in an .npz (its zip directory), else the file's size."""
    import os
    import zipfile

    try:
        if str(path).lower().endswith(".npz") and zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                return sum(i.file_size for i in z.infolist())
        return os.path.getsize(path)
    except (OSError, zipfile.BadZipFile):
        return 0  # unreadable: the loader names the problem


def load_input(qkv_path, synthetic, seed, block_size, *, estimate, max_memory_gb, what):
    """(data dict, input files) from --qkv or --synthetic; exactly one of them.

    ``estimate(layers, heads, tokens, dim, itemsize)`` gives the run's bytes; it is checked against
    ``--max-memory-gb`` before a synthetic sample is generated (from the spec's sizes), and for captured
    tensors before loading (from the stored sizes) and again once the shapes are known.
    """
    from paperkit.core.errors import UsageError
    from paperkit.methods.mm_prefill import data, memory

    if (qkv_path is None) == (synthetic is None):
        raise UsageError("give exactly one of --qkv FILE or --synthetic SPEC")
    if qkv_path is not None:
        memory.check_memory(2 * _stored_bytes(qkv_path), f"loading {qkv_path}", max_memory_gb)
        d = data.load_qkv(qkv_path)
        L, H, n, dim = d["q"].shape
        memory.check_memory(estimate(L, H, n, dim, d["q"].element_size()), what, max_memory_gb)
        return d, [qkv_path]
    spec = data.resolve_spec(synthetic)
    n = spec.tokens()
    need = estimate(spec.layers, len(spec.heads), n, spec.dim, 4) + memory.synthetic_bytes(1, 1, n, spec.dim)
    memory.check_memory(need, f"{what} on the synthetic sample ({n:,} tokens)", max_memory_gb)
    files = [synthetic] if synthetic not in data.PRESETS else []
    return data.synthetic_qkv(spec, seed=seed, block=block_size), files


def require_modality(patterns, d, qkv_path, option):
    """UsageError (exit 2) when only boundary patterns were asked for and the input has one modality."""
    from paperkit.core.errors import UsageError

    asked = [p for p in patterns if p in BOUNDARY]
    if not asked or len(asked) < len(patterns):
        return
    mod = d["modality"]
    if mod is None or int(mod.min()) == int(mod.max()):
        why = (f"--qkv {qkv_path} has no 'modality' array" if mod is None
               else "every token has the same modality")
        raise UsageError(f"{option} {','.join(asked)}: boundary patterns need text and vision tokens, but {why}; "
                         "add a 'modality' array (0 text, 1 vision) beside q, k, v, or choose a_shape, vs, block "
                         "or grid")


@options.command("mm-prefill", short_help="Apply sparse-prefill patterns to Q/K/V: density, recall, error, time.")
@input_options
@click.option("--patterns", "patterns_path", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="patterns.json from mm-prefill-search (a pattern per layer and head).")
@click.option("--pattern", type=click.Choice(PATTERN_CHOICES), default=None,
              help="One pattern for every head instead of --patterns [default: vs].")
@click.option("--density", type=FiniteFloat(0.0, 1.0, min_open=True), default=None,
              help="Budget: fraction of causal (query, key) pairs computed [default: the searched one, else 0.1].")
@click.option("--backend", type=click.Choice(["auto", "torch", "triton"]), default="auto", show_default=True,
              help="Operator: auto = Triton on CUDA, torch on CPU.")
@options.device_option
@click.option("--masks", is_flag=True, help="Also write masks/L<l>_H<h>.png (computed pairs per head).")
@click.option("--save-out", is_flag=True, help="Also write out.npy, the sparse attention output [L,H,N,D].")
@memory_option
@options.seed_option
@options.run_dir_options
def cli(qkv_path, synthetic, block_size, patterns_path, pattern, density, backend, device, masks, save_out,
        max_memory_gb, seed, run_dir, resume, force):
    """Apply sparse-prefill patterns (MMInference, Li et al. ICML 2025) to captured or synthetic Q/K/V.

    Builds each head's index online (from --patterns, or one --pattern for all heads at --density), runs
    the sparse operator and dense attention, and writes to DIR: metrics.json (per head and a summary),
    heads.csv (layer, head, pattern, params, density, tile cost, attention-mass recall, output rel-L2 vs
    dense, backend), timing.csv (per layer: index build, sparse and dense SDPA milliseconds), optional
    masks/*.png and out.npy. Same inputs and seed give the same bytes in every file but timing.csv (and
    the manifest). The memory a run needs is estimated from the shapes first; over --max-memory-gb
    (default 3/4 of RAM) it is refused. Prints the per-head table on stderr and one JSON summary line
    on stdout.

    \b
    Examples:
      $ paperkit mm-prefill --synthetic video --pattern vs --density 0.1 --run-dir apply/
      $ paperkit mm-prefill --qkv calib.npz --patterns patterns.json --masks --run-dir apply/
    """
    import json

    import numpy as np

    from paperkit.core import io, plots, tables
    from paperkit.core.devices import resolve_device
    from paperkit.core.errors import UsageError
    from paperkit.core.progress import progress
    from paperkit.core.seeding import seed_everything
    from paperkit.methods.mm_prefill import evaluate
    from paperkit.methods.mm_prefill.search import check_patterns
    from paperkit_cli import runtime

    bs = int(block_size)
    dev = resolve_device(device)
    if backend == "triton" and dev.type != "cuda":
        import os

        if os.environ.get("TRITON_INTERPRET") != "1":
            raise UsageError("--backend triton on CPU needs TRITON_INTERPRET=1 (slow); use --backend torch")
    if patterns_path and pattern:
        raise UsageError("give --patterns or --pattern, not both")
    seed_everything(seed, torch=True)
    from paperkit.methods.mm_prefill import memory

    raw_doc = io.read_json(patterns_path) if patterns_path else None
    searched = check_patterns(raw_doc, source=io.display_name(patterns_path)).get("density") if raw_doc else None
    budget = density if density is not None else float(searched) if searched is not None else 0.1

    def estimate(L, H, n, dim, itemsize):
        return memory.apply_bytes(L, H, n, dim, itemsize=itemsize, block_size=bs, density=budget,
                                  save_out=save_out)

    d, files = load_input(qkv_path, synthetic, seed, bs, estimate=estimate, max_memory_gb=max_memory_gb,
                          what="mm-prefill")
    if pattern:
        require_modality([pattern], d, qkv_path, "--pattern")
    doc = None
    if patterns_path:
        doc = check_patterns(raw_doc, heads=d["q"].shape[1], layers=d["q"].shape[0],
                             source=io.display_name(patterns_path))
        files.append(patterns_path)
    q, k, v = (d[x].to(dev) for x in "qkv")
    modality = d["modality"].to(dev) if d["modality"] is not None else None
    from paperkit.methods.mm_prefill.index import check_qkv

    check_qkv(q[0], k[0], v[0], bs)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    with progress(total=q.shape[0], desc="mm-prefill", unit="layer") as bar:
        rows, outs, indices, timings = evaluate.apply_patterns(
            q, k, v, doc=doc, pattern=None if doc else (pattern or "vs"), density=budget, block_size=bs,
            backend=backend, modality=modality, on_layer=lambda: bar.update(1))
    tables.write_table(run.file("heads.csv"), rows)
    tables.write_table(run.file("timing.csv"), timings)  # the only data that differs run to run
    summary = {"layers": int(q.shape[0]), "heads": int(q.shape[1]), "tokens": int(q.shape[2]),
               "dim": int(q.shape[3]), "density_budget": budget, "backend": rows[0]["backend"],
               "mean_density": round(sum(r["density"] for r in rows) / len(rows), 6),
               "mean_recall": round(sum(r["recall"] for r in rows) / len(rows), 6),
               "mean_rel_l2": round(sum(r["rel_l2"] for r in rows) / len(rows), 6),
               "patterns": {p: sum(r["pattern"] == p for r in rows) for p in sorted({r["pattern"] for r in rows})}}
    if d.get("truth"):
        summary["planted"] = [[t["type"] for t in layer] for layer in d["truth"]]
    io.write_json(run.file("metrics.json"), {"summary": summary, "heads": rows})
    if masks:
        run.file("masks").mkdir(exist_ok=True)
        for layer, idx in enumerate(indices):
            for h in range(idx.heads):
                r = rows[layer * idx.heads + h]
                fig = evaluate.mask_figure(idx, h, f"L{layer} H{h}: {r['pattern']}, density {r['density']:.3f}, "
                                                   f"recall {r['recall']:.3f}")
                plots.save_figure(fig, run.file(f"masks/L{layer}_H{h}.png"))
    if save_out:
        import torch

        io.write_array(run.file("out.npy"), torch.stack(outs).float().cpu().numpy().astype(np.float32))
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=files,
                           extra={"backend": rows[0]["backend"], "device": dev.type})
    print_table(rows)
    options.echo_data(json.dumps({"run_dir": str(run.path), **summary}))


def print_table(rows: list[dict]) -> None:
    from paperkit_cli import state

    if state.settings.get("quiet"):
        return
    lines = [f"{'L':>3} {'H':>3}  {'pattern':<12} {'density':>8} {'recall':>8} {'rel_l2':>8}"]
    for r in rows:
        lines.append(f"{r['layer']:>3} {r['head']:>3}  {r['pattern']:<12} {r['density']:>8.4f} {r['recall']:>8.4f} "
                     f"{r['rel_l2']:>8.4f}")
    click.echo("\n".join(lines), err=True)
