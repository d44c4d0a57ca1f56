"""``paperkit rgtg-train-lm``: fit the base LM pi_ref for reward-guided decoding (Rashid et al., ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.rgtg.run:TrainLmSettings"
_PATH = click.Path(dir_okay=False, path_type=str)


@options.command("rgtg-train-lm", short_help="Fit a small causal transformer LM (pi_ref) on a text or on toy samples.")
@click.option("--text", type=_PATH, default=None, metavar="FILE",
              help="A UTF-8 text: a character-level LM (one token per character).")
@click.option("--corpus", type=click.Choice(["shakespeare"]), default=None,
              help="The shipped text: the first ~100 KB of tinyshakespeare (public domain), character level.")
@click.option("--samples", type=_PATH, default=None, metavar="JSONL",
              help="Sequences (prompt, response), e.g. rgtg-toy's rollouts.jsonl: a word-level LM; needs --vocab-from.")
@click.option("--vocab-from", type=_PATH, default=None, metavar="LM.pt",
              help="--samples: the LM.pt whose vocabulary the new LM takes (rgtg-toy's lm.pt).")
@click.option("--epochs", type=click.IntRange(1, 10_000), default=8, show_default=True, help="Passes over the data.")
@click.option("--lr", type=options.FiniteFloat(0.0, 1.0, min_open=True), default=3e-3, show_default=True,
              help="AdamW peak learning rate (cosine decay to 0).")
@click.option("--batch-size", type=click.IntRange(1, 100_000), default=32, show_default=True, help="Sequences per step.")
@click.option("--block", type=click.IntRange(2, 4096), default=64, show_default=True,
              help="Text: characters per training window.")
@click.option("--val-fraction", type=options.FiniteFloat(0.0, 1.0, min_open=True, max_open=True), default=0.1,
              show_default=True, help="The last fraction of the text (or rows) held out for the validation loss.")
@click.option("--d-model", type=click.IntRange(4, 4096), default=64, show_default=True, help="Width.")
@click.option("--layers", type=click.IntRange(1, 48), default=2, show_default=True, help="Transformer layers.")
@click.option("--heads", type=click.IntRange(1, 64), default=4, show_default=True, help="Attention heads.")
@options.seed_option
@options.device_option
@options.jobs_option
@options.run_dir_options
def cli(text, corpus, samples, vocab_from, seed, run_dir, resume, force, **_):
    """Fit a small pre-LN causal transformer by next-token cross-entropy: the frozen base LM pi_ref that
    rgtg-toy --lm samples from and rgtg-generate --lm decodes with.

    Input: --text (any UTF-8 file; its characters are the vocabulary), --corpus shakespeare, or --samples (one
    JSON object a line with 'prompt' and 'response', tokens separated by spaces, in the vocabulary of --vocab-from).

    Writes to DIR: lm.pt, loss.csv (step, epoch, split, loss in nats per token), loss.png, metrics.json (validation
    loss in nats and bits per token, vocabulary, parameters, source and licence), config.yaml, manifest.json.
    Training is a checkpointed stage; --resume reuses it. Prints a table on stderr and one JSON line on stdout.

    \b
    Examples:
      $ paperkit rgtg-train-lm --corpus shakespeare --run-dir charlm/
      $ paperkit rgtg-train-lm --text notes.txt --epochs 4 --d-model 32 --run-dir mylm/
      $ paperkit rgtg-train-lm --samples task/rollouts.jsonl --vocab-from task/lm.pt --run-dir fitted-lm/
    """
    import json

    from paperkit.core import io, plots, tables
    from paperkit.methods.rgtg import store
    from paperkit.methods.rgtg.run import TrainLmSettings, execute_train_lm, prepare_train_lm
    from paperkit_cli import runtime

    s = runtime.settings(TrainLmSettings)
    inputs = prepare_train_lm(s, text=text, corpus=corpus, samples=samples, vocab_from=vocab_from)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    out = execute_train_lm(inputs, run)
    m = out["metrics"]
    store.save_tiny_lm(run.file("lm.pt"), out["net"], inputs.vocab, m)
    tables.write_table(run.file("loss.csv"), out["loss_rows"])
    io.write_json(run.file("metrics.json"), m)
    fig, ax = plots.new_figure()
    for split in ("train", "val"):
        pts = [(r["step"], r["loss"]) for r in out["loss_rows"] if r["split"] == split]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], label=split, lw=0.8, marker="o" if split == "val" else None)
    ax.set(xlabel="step", ylabel="cross-entropy (nats/token)", title="rgtg-train-lm")
    ax.legend()
    plots.save_figure(fig, run.file("loss.png"))
    options.report_table([m], [("vocab", "vocab", "d"), ("train_sequences", "train seqs", "d"),
                               ("val_loss_nats", "val nats/token", ".3f"), ("val_bits_per_token", "val bits/token", ".3f"),
                               ("parameters", "params", "d")], title="rgtg-train-lm")
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=inputs.paths)
    options.echo_data(json.dumps({"run_dir": str(run.path), **m}))
