"""``paperkit gen-select``: prompt-aware online selection of generative models (PAK-UCB, Hu et al. ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands import _gen_select_common as common

SETTINGS = "paperkit.methods.gen_select.run:SelectSettings"


@options.command("gen-select", short_help="Route prompts to generative models online (PAK-UCB, RFF-UCB, baselines).")
@common.synthetic_options(None)
@common.file_options
@common.embedding_options
@click.option("--learners", type=options.ListOf(choices=common.LEARNERS, unique=True),
              default="pak-ucb,rff-ucb,lin-ucb,greedy,random,oracle", show_default=True, metavar="L1,L2,...",
              help="Learners to compare: " + ", ".join(common.LEARNERS) + " (naive-krr is PAK-UCB with eta = 0).")
@common.learner_options
@click.option("--horizon", type=click.IntRange(1, 10**7), default=2000, show_default=True, help="Rounds T per run.")
@click.option("--runs", type=click.IntRange(1, 10_000), default=5, show_default=True,
              help="Independent runs (prompt streams, score draws, tie-breaks).")
@click.option("--add-model-at", type=click.IntRange(min=1), default=None,
              help="The last model joins at this round (synthetic: an extra model that is best on the last type).")
@click.option("--add-type-at", type=click.IntRange(min=1), default=None,
              help="Prompts of the last type appear from this round on.")
@click.option("--points", type=click.IntRange(2, 100_000), default=200, show_default=True,
              help="Rounds per run recorded in metrics.csv (evenly spaced).")
@options.seed_option
@options.jobs_option
@options.run_dir_options
def cli(run_dir, resume, force, **params):
    """Compare online model-selection learners on a prompt stream and write their metrics.

    Each round draws a prompt, the learner picks a model from the prompt's embedding and observes one
    score (a stored sample, or the mean plus noise). Writes to DIR: metrics.csv (learner, run, t, chosen
    model, score, OtB, regret to the per-prompt best, OPR), summary.json (final OtB, OPR, last-500 OPR,
    regret mean ± std, visit shares, per-type shares, eta used), config.yaml and gen_select.png (OtB,
    OPR and regret against t). Prints the comparison table (with the eta used) on stderr and one JSON
    line on stdout. Wall times go to the manifest.

    \b
    Examples:
      $ paperkit gen-select --synthetic switch --eta 1 --horizon 2000 --runs 5 --run-dir sw/
      $ paperkit gen-select --synthetic switch --eta 1 --add-model-at 1000 --run-dir add/
      $ paperkit gen-select --contexts X.npy --scores S.npy --learners pak-ucb,oracle --run-dir mine/
      $ paperkit gen-select --scores-csv long.csv --texts prompts.txt --run-dir csv/
    """
    import json

    from paperkit.methods.gen_select.run import SelectSettings, execute_select, prepare_select
    from paperkit_cli import runtime

    s = runtime.settings(SelectSettings)
    src = common.sources(**params)
    inputs = prepare_select(s, src)
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("points", "model", "cache_dir",
                                                                              "no_cache"))
    result = execute_select(inputs, run)
    runtime.write_manifest(run_dir=run.path, seed=s.seed, inputs=common.inputs_of(src),
                           extra={"seconds_per_run": result.seconds})
    options.report_table(result.rows, [("learner", "learner", ""), ("eta", "eta", ".2f"), ("otb", "OtB", "+.4f"),
                                       ("otb_se", "± se", ".4f"), ("opr", "OPR", ".3f"),
                                       ("opr_last", "OPR last", ".3f"), ("regret", "regret", ".1f"),
                                       ("seconds", "s/run", ".2f")],
                         title=f"{inputs.instance.name}: T = {s.horizon}, {s.runs} runs, "
                               f"best single model {result.summary['best_fixed_model']}")
    options.echo_data(json.dumps({"run_dir": str(run.path), "instance": inputs.instance.name,
                                  "learners": {r["learner"]: {"otb": r["otb"], "opr": r["opr"], "eta": r["eta"]}
                                               for r in result.rows}}))
