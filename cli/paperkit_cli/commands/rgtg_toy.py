"""``paperkit rgtg-toy``: a toy language task for reward-guided decoding (Rashid et al., ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.rgtg.run:ToySettings"


@options.command("rgtg-toy", short_help="Write a toy task: Markov base LM, true reward, preference pairs, prompts.")
@click.option("--vocab", type=click.IntRange(3, 50), default=20, show_default=True,
              help="Vocabulary size (tokens t0..t{V-1}).")
@click.option("--length", type=click.IntRange(3, 64), default=12, show_default=True,
              help="Longest sequence (prompt + response) in tokens.")
@click.option("--prompt-len", type=click.IntRange(2, 63), default=2, show_default=True, help="Prompt length in tokens.")
@click.option("--min-len", type=click.IntRange(3, 64), default=None,
              help="Shortest pair/rollout length; lengths are uniform in [min-len, length]  [default: --length, "
                   "all full length: the reward only grows with length, so a pair cut at length n contradicts the "
                   "max constraint, which values an n-token prefix at its best extension].")
@click.option("--pairs", type=click.IntRange(10, 1_000_000), default=4000, show_default=True,
              help="Preference pairs drawn (ties dropped); as many prefixes and rollouts.")
@click.option("--heldout", type=click.IntRange(10, 1_000_000), default=800, show_default=True,
              help="Held-out pairs (pair accuracy and constraint gap of rgtg-train-rm).")
@click.option("--prompts", type=click.IntRange(1, 1_000_000), default=200, show_default=True,
              help="Test prompts (pi_ref samples of --prompt-len tokens).")
@click.option("--val-prompts", type=click.IntRange(1, 1_000_000), default=200, show_default=True,
              help="Validation prompts, drawn like the test prompts (rgtg-generate --val-prompts picks w on them).")
@click.option("--beta", type=options.FiniteFloat(0.0, 100.0, min_open=True), default=3.0, show_default=True,
              help="Bradley-Terry temperature of the pair labels: P(a preferred) = sigmoid(beta (R(a) - R(b))).")
@click.option("--lm", "lm_path", type=click.Path(dir_okay=False, path_type=str), default=None, metavar="LM.pt",
              help="Sample pi_ref from this LM (rgtg-train-lm's lm.pt, e.g. the char-level Shakespeare LM) instead "
                   "of a new Markov chain; --vocab is then the LM's. No DP optimum for such a task.")
@options.seed_option
@options.run_dir_options
def cli(lm_path, run_dir, resume, force, seed, **_):
    """Write a toy language task: pi_ref is a random Markov chain (Dirichlet 0.3 rows), the true reward counts
    lexicon tokens (about 1 in 5 tokens) plus rewarded bigrams, and its exact optimum follows by dynamic programming.

    With --lm, pi_ref is a trained LM (char-level for rgtg-train-lm --corpus shakespeare): samples start at a
    uniformly drawn token, and the reward is a random lexicon (about 1 in 5 tokens) plus rewarded bigrams over
    its vocabulary.

    Writes to DIR: lm.pt (the Markov LM, or a copy of --lm), reward.json (kind, vocab, length, lexicon, bigrams), pairs.jsonl and
    heldout.jsonl (one JSON object a line: prompt, chosen, rejected — space-separated tokens), prefixes.jsonl
    (prompt, response), rollouts.jsonl (prompt, response, reward), prompts.jsonl and val_prompts.jsonl (prompt),
    config.yaml,
    manifest.json. Prints one JSON line on stdout.

    \b
    Examples:
      $ paperkit rgtg-toy --vocab 20 --length 12 --run-dir task/
      $ paperkit rgtg-toy --vocab 30 --pairs 4000 --seed 1 --run-dir task30/
      $ paperkit rgtg-toy --lm charlm/lm.pt --length 32 --prompt-len 8 --min-len 16 --run-dir chartask/
    """
    import json

    from paperkit.methods.rgtg.run import ToySettings, execute_toy, prepare_toy
    from paperkit_cli import runtime

    s = runtime.settings(ToySettings)
    inputs = prepare_toy(s, lm_path=lm_path)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    info = execute_toy(inputs, run)
    options.report(f"rgtg-toy: {info['pairs']} pairs, {info['prompts']} + {info['val_prompts']} validation prompts, vocab {s.vocab}, lexicon "
                   f"{' '.join(info['lexicon_tokens'])} -> {run.path}")
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=[lm_path] if lm_path else ())
    options.echo_data(json.dumps({"run_dir": str(run.path), **info}))
