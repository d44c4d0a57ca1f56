"""``paperkit gen-select-sim``: write a synthetic model-selection instance as files."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands import _gen_select_common as common

SETTINGS = "paperkit.methods.gen_select.run:SimSettings"


@options.command("gen-select-sim", short_help="Write a synthetic gen-select instance (contexts, scores, long CSV).")
@common.synthetic_options("switch")
@common.embedding_options
@click.option("--samples", type=click.IntRange(1, 1000), default=5, show_default=True,
              help="Score samples stored per (model, prompt).")
@click.option("--add-model", is_flag=True, default=False, help="Add one model, listed last, that is best on the last type.")
@options.seed_option
@options.run_dir_options
def cli(run_dir, resume, force, **params):
    """Write a synthetic instance that gen-select (and your own tools) can replay.

    Writes to DIR: contexts.npy (N×d), scores.npy (G×N×S), scores.csv (long: prompt_id, model, sample,
    score), types.npy (prompt types), prompts.txt (text instance), instance.json (sizes, means per
    type), config.yaml and manifest.json; prints instance.json's summary as one JSON line.

    \b
    Examples:
      $ paperkit gen-select-sim --synthetic switch --types 4 --dim 16 --models 3 --run-dir inst/
      $ paperkit gen-select --contexts inst/contexts.npy --scores inst/scores.npy --run-dir replay/
    """
    import json

    from paperkit.methods.gen_select.run import SimSettings, execute_sim, prepare_sim
    from paperkit_cli import runtime

    s = runtime.settings(SimSettings)
    inst = prepare_sim(s, common.sources(**params))
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("model", "cache_dir", "no_cache"))
    info = execute_sim(s, inst, run)
    runtime.write_manifest(run_dir=run.path, seed=s.seed)
    options.report(f"{info['name']}: {info['prompts']} prompts × {len(info['models'])} models × "
                   f"{info['samples_per_cell']} samples, d = {info['dim']} → {run.path}")
    options.echo_data(json.dumps({"run_dir": str(run.path), **{k: info[k] for k in ("name", "models", "prompts", "dim")}}))
