"""``paperkit bandit-bound``: the DR-MAB regret lower bound of Wang et al. (ICML 2025), per arm."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands import _bandit_common as common

SETTINGS = "paperkit.methods.bandit.run:BoundSettings"


@options.command("bandit-bound", writes=("summary_path",),
                 short_help="Per-arm regret lower-bound terms of a reward+dueling bandit instance.")
@common.instance_schema_help
@common.instance_options
@common.alpha_option
@common.horizon_option(None, low=2, help="Also report C(alpha)·log T for this horizon.")
@options.output_options
@click.option("--summary", "summary_path", default=None, metavar="PATH",
              help="Where to write the totals as JSON [default: <output>.summary.json; none for stdout].")
def cli(preset, instance_path, output, fmt, manifest_path, summary_path, **_):
    """Regret lower bound of DR-MAB (Theorem 1): each arm is paid for by the cheaper feedback.

    Reads an instance (--preset, default official16, or --instance YAML, '-' for stdin) and writes one
    row per suboptimal arm: the reward cost alpha·Δ^R/kl(mu_k, mu_best) ('inf' for a mean tying the best
    arm's), the dueling cost (RMED term, with the arm l that attains it), their minimum, which feedback
    is cheaper and the arm's no-fusion term (sum of both costs); with --horizon, the arm's share of
    C(alpha)·log T. Every row is an arm (0-based 'arm' and 'duel_partner'; with arm names in the
    instance, 'name' and 'duel_partner_name' too), so typed readers see one type per column. The
    totals — C(alpha) (the sum of 'cost'), the no-fusion constant, the sums of both costs, C(alpha)·log
    T and the best arm — go to a summary JSON (--summary, default <output>.summary.json) and to one line
    on stderr. Deterministic: no seed.

    \b
    Examples:
      $ paperkit bandit-bound --preset official16 --alpha 0.5
      $ paperkit bandit-bound --preset reward-gap:0.11 --horizon 200000 -o bound.csv
    """
    from paperkit.core import io, tables
    from paperkit.methods.bandit.run import BoundSettings, bound_rows, bound_summary, prepare_bound
    from paperkit_cli import runtime

    inputs = prepare_bound(runtime.settings(BoundSettings), preset=preset, instance_path=instance_path)
    summary = bound_summary(inputs)
    if summary_path is None and not io.is_stdio(output):
        summary_path = f"{output}.summary.json"
    tables.write_table(output, bound_rows(inputs), fmt=fmt)
    if summary_path is not None:
        io.write_json(summary_path, summary)
    at_t = "" if summary["lower_bound_at_T"] is None else f"  C(alpha)·log T = {summary['lower_bound_at_T']:.4g}"
    options.report(f"C(alpha) = {summary['lower_bound_constant']:.4g}  no-fusion constant = "
                   f"{summary['no_fusion_constant']:.4g}{at_t}  (best arm {summary['best_arm']}"
                   + (f" {summary['best_arm_name']!r}" if "best_arm_name" in summary else "") + ")")
    runtime.write_manifest(inputs=list(inputs.instance.files), output=output, manifest_path=manifest_path,
                           outputs=[summary_path] if summary_path else [], extra={"totals": summary})
