"""``paperkit pigdreamer-train``: PIGDreamer, privileged-information guided world models for safe POMDPs (Huang et al., ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._pigdreamer_common import report_summary

SETTINGS = "paperkit.methods.pigdreamer.run:PigdreamerTrainSettings"
VARIANTS = ("pig", "no-rep", "unprivileged", "informed", "nli", "ppo-lag")
_POS = click.IntRange(min=1, max=10**9)


@options.command("pigdreamer-train", short_help="Train PIGDreamer (or an ablation / SafeDreamer / PPO-Lag) on a safe partially observable task.")
@click.option("--env", default="hazardnav", show_default=True, metavar="hazardnav|pointgoal|GYM_ID",
              help="HazardNav-PO (9×9 grid, 3 hazards), PointGoal-PO (point robot, noisy lidar), or a registered "
                   "gymnasium id whose info holds 'cost' (and 'privileged' for privileged variants).")
@click.option("--obs", type=click.Choice(["vector", "image"]), default="vector", show_default=True,
              help="HazardNav's egocentric 5×5 patch as a flat vector (75) or a 3×5×5 image.")
@click.option("--moving-hazard", is_flag=True, help="Hazards take random steps (HazardNav) or drift (PointGoal).")
@click.option("--goal-compass/--no-goal-compass", default=True, show_default=True,
              help="HazardNav: while the goal is out of the 5×5 patch, mark 0.5 on the patch cell its offset clips "
                   "to (its direction), as Safety-Gymnasium's goal tasks always sense the goal. Without it the goal "
                   "is out of sight 3/4 of the time, and the privileged variants do not learn the search "
                   "(examples/pigdreamer/README.md).")
@click.option("--variant", type=click.Choice(VARIANTS), default="pig", show_default=True,
              help="pig (oracle posterior + L_align + asymmetric critics + twisted imagination); no-rep (without "
                   "L_align); unprivileged (= SafeDreamer); informed (decodes the privileged vector from s⁻); nli "
                   "(Scaffolder's nested latent imagination); ppo-lag (model-free PPO-Lagrangian).")
@click.option("--steps", type=_POS, default=20_000, show_default=True, help="Env steps (summed over --envs copies).")
@click.option("--cost-limit", type=options.FiniteFloat(), default=2.0, show_default=True,
              help="Cost budget b per episode (≥ 0) of the augmented Lagrangian.")
@click.option("--horizon", type=click.IntRange(max=1000), default=15, show_default=True,
              help="Imagination horizon H (≥ 1).")
@options.seed_option
@click.option("--envs", type=click.IntRange(1, 1024), default=8, show_default=True, help="Env copies stepped together.")
@click.option("--batch-size", type=click.IntRange(1, 4096), default=16, show_default=True,
              help="Replayed sequences per gradient step.")
@click.option("--seq-len", type=click.IntRange(2, 1024), default=32, show_default=True, help="Length of each sequence.")
@click.option("--train-ratio", type=options.FiniteFloat(0.0, 1e4, min_open=True), default=32.0, show_default=True,
              help="Replayed steps per env step (DreamerV3: 512 on GPU). 32 keeps 20k HazardNav steps near 7 min "
                   "of one CPU core, but there the Dreamer variants end near or below a random policy's return; at "
                   "128, without the limit, SafeDreamer reaches ~100 in 12k steps and pig ~40 (3-4x the time; "
                   "examples/pigdreamer/README.md).")
@click.option("--prefill", type=click.IntRange(0, 10**9), default=1000, show_default=True,
              help="Random-action env steps before training.")
@click.option("--imag-starts", type=click.IntRange(1, 10**6), default=256, show_default=True,
              help="Replayed states imagination starts from per update (DreamerV3 uses all batch × length).")
@click.option("--eval-every", type=_POS, default=2000, show_default=True, help="Env steps between evaluations.")
@click.option("--eval-episodes", type=click.IntRange(1, 10_000), default=10, show_default=True,
              help="Deployment episodes per evaluation (naive model and actor only).")
@click.option("--eval-policy", type=click.Choice(["sample", "greedy"]), default="sample", show_default=True,
              help="How evaluation picks actions: sample the actor (DreamerV3 and SafeDreamer) or take its argmax "
                   "(a still-wide actor's argmax is one fixed action, not what it learned).")
@click.option("--checkpoint-every", type=_POS, default=5000, show_default=True,
              help="Env steps per checkpointed chunk (--resume continues from the last one).")
@click.option("--lagrange-init", type=options.FiniteFloat(0.0), default=1e-6, show_default=True,
              help="λ₀ (SafeDreamer: 1e-6).")
@click.option("--penalty-init", type=options.FiniteFloat(0.0, 1.0, min_open=True), default=0.01, show_default=True,
              help="c₀ of the augmented Lagrangian. SafeDreamer's 5e-9 suits 1M+ steps; at 20k steps λ would not move.")
@click.option("--penalty-growth", type=options.FiniteFloat(0.0, 1.0), default=1e-5, show_default=True,
              help="c grows ×(1 + this) per update, capped at 1.")
@click.option("--entropy", type=options.FiniteFloat(0.0, 10.0), default=3e-4, show_default=True,
              help="Entropy bonus η of the actor (DreamerV3: 3e-4).")
@click.option("--cost-estimate", type=click.Choice(["episode", "return"]), default="episode", show_default=True,
              help="What the Lagrangian compares with the per-episode --cost-limit: episode (the imagined per-step "
                   "cost × the episode length, as SafeDreamer's planners scale it) or return (the mean imagined cost "
                   "λ-return, SafeDreamer's Lagrangian; on the limit's scale only once the cost critic has converged).")
@click.option("--cost-weight", type=options.FiniteFloat(0.0, 1e4, min_open=True), default=10.0, show_default=True,
              help="Weight of the cost head's loss on steps with a cost event (SafeDreamer: 10).")
@click.option("--cost-debias/--no-cost-debias", default=False, show_default=True,
              help="Read the cost head as the expected per-step cost, --cost-weight undone (a prior-shift correction "
                   "of its logits; exact when every per-step cost is 0 or in [1, 10], and costs above 10 a step are "
                   "not counted). The default decodes the weighted head as SafeDreamer does, which inflates rare "
                   "costs by up to a factor of --cost-weight and so keeps the agent more cautious (examples/pigdreamer).")
@options.device_option
@options.run_dir_options
def cli(run_dir, resume, force, **_):
    """Train one variant of PIGDreamer on one seed and evaluate its deployment policy.

    Two DreamerV3 world models (GRU 128, 8×8 categorical latents with 1% unimix, symlog inputs, two-hot
    reward and cost heads, continue head) learn from observations (naive) and from the privileged vector
    (info['privileged']); an oracle posterior q(s*|h⁻, e⁻, e⁺) and L_align pull the naive posterior towards
    it; heads and critics read (s⁻, s⁺); the actor learns in twisted imagination (H steps, one action
    stream steps both priors) under SafeDreamer's augmented Lagrangian on an imagined per-episode cost estimate.
    Deployment uses the naive encoder, RSSM and actor only.

    Writes to DIR: config.yaml; metrics.csv (one row per update: step, episode_return, episode_cost, lambda,
    c, cost_estimate, gap, penalty, world-model losses dyn/align_loss/dec/reward/cost/cont with raw KLs,
    actor_loss, critic_loss); eval.jsonl (step, episode, return, cost of each deployment episode);
    model.pt (for pigdreamer-eval); summary.json (last evaluation: mean return, mean cost, share within
    the limit); curves.png (return, cost, λ and c against steps); checkpoints/; manifest.json (with the
    time per phase). Prints the summary on stderr and one JSON line on stdout.

    \b
    Examples:
      $ paperkit pigdreamer-train --variant pig --steps 20000 --run-dir runs/pig
      $ paperkit pigdreamer-train --variant unprivileged --moving-hazard --seed 1 --run-dir runs/safedreamer
      $ paperkit pigdreamer-eval runs/pig --episodes 20
    """
    import json

    from paperkit.core import io, plots, tables
    from paperkit.methods.pigdreamer.plots import training_figure
    from paperkit.methods.pigdreamer.run import (
        PigdreamerTrainSettings,
        execute_pigdreamer_train,
        prepare_pigdreamer_train,
    )
    from paperkit_cli import runtime

    s = runtime.settings(PigdreamerTrainSettings)
    inputs = prepare_pigdreamer_train(s)
    # a run dir from before --goal-compass existed ran without it: resuming it needs --no-goal-compass
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("device",),
                            before={"goal_compass": False} if s.env == "hazardnav" else None)
    result = execute_pigdreamer_train(inputs, run)
    tables.write_table(run.file("metrics.csv"), result.metrics)
    io.write_jsonl(run.file("eval.jsonl"), result.evals)
    io.save_torch(run.file("model.pt"), result.model)
    io.write_json(run.file("summary.json"), result.summary)
    title = f"pigdreamer-train {s.variant} on {s.env} (seed {s.seed})"
    plots.save_figure(training_figure(result.metrics, result.evals, s.cost_limit, title), run.file("curves.png"))
    report_summary(result.summary, title)
    runtime.write_manifest(run_dir=run.path, seed=s.seed, extra={"timing_s": result.timing})
    options.echo_data(json.dumps({"run_dir": str(run.path), **result.summary}))
