"""``paperkit hygma-train``: HYGMA dynamic spectral grouping + hypergraph attention for cooperative MARL (Liu & Li, ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.hygma.run:HygmaTrainSettings"
ALGOS = ("hygma-qmix", "hygma-ac", "qmix", "vdn", "iql")
_POS = click.IntRange(min=1)


@options.command("hygma-train", short_help="Train HYGMA (dynamic groups + hypergraph attention) and QMIX/VDN/IQL on grid MARL tasks.")
@click.option("--env", default="pp", show_default=True, metavar="pp|group-capture|lbf-lite|MODULE:FACTORY",
              help="A built-in task, or a PettingZoo ParallelEnv factory with discrete actions (e.g. "
                   "mpe2.simple_spread_v3:parallel_env).")
@click.option("--preset", default="medium", show_default=True, metavar="easy|medium|hard",
              help="Built-in task size: pp 3/5/10 agents on 5/10/20 grids; group-capture 4/6/9 agents, 2/2/3 "
                   "preys, c = 2/3/3; lbf-lite 3/4/6 agents.")
@click.option("--algo", type=options.ListOf(choices=ALGOS, unique=True), default="hygma-qmix", show_default=True,
              help="Algorithms to train, each on every seed: hygma-qmix, hygma-ac, qmix, vdn, iql.")
@click.option("--steps", type=click.IntRange(min=1, max=10**9), default=200_000, show_default=True,
              help="Env steps per run (summed over the --batch-envs copies).")
@options.seeds_option(default="0", help="Seeds; one run per algorithm and seed.")
@click.option("--state", type=click.Choice(["env", "obs-concat"]), default="env", show_default=True,
              help="Mixer state: the env's state(), or the agents' observations concatenated (user envs without "
                   "state()).")
@click.option("--grouping", type=click.Choice(["dynamic", "static", "single"]), default="dynamic", show_default=True,
              help="dynamic: recluster every --cluster-every steps; static: cluster once (ablation); single: one "
                   "hyperedge of all agents (ablation).")
@click.option("--k-range", type=click.IntRange(min=2), nargs=2, default=None, metavar="KMIN KMAX",
              help="Range of group counts tried; the silhouette picks k [default: 2 and min(3, agents - 1)].")
@click.option("--stability", type=options.FiniteFloat(0.0, 1.0), default=0.6, show_default=True,
              help="δ: accept a new grouping only if more than δ·n agents changed group (the official code's 0.6).")
@click.option("--cluster-every", type=_POS, default=20_000, show_default=True,
              help="Env steps between reclusterings (the official code: 100k at 5M steps; 20k here so that runs of "
                   "100k-200k steps regroup several times).")
@click.option("--history", type=_POS, default=500, show_default=True,
              help="Rollout steps of per-agent observations averaged into the clustering features (the official "
                   "code clusters the current episode's global states).")
@click.option("--hgcn-mode", type=click.Choice(["paper", "code"]), default="paper", show_default=True,
              help="paper: normalised D_v^-1/2 H_a W D_e^-1 H_aᵀ D_v^-1/2 XΘ with attention-weighted incidence; "
                   "code: the official layer (group sums + multi-head attention).")
@click.option("--lambda-consistency", type=options.FiniteFloat(0.0, 1e3), default=1e-3, show_default=True,
              help="λ_c on the within-group variance of HGCN features.")
@click.option("--lambda-attention", type=options.FiniteFloat(0.0, 1e3), default=1e-2, show_default=True,
              help="λ_a on KL(attention ‖ uniform); 0 is the no-attention-loss ablation.")
@click.option("--batch-envs", type=click.IntRange(1, 4096), default=8, show_default=True,
              help="Environment copies stepped together (B), one gradient step per B episodes; also the evaluation "
                   "batch (the official code: 1 copy, one gradient step per episode).")
@click.option("--batch-size", type=click.IntRange(1, 100_000), default=32, show_default=True,
              help="Episodes per gradient step (value methods). The official code uses 128; 32 here for CPU time: "
                   "an update of 128 costs ~3x one of 32, which would put pp easy 100k steps over 75 s a run.")
@click.option("--buffer-episodes", type=click.IntRange(1, 1_000_000), default=5000, show_default=True,
              help="Replay capacity in episodes (as the official code).")
@click.option("--target-every", type=_POS, default=200, show_default=True, help="Episodes between target-net updates (as the official code).")
@click.option("--lr", type=options.FiniteFloat(0.0, 1.0, min_open=True), default=5e-4, show_default=True,
              help="AdamW learning rate (β 0.9/0.999, weight decay 0.01, grad-norm clip 10), for every algorithm "
                   "(the official code: the same for HYGMA; RMSprop for its QMIX/VDN/IQL configs).")
@click.option("--gamma", type=options.FiniteFloat(0.0, 1.0), default=0.99, show_default=True, help="Discount γ.")
@click.option("--epsilon-anneal", type=_POS, default=100_000, show_default=True,
              help="Env steps over which ε falls from 1.0 to 0.05, for every algorithm (the official HYGMA config; "
                   "its QMIX config uses 50k).")
@click.option("--eval-every", type=_POS, default=10_000, show_default=True, help="Env steps between evaluations.")
@click.option("--eval-episodes", type=_POS, default=32, show_default=True,
              help="Greedy episodes per evaluation (sampled for hygma-ac).")
@options.device_option
@click.option("--jobs", "-j", type=options.JOBS, default=0, show_default=True,
              help="Runs (algorithm × seed) trained at once, in processes of one torch thread each (the agent "
                   "nets are small); 0 means one per CPU core (under make -jN, the cores divided by N). "
                   "Results do not depend on it.")
@options.run_dir_options
def cli(run_dir, resume, force, jobs, **_):
    """Train HYGMA-QMIX / HYGMA-AC and the QMIX, VDN, IQL baselines on cooperative grid tasks.

    Every run groups the agents by spectral clustering of their recent observations (kNN affinity,
    normalised Laplacian, k by silhouette, the stability rule δ), turns the groups into hyperedges and
    feeds hypergraph-attention features (2 layers, 4 heads) with the raw input to a GRU agent whose
    Q-values a QMIX mixer combines (double-Q targets), or to an A2C actor-critic (hygma-ac). Unlike the
    official code, the HGCN is trained, consistency is on features, the attention loss has a gradient
    and the groups are recomputed all through training.

    Writes to DIR: config.yaml (merged options), curves.csv (algo, seed, step, episodes, return,
    success = catch rate (pp: all predators on the prey; group-capture: catches per episode; lbf-lite:
    share collected), epsilon, k, losses), groups.jsonl (algo, seed, step, k, groups (0-based agent
    order), silhouette, moved fraction, accepted), attention.npy (samples × heads × agents × k_max),
    model.pt (every job's weights, for hygma-eval), summary.json (final greedy return/success per run,
    mean ± s.e. per algorithm; on group-capture each run's helped matrix, specialisation and group ARI
    as in hygma-eval; the same bytes for the same seeds), manifest.json (with each run's timings: seconds
    by phase, env steps/s, clustering share of time). Each (algo, seed) is a checkpointed stage: --resume
    continues. Prints each run's evaluation lines and the final table on stderr, and one JSON line on
    stdout.

    \b
    Examples:
      $ paperkit hygma-train --env pp --preset easy --algo hygma-qmix,qmix --steps 20000 --run-dir runs/pp
      $ paperkit hygma-eval --model runs/pp/model.pt --episodes 16 --ascii
      $ paperkit hygma-train --env group-capture --algo hygma-qmix,qmix,vdn --seeds 0,1,2 --run-dir runs/gc
      $ paperkit hygma-plot runs/pp runs/gc -o curves.png
    """
    import json

    from paperkit.core import io, tables
    from paperkit.methods.hygma.run import (
        SUCCESS,
        HygmaTrainSettings,
        execute_hygma_train,
        job_name,
        model_blob,
        prepare_hygma_train,
    )
    from paperkit_cli import runtime

    s = runtime.settings(HygmaTrainSettings, k_range=_.get("k_range") or None)
    inputs = prepare_hygma_train(s)
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("device",))
    metric = SUCCESS.get(s.env, "return")

    def evaluations(name: str, curves: list[dict]) -> None:
        options.report("\n".join(f"{name} step {c['step']}: return {c['return']:.3f}, {metric} {c['success']:.3f}, "
                                  f"epsilon {c['epsilon']:.2f}, k {c['k']}" for c in curves))

    result = execute_hygma_train(inputs, run, jobs=jobs, on_job=evaluations)
    tables.write_table(run.file("curves.csv"), result.curves)
    io.write_text(run.file("groups.jsonl"), "".join(json.dumps(g) + "\n" for g in result.groups))
    io.write_array(run.file("attention.npy"), result.attention)
    io.save_torch(run.file("model.pt"), model_blob(s, result.models))
    io.write_json(run.file("summary.json"), result.summary)
    options.report_table([{**r, **result.timing[job_name(r["algo"], r["seed"])]} for r in result.summary["runs"]], [
        ("algo", "algo", ""), ("seed", "seed", ""), ("return", "return", ".3f"), ("success", metric, ".3f"),
        ("k", "k", ""), ("group_ari", "group ARI", ".2f"), ("env_steps_per_s", "steps/s", ".0f"),
        ("cluster_share", "cluster time", ".1%")], title=f"hygma-train: {s.env} {s.preset}, {s.steps} steps")
    runtime.write_manifest(run_dir=run.path, seed=s.seeds[0], extra={"timing": result.timing})
    options.echo_data(json.dumps({"run_dir": str(run.path), "env": s.env, "preset": s.preset,
                                  "mean": result.summary["mean"]}))
