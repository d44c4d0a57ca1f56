"""``paperkit bandit-bound``: the DR-MAB regret lower bound of Wang et al. (ICML 2025), per arm."""

from __future__ import annotations

from paperkit_cli import options
from paperkit_cli.commands import _bandit_common as common

SETTINGS = "paperkit.methods.bandit.run:BoundSettings"


@options.command("bandit-bound", short_help="Per-arm regret lower-bound terms of a reward+dueling bandit instance.")
@common.instance_options
@common.alpha_option
@common.horizon_option(None, low=2, help="Also report C(alpha)·log T for this horizon.")
@options.output_options
def cli(preset, instance_path, output, fmt, manifest_path, **_):
    """Regret lower bound of DR-MAB (Theorem 1): each arm is paid for by the cheaper feedback.

    Reads an instance (--preset, default official16, or --instance YAML, '-' for stdin) and writes one
    row per suboptimal arm: the reward cost alpha·Δ^R/kl(mu_k, mu_1) ('inf' for a mean tying the best
    arm's), the dueling cost (RMED term, with the arm l that attains it), their minimum, which feedback
    is cheaper and the arm's no-fusion term (sum of both costs); with --horizon, the arm's share of
    C(alpha)·log T. A last 'total' row sums each column: C(alpha), the no-fusion constant and
    C(alpha)·log T. Deterministic: no seed.

    \b
    Examples:
      $ paperkit bandit-bound --preset official16 --alpha 0.5
      $ paperkit bandit-bound --preset reward-gap:0.11 --horizon 200000 -o bound.csv
    """
    from paperkit.core import tables
    from paperkit.methods.bandit.run import BoundSettings, bound_rows, prepare_bound
    from paperkit_cli import runtime

    inputs = prepare_bound(runtime.settings(BoundSettings), preset=preset, instance_path=instance_path)
    tables.write_table(output, bound_rows(inputs), fmt=fmt)
    runtime.write_manifest(inputs=list(inputs.instance.files), output=output, manifest_path=manifest_path)
