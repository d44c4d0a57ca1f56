"""``paperkit rgtg-train-rm``: train a token-level (FaRMA) or baseline reward model (Rashid et al., ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._rgtg_common import lm_option

SETTINGS = "paperkit.methods.rgtg.run:TrainRmSettings"
LOSSES = ("farma", "bt-full", "bt-prefix", "cd-regress", "seq")
_PATH = click.Path(dir_okay=False, path_type=str)


@options.command("rgtg-train-rm", short_help="Train a FaRMA token-level RM (BT + max constraint) or a baseline RM.")
@lm_option
@click.option("--pairs", required=True, type=_PATH, metavar="JSONL",
              help="Preference pairs: one JSON object a line with prompt, chosen, rejected (strings of tokens).")
@click.option("--heldout", type=_PATH, default=None, metavar="JSONL",
              help="Held-out pairs (same schema): pair accuracy and constraint gap in metrics.json.")
@click.option("--prefixes", type=_PATH, default=None, metavar="JSONL",
              help="farma: sequences (prompt, response) whose prefixes get the max constraint [default: the chosen "
                   "responses of --pairs].")
@click.option("--rollouts", type=_PATH, default=None, metavar="JSONL",
              help="cd-regress: pi_ref rollouts (prompt, response, reward); every prefix is regressed on the reward.")
@click.option("--loss", type=click.Choice(LOSSES), default="farma", show_default=True,
              help="farma: BT on full pairs alternated with the max constraint; bt-full: BT only; bt-prefix: PARGS "
                   "(BT on equal-length prefixes); cd-regress: CD-FUDGE; seq: a scalar full-sequence RM.")
@click.option("--iters", type=click.IntRange(1, 10_000), default=7, show_default=True,
              help="Iterations; each is one epoch of every phase (official scripts: 7).")
@click.option("--lr", type=options.FiniteFloat(0.0, 1.0, min_open=True), default=2e-3, show_default=True,
              help="AdamW learning rate (the paper's 5e-6 fine-tunes billion-parameter RMs; ours train from scratch).")
@click.option("--batch-size", type=click.IntRange(1, 100_000), default=64, show_default=True, help="Pairs per step.")
@click.option("--min-prefix", type=click.IntRange(2, 10_000), default=4, show_default=True,
              help="Shortest prefix (prompt included) given the max constraint or the prefix losses.")
@click.option("--constraint-weight", type=options.FiniteFloat(0.0, 1e3, min_open=True), default=1.0,
              show_default=True, help="farma: weight of the max-constraint loss (1 = the official scripts).")
@click.option("--constraint-target", type=click.Choice(["joint", "fixed"]), default="joint", show_default=True,
              help="farma: joint = the official MSE, gradient through r(prefix) and max_a r(prefix, a); fixed = "
                   "max_a r(prefix, a) held as a stop-gradient target (only r(prefix) moves).")
@click.option("--d-model", type=click.IntRange(4, 4096), default=32, show_default=True, help="RM width.")
@click.option("--layers", type=click.IntRange(1, 48), default=1, show_default=True, help="RM transformer layers.")
@click.option("--heads", type=click.IntRange(1, 64), default=4, show_default=True, help="Attention heads.")
@options.seed_option
@options.device_option
@options.jobs_option
@options.run_dir_options
def cli(lm_path, pairs, heldout, prefixes, rollouts, seed, run_dir, resume, force, **_):
    """Train a reward model with a vocabulary-sized head on preference pairs: one forward on (x, y_<i) scores
    every next token, and a sequence is scored at the position before its last token.

    farma follows the official scripts: each iteration is one epoch of BT then one epoch of the max constraint,
    each phase with a fresh AdamW whose rate decays linearly to 0, and the RM kept is the one after the last BT
    epoch (the official decoding scripts load a checkpoint saved after a BT phase).

    Writes to DIR: rm.pt (for rgtg-generate --rm), loss.csv (step, iter, phase, loss), loss.png, metrics.json
    (held-out pair accuracy and mean |r(prefix) - max_a r(prefix, a)|), config.yaml, manifest.json. Prints a
    table on stderr and one JSON line on stdout. Training is a checkpointed stage; --resume reuses it.

    \b
    Examples:
      $ paperkit rgtg-train-rm --lm task/lm.pt --pairs task/pairs.jsonl --heldout task/heldout.jsonl --run-dir rm/
      $ paperkit rgtg-train-rm --lm task/lm.pt --pairs task/pairs.jsonl --loss bt-prefix --run-dir rm-pargs/
      $ paperkit rgtg-train-rm --lm task/lm.pt --pairs task/pairs.jsonl --rollouts task/rollouts.jsonl --loss cd-regress --run-dir rm-cd/
    """
    import json

    from paperkit.core import io, plots, tables
    from paperkit.methods.rgtg import store
    from paperkit.methods.rgtg.run import TrainRmSettings, execute_train_rm, prepare_train_rm
    from paperkit_cli import runtime

    s = runtime.settings(TrainRmSettings)
    inputs = prepare_train_rm(s, lm_path=lm_path, pairs=pairs, heldout=heldout, prefixes=prefixes, rollouts=rollouts)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    out = execute_train_rm(inputs, run)
    m = out["metrics"]
    store.save_rm(run.file("rm.pt"), out["net"], head=m["head"], loss=s.loss, vocab=inputs.lm.vocab, metrics=m)
    tables.write_table(run.file("loss.csv"), out["loss_rows"])
    io.write_json(run.file("metrics.json"), m)
    fig, ax = plots.new_figure()
    for phase in sorted({r["phase"] for r in out["loss_rows"]}):
        pts = [(r["step"], r["loss"]) for r in out["loss_rows"] if r["phase"] == phase]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], label=phase, lw=0.8)
    ax.set(xlabel="step", ylabel="loss", yscale="log", title=f"rgtg-train-rm --loss {s.loss}")
    ax.legend()
    plots.save_figure(fig, run.file("loss.png"))
    options.report_table([m], [("loss", "loss", ""), ("train_pairs", "pairs", "d"), ("pair_accuracy", "held-out acc", ".3f"),
                               ("constraint_gap", "constraint gap", ".3f")], title="rgtg-train-rm")
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=inputs.paths)
    options.echo_data(json.dumps({"run_dir": str(run.path), **m}))
