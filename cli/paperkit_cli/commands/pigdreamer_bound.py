"""``paperkit pigdreamer-bound``: the tabular asymmetric bound of PIGDreamer's Theorem 3.3 (check 1)."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.pigdreamer.run:PigdreamerBoundSettings"


@options.command("pigdreamer-bound", writes=("plot",),
                 short_help="Tabular check of the asymmetric-critic bound on a tiger CPOMDP: JSON + PNG.")
@click.option("--accuracy", type=options.FiniteFloat(), default=0.85, show_default=True,
              help="Probability that listening hears the tiger's side, in [0.5, 1].")
@click.option("--gamma", type=options.FiniteFloat(), default=0.95, show_default=True, help="Discount, in (0, 1).")
@click.option("--listen-cost", type=options.FiniteFloat(0.0, 100.0), default=0.05, show_default=True,
              help="Cost of one listen.")
@click.option("--right-cost", type=options.FiniteFloat(0.0, 100.0), default=0.1, show_default=True,
              help="Cost per step spent in state 'tiger right'.")
@click.option("--belief-step", type=options.FiniteFloat(), default=0.01, show_default=True,
              help="Spacing of the belief grid the POMDP is solved on.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None, metavar="PNG",
              help="Also draw both value curves (reward and cost) against the belief.")
@options.json_output_options
def cli(output, manifest_path, plot, **_):
    """Solve a 2-state tiger CPOMDP (listen / open left / open right; reward −1 / +10 / −100, cost for the
    tiger door, listening and the right state) by value iteration on a belief grid, and the MDP exactly.

    Writes one JSON object: the model, the MDP's state values, per grid belief the POMDP's values and the
    asymmetric Σ_s b(s)V*_MDP(s) for reward and cost, the largest violation of each inequality, and
    reward_holds / cost_holds (Σ b V_MDP ≥ V_POMDP for reward, ≤ for cost, within 1e-6).

    \b
    Examples:
      $ paperkit pigdreamer-bound -o bound.json --plot bound.png
      $ paperkit pigdreamer-bound --accuracy 0.6 --gamma 0.9
    """
    import json

    from paperkit.core import io, plots
    from paperkit.methods.pigdreamer.plots import bound_figure
    from paperkit.methods.pigdreamer.run import PigdreamerBoundSettings, execute_pigdreamer_bound
    from paperkit_cli import runtime

    s = runtime.settings(PigdreamerBoundSettings)
    result = execute_pigdreamer_bound(s)
    options.report(f"reward: Σ b V_MDP ≥ V_POMDP {'holds' if result['reward_holds'] else 'FAILS'} "
                   f"(max violation {result['reward_max_violation']:.3g}); cost: Σ b C_MDP ≤ C_POMDP "
                   f"{'holds' if result['cost_holds'] else 'FAILS'} (max violation {result['cost_max_violation']:.3g})")
    if plot:
        plots.save_figure(bound_figure(result), plot)
    if io.is_stdio(output):
        options.echo_data(json.dumps(result))
    else:
        io.write_json(output, result)
    runtime.write_manifest(output=output, manifest_path=manifest_path, outputs=[plot] if plot else [])
