"""``paperkit pigdreamer-eval``: deployment episodes of a pigdreamer-train run (naive model and actor only)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._pigdreamer_common import report_summary

SETTINGS = "paperkit.methods.pigdreamer.run:PigdreamerEvalSettings"


@options.command("pigdreamer-eval", short_help="Evaluate a pigdreamer-train run's deployed policy (observations only): JSON.")
@click.argument("run", type=click.Path(file_okay=False), metavar="RUN")
@click.option("--episodes", type=click.IntRange(1, 100_000), default=20, show_default=True,
              help="Deployment episodes, on seeds the training evaluations did not use.")
@click.option("--policy", type=click.Choice(["model", "sample", "greedy", "random"]), default="model",
              show_default=True,
              help="Actions: as the run's training evaluations picked them (its --eval-policy), sampled from the "
                   "actor, its argmax, or uniform random (the baseline to beat; with --cost-calibration, episodes "
                   "whose actions the actor did not pick).")
@click.option("--cost-calibration", is_flag=True,
              help="Also check the world model's cost reading on these episodes: per imagination step, the "
                   "real cost against the cost head on the filtered states, on the priors run with the real "
                   "actions, and on the agent's own imagination (adds cost_calibration to the JSON).")
@options.seed_option
@options.device_option
@options.json_output_options
def cli(run, output, manifest_path, **_):
    """Roll out the deployed policy of RUN (a pigdreamer-train --run-dir) on its own environment.

    Reads RUN/model.pt. Only the naive encoder, RSSM and actor run: the privileged vector the environment
    reports is never passed on (the policy raises if it is). Writes one JSON object: variant, env,
    episodes, policy (sample, greedy or random), return_mean ± return_se, cost_mean, cost_limit, within_limit (share of episodes with cost
    ≤ limit) and per_episode (episode, return, cost).

    With --cost-calibration the JSON also holds cost_calibration: what the Lagrangian's imagined cost is made
    of, against the cost the policy really got, per imagination step k and scaled to one episode (real,
    posterior, open_loop, imagined, and for the privileged variants which prior loses it). The world model
    reads the env's privileged vector there, as in training; the policy still acts on observations only.
    The real actions are the actor's own picks, so the model error it seeks out shows in open_loop too; with
    --policy random the same reading on actions the actor did not pick tells the two apart. There, imagined
    is still the agent's actor imagining from the random episodes' states, so its ratio to the random
    policy's real cost is no calibration: read open_loop and posterior.

    \b
    Examples:
      $ paperkit pigdreamer-train --steps 2000 --run-dir runs/pig
      $ paperkit pigdreamer-eval runs/pig --episodes 20 -o eval.json
      $ paperkit pigdreamer-eval runs/pig --episodes 100 --cost-calibration | jq .cost_calibration.ratio_to_real
      $ paperkit pigdreamer-eval runs/pig --episodes 100 --cost-calibration --policy random -o random.json
    """
    import json

    from paperkit.core import io
    from paperkit.methods.pigdreamer.run import (
        PigdreamerEvalSettings,
        execute_pigdreamer_eval,
        prepare_pigdreamer_eval,
    )
    from paperkit_cli import runtime

    s = runtime.settings(PigdreamerEvalSettings)
    blob = prepare_pigdreamer_eval(s, run)
    result = execute_pigdreamer_eval(s, blob)
    report_summary(result, f"pigdreamer-eval {run}")
    if io.is_stdio(output):
        options.echo_data(json.dumps(result))
    else:
        io.write_json(output, result)
    runtime.write_manifest(inputs=[f"{run}/model.pt"], output=output, manifest_path=manifest_path, seed=s.seed)
