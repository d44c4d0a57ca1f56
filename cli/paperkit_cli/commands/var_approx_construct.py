"""``paperkit var-approx-construct``: check the proof's construction (quantising FFN + contextual attention)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._var_approx_common import init_option


@options.command("var-approx-construct", short_help="Check the proof's quantiser and contextual mapping on a grid.")
@init_option
@click.option("--dim", type=click.IntRange(1, 8), default=1, show_default=True, help="Channels d per token.")
@click.option("--delta", type=options.FiniteFloat(0.0, 0.5, min_open=True), default=0.25, show_default=True,
              help="Grid step δ (1/k): every token is quantised to {0, δ, ..., 1 − δ}.")
@click.option("--scales", default="2,4,8", show_default=True, metavar="LIST|var|geom:A:B:K",
              help="Pyramid scales applied to the grid contexts.")
@click.option("--attention-scale", type=options.FiniteFloat(0.0, 1000.0, min_open=True), default=7.0,
              show_default=True, help="a in the rank-1 scores a·u_i·u_j.")
@click.option("--max-contexts", type=click.IntRange(1, 10_000_000), default=100_000, show_default=True,
              help="Refuse grids with more contexts than this.")
@options.seed_option
@options.json_output_options
def cli(init, dim, delta, scales, attention_scale, max_contexts, seed, output, manifest_path):
    """Run the constructive proof of Thm 6.6 (as reconstructed; Lemma 5.4) on every input of a δ-grid: a
    fixed ReLU FFN quantises the inputs (exactly, away from bands of width η = δ/10), and one rank-1
    single-head softmax attention layer gives every (token, context) pair an id. Reports whether the ids are
    distinct on the initial map and on the up-interpolated pyramid, and the smallest gaps. --seed draws
    the inputs' positions inside their grid cells (each is quantised back to the cell's corner).

    Writes one JSON object to --output (default stdout).

    \b
    Examples:
      $ paperkit var-approx-construct --init 2x2 --dim 1 --delta 0.25
      $ paperkit var-approx-construct --init 2x2 --dim 2 --delta 0.5 --scales 2,4,8,16 -o construct.json
    """
    from paperkit.core import io
    from paperkit.methods.var_approx import pyramid as pyr
    from paperkit.methods.var_approx.construct import constructive_check
    from paperkit_cli import runtime

    size = pyr.parse_init(init)
    sched = pyr.check_scales(pyr.parse_scales(scales), size)
    report = constructive_check(size, dim, delta, sched, attention_scale=attention_scale, max_contexts=max_contexts, seed=seed)
    options.report_table([report], [("contexts", "contexts", "d"), ("distinct_before", "distinct (init)", ""),
                                    ("context_gap_before", "gap (init)", ".3g"), ("distinct_after", "distinct (pyramid)", ""),
                                    ("context_gap_after", "gap (pyramid)", ".3g")], title="var-approx-construct")
    if io.is_stdio(output):
        options.echo_data(io.dumps_json(report, indent=None))
    else:
        io.write_json(output, report)
    runtime.write_manifest(output=output, manifest_path=manifest_path, seed=seed)
