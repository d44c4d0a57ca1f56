"""``paperkit rgtg-generate``: reward-guided decoding, FaRMA and baselines, with call counts (Rashid et al., ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._rgtg_common import lm_option

SETTINGS = "paperkit.methods.rgtg.run:GenerateSettings"


@options.command("rgtg-generate", short_help="Reward-guided decoding (FaRMA, CD, ARGS, PARGS, best-of-N, ref), calls counted.")
@lm_option
@click.option("--prompts", required=True, type=click.Path(dir_okay=False, path_type=str), metavar="JSONL",
              help="One JSON object a line with a 'prompt' string (tokens separated by spaces for an LM.pt).")
@click.option("--rm", "rm_path", type=click.Path(path_type=str), default=None, metavar="RM.pt|DIR",
              help="Reward model for every guided method (rgtg-train-rm's rm.pt or a local HF causal-LM directory).")
@click.option("--method", "methods", multiple=True, default=("ref", "farma"), show_default=True,
              metavar="NAME[=RM]",
              help="ref, farma, cd (one RM call per token), args, pargs (k per token), best-of-n (N per prompt); "
                   "repeatable; NAME=RM.pt gives that method its own RM.")
@click.option("--scorer", type=click.Path(path_type=str), default=None, metavar="reward.json|RM.pt",
              help="Scores the generations: rgtg-toy's reward.json (true reward, plus the DP optimum) or an RM.")
@click.option("--k", type=click.IntRange(min=1), default=10, show_default=True,
              help="Top-k candidates per token (1 <= k <= vocabulary).")
@click.option("--w", type=options.FiniteFloat(), default=1.0, show_default=True,
              help="Reward weight, in [-1000, 1000]: s(a) = LM logit(a) + w r(a | prefix) (ARGS/PARGS: log pi_ref(a) + "
                   "w r(prefix, a)).")
@click.option("--val-prompts", type=click.Path(dir_okay=False, path_type=str), default=None, metavar="JSONL",
              help="Validation prompts (rgtg-toy's val_prompts.jsonl): farma, cd, args and pargs each decode them "
                   "once at every --w-grid value and keep the w with the highest mean --scorer score for the test "
                   "--prompts (the RM's score scale is arbitrary, so w is a tuned hyperparameter).")
@click.option("--w-grid", type=options.ListOf(options.FiniteFloat()), default="1,2,5,10,20,50", show_default=True,
              metavar="LIST", help="Values of w searched on --val-prompts (each in [-1000, 1000]).")
@click.option("--max-new", type=click.IntRange(min=1, max=100_000), default=10, show_default=True,
              help="New tokens per generation (fewer if the tokenizer's EOS comes first).")
@click.option("--decode", type=click.Choice(["sample", "greedy"]), default="sample", show_default=True,
              help="Sample from the softmax over the top k, or take the argmax.")
@click.option("--n", type=click.IntRange(1, 10_000), default=10, show_default=True, help="best-of-n: samples per prompt.")
@click.option("--samples", type=click.IntRange(1, 100), default=2, show_default=True,
              help="Generations per prompt and method (diversity is their mean pairwise ROUGE-L).")
@click.option("--score-impl", type=click.Choice(["loop", "batched"]), default="batched", show_default=True,
              help="args/pargs: score the k candidates one forward each (loop) or all in one (batched); both count k.")
@click.option("--batch-size", type=click.IntRange(1, 100_000), default=64, show_default=True,
              help="Prompts decoded together (left-padded).")
@options.seed_option
@options.device_option
@options.jobs_option
@options.run_dir_options
def cli(lm_path, prompts, val_prompts, rm_path, scorer, seed, run_dir, resume, force, **_):
    """Decode every prompt with each --method on the same seeds, counting LM calls, RM calls, tokens and seconds.

    Writes to DIR: generations.jsonl (method, prompt_index, sample, prompt, tokens, text, lm_calls, rm_calls,
    seconds, score), summary.json and summary.csv (per method: mean score ± s.e., calls per generation and per
    token, seconds per token, diversity, DP optimum and gap closed for a toy task, the w used and, with
    --val-prompts, the validation mean at every w of the grid), reward_vs_rm_calls.png,
    config.yaml, manifest.json. Prints one row per method on stderr and one JSON line per method on stdout.

    \b
    Examples:
      $ paperkit rgtg-generate --lm task/lm.pt --rm rm/rm.pt --prompts task/prompts.jsonl --scorer task/reward.json --run-dir gen/
      $ paperkit rgtg-generate --lm task/lm.pt --prompts task/prompts.jsonl --method ref --method farma=rm/rm.pt --method args=rm/rm.pt --method cd=rm-cd/rm.pt --k 5 --run-dir cmp/
      $ paperkit rgtg-generate --lm task/lm.pt --rm rm/rm.pt --prompts task/prompts.jsonl --val-prompts task/val_prompts.jsonl --w-grid 1,2,5,10,20 --scorer task/reward.json --run-dir tuned/
    """
    import json

    from paperkit.core import io, plots, tables
    from paperkit.methods.rgtg import run as rgtg
    from paperkit_cli import runtime

    s = runtime.settings(rgtg.GenerateSettings)
    inputs = rgtg.prepare_generate(s, lm_path=lm_path, prompts=prompts, rm_path=rm_path, scorer=scorer,
                                   val_prompts=val_prompts)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    out = rgtg.execute_generate(inputs, run)
    summary = out["summary"]
    rgtg.add_gap_fraction(summary)
    io.write_jsonl(run.file("generations.jsonl"), out["rows"])
    picked = val_prompts is not None
    io.write_json(run.file("summary.json"), {"methods": summary, "k": s.k, "w": s.w, "max_new": s.max_new,
                                             "w_selection": "validation" if picked else "fixed",
                                             **({"w_grid": list(s.w_grid), "val_prompts": len(inputs.val_prompts)}
                                                if picked else {}),
                                             "prompts": len(inputs.prompts), "samples": s.samples})
    tables.write_table(run.file("summary.csv"), [{k: v for k, v in m.items() if not isinstance(v, dict)} for m in summary])
    fig, ax = plots.new_figure()
    for m in summary:
        if "score_mean" in m:
            ax.errorbar(m["rm_calls_per_generation"], m["score_mean"], yerr=2 * m["score_se"], fmt="o", capsize=3)
            ax.annotate(m["method"], (m["rm_calls_per_generation"], m["score_mean"]), textcoords="offset points",
                        xytext=(5, 5))
    ax.set(xlabel="RM calls per generation", ylabel="mean score (± 2 s.e.)", xscale="symlog",
           title=f"rgtg-generate: k={s.k}, w={'picked on validation' if picked else f'{s.w:g}'}, "
                 f"{s.max_new} new tokens")
    plots.save_figure(fig, run.file("reward_vs_rm_calls.png"))
    options.report_table(summary, [("method", "method", ""), ("score_mean", "score", ".3f"), ("score_se", "s.e.", ".3f"),
                                   ("gap_closed", "gap closed", ".2f"), ("w", "w", "g"), ("lm_calls_per_generation", "LM calls", ".1f"),
                                   ("rm_calls_per_generation", "RM calls", ".1f"), ("seconds_per_token", "s/token", ".2e"),
                                   ("diversity_rouge_l", "ROUGE-L", ".3f")], title="rgtg-generate")
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=inputs.paths)
    for m in summary:
        options.echo_data(json.dumps(m))
