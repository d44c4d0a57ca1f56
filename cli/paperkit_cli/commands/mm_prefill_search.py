"""``paperkit mm-prefill-search``: offline per-head sparse-pattern search (MMInference), patterns JSON out."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands.mm_prefill import FiniteFloat, input_options, memory_option

CANDIDATES = "a_shape,vs,block,grid,q_boundary,2d_boundary"


@options.command("mm-prefill-search", short_help="Search the best sparse pattern per layer/head; write patterns JSON.")
@input_options
@click.option("--density", type=FiniteFloat(0.0, 1.0, min_open=True), default=0.1, show_default=True,
              help="Matched budget: fraction of causal (query, key) pairs every candidate may compute.")
@click.option("--candidates", default=CANDIDATES, show_default=True,
              help="Comma-separated patterns to try (boundary ones need a modality array).")
@click.option("--sample-blocks", type=click.IntRange(min=0), default=32, show_default=True,
              help="Query blocks per head on which recall is scored (0: all).")
@memory_option
@options.seed_option
@click.option("-o", "--output", default="-", show_default=True, metavar="PATH", help="patterns.json ('-' = stdout).")
@click.option("--manifest", "manifest_path", default=None, metavar="PATH",
              help="Where to write the manifest [default: beside the output].")
def cli(qkv_path, synthetic, block_size, density, candidates, sample_blocks, max_memory_gb, seed, output,
        manifest_path):
    """Offline, kernel-aware per-head pattern search (MMInference, Li et al. ICML 2025).

    For every layer and head of a calibration sample, builds each candidate pattern online (A-shape,
    vertical-slash, block-sparse, Grid with estimated stride/phase, Q-/2D-boundary) sized to the same
    density, scores it by the attention mass of dense attention it keeps on sampled query blocks, and
    keeps the best (near-ties go to the simpler pattern). Writes JSON: layer → head → pattern, params,
    score, density, every candidate's score and the grid estimate; mm-prefill --patterns reads it back.
    Boundary candidates need a modality array (skipped without one; an error if they are all that was
    asked for). Runs whose estimated memory exceeds --max-memory-gb are refused before loading. A
    per-head summary goes to stderr.

    \b
    Examples:
      $ paperkit mm-prefill-search --synthetic video --density 0.1 -o patterns.json
      $ paperkit mm-prefill-search --qkv calib.npz --density 0.05 --candidates vs,block,grid -o patterns.json
    """
    from paperkit.core import io
    from paperkit.core.errors import UsageError
    from paperkit.core.progress import progress
    from paperkit.core.seeding import seed_everything
    from paperkit.methods.mm_prefill import search as SE
    from paperkit.methods.mm_prefill.index import check_qkv
    from paperkit_cli import runtime
    from paperkit_cli.commands.mm_prefill import load_input

    names = tuple(c.strip() for c in candidates.split(",") if c.strip())
    bad = [c for c in names if c not in SE.PATTERNS]
    if bad or not names:
        raise UsageError(f"--candidates: unknown pattern(s) {bad}; expected some of {', '.join(SE.PATTERNS)}")
    bs = int(block_size)
    seed_everything(seed, torch=True)
    from paperkit.methods.mm_prefill import memory
    from paperkit_cli.commands.mm_prefill import require_modality

    def estimate(L, H, n, dim, itemsize):
        return memory.search_bytes(L, H, n, dim, itemsize=itemsize, block_size=bs, density=density,
                                   sample_blocks=sample_blocks or None)

    d, files = load_input(qkv_path, synthetic, seed, bs, estimate=estimate, max_memory_gb=max_memory_gb,
                          what="mm-prefill-search")
    require_modality(names, d, qkv_path, "--candidates")
    q, k, v = d["q"], d["k"], d["v"]
    check_qkv(q[0], k[0], v[0], bs)
    L, H = q.shape[:2]
    with progress(total=L * H, desc="mm-prefill-search", unit="head") as bar:
        doc = SE.search_model(q.float(), k.float(), v.float(), density=density, block_size=bs, patterns=names,
                        modality=d["modality"], sample_blocks=sample_blocks or None, seed=seed,
                        on_head=lambda: bar.update(1))
    if d.get("truth"):
        doc["planted"] = [[t["type"] for t in layer] for layer in d["truth"]]
    text = SE.dumps(doc) + "\n"
    if io.is_stdio(output):
        options.echo_data(text.rstrip("\n"))
    else:
        with io.atomic_write(output) as f:
            f.write(text)
    runtime.write_manifest(inputs=files, output=output, manifest_path=manifest_path, seed=seed)
    _print_summary(doc)


def _print_summary(doc: dict) -> None:
    from paperkit_cli import state

    if state.settings.get("quiet"):
        return
    planted = doc.get("planted")
    lines = [f"{'L':>3} {'H':>3}  {'pattern':<12} {'score':>7} {'density':>8}" + ("  planted" if planted else "")]
    for lk, row in doc["layers"].items():
        for hk, e in row.items():
            extra = f"  {planted[int(lk)][int(hk)]}" if planted else ""
            lines.append(f"{lk:>3} {hk:>3}  {e['pattern']:<12} {e['score']:>7.4f} {e['density']:>8.4f}{extra}")
    click.echo("\n".join(lines), err=True)
