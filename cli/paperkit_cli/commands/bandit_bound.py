"""``paperkit bandit-bound``: the DR-MAB regret lower bound of Wang et al. (ICML 2025), per arm."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands.bandit_sim import instance_options


@options.command("bandit-bound", short_help="Per-arm regret lower-bound terms of a reward+dueling bandit instance.")
@instance_options
@click.option("--alpha", type=click.FloatRange(0.0, 1.0), default=0.5, show_default=True,
              help="Weight of the reward regret; the dueling regret gets 1 − alpha.")
@click.option("--horizon", "-T", "--T", "horizon", type=click.IntRange(min=2), default=None,
              help="Also report C(alpha)·log T for this horizon.")
@options.output_options
def cli(preset, instance_path, alpha, horizon, output, fmt, manifest_path):
    """Regret lower bound of DR-MAB (Theorem 1): each arm is paid for by the cheaper feedback.

    Reads an instance (--preset, default official16, or --instance YAML) and writes one row per
    suboptimal arm: the reward cost alpha·Δ^R/kl(mu_k, mu_1) ('inf' for a mean tying the best arm's),
    the dueling cost (RMED term, with the arm l that attains it), their minimum, which feedback is
    cheaper and the arm's no-fusion term (sum of both costs); with -T, the arm's share of C(alpha)·log T.
    A last 'total' row sums each column: C(alpha), the no-fusion constant and C(alpha)·log T.

    \b
    Examples:
      $ paperkit bandit-bound --preset official16 --alpha 0.5
      $ paperkit bandit-bound --preset reward-gap:0.11 -T 200000 -o bound.csv
    """
    import math

    from paperkit.core import tables
    from paperkit.methods import bandits as B
    from paperkit.methods.bandits.instances import resolve_instance
    from paperkit_cli import runtime

    inst = resolve_instance(preset, instance_path)
    lb = B.lower_bound(inst, alpha)
    rows = lb.rows()
    rows.append({"arm": "total", "reward_cost": float(lb.reward_cost.sum()), "duel_cost": float(lb.duel_cost.sum()),
                 "duel_partner": "", "cost": lb.constant, "cheaper": "", "no_fusion_cost": lb.no_fusion_constant})
    for r in rows:
        if horizon is not None:
            r["bound_at_T"] = r["cost"] * math.log(horizon)
        # JSON has no infinity: write it as 'inf' (as CSV does) rather than null
        r.update({k: "inf" for k, v in r.items() if isinstance(v, float) and math.isinf(v)})
    tables.write_table(output, rows, fmt=fmt)
    runtime.write_manifest(inputs=list(inst.files), output=output, manifest_path=manifest_path)
