"""``paperkit mvml-make``: write a built-in multi-view multi-label dataset as arrays."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.mvml.run:MakeSettings"


@options.command("mvml-make", short_help="Write a built-in multi-view multi-label dataset as .npy arrays.")
@click.option("--dataset", type=click.Choice(["digits-mvml", "synthetic", "planted"]), required=True,
              help="digits-mvml (3 views of sklearn digits, 6 labels), synthetic (shared latent), planted "
                   "(low-rank true tensor).")
@click.option("--n", type=click.IntRange(min=10), default=None, help="Samples (generators only).")
@click.option("--max-memory-gb", type=options.FiniteFloat(min=0.0, min_open=True), default=None,
              help="Refuse an --n whose arrays need more memory than this [default: 3/4 of the machine's memory].")
@options.seed_option
@options.run_dir_options
def cli(run_dir, resume, force, **_):
    """Write a built-in multi-view multi-label dataset as .npy arrays.

    Reads nothing; writes DIR/view1.npy ... (one samples × features array per view), DIR/labels.npy
    (0/1, samples × labels), DIR/info.json (names, widths, label rates), config.yaml and manifest.json,
    and prints one JSON summary line. The files feed 'paperkit mvml-fit --views ... --labels ...'.

    \b
    Examples:
      $ paperkit mvml-make --dataset digits-mvml --run-dir data/digits
      $ paperkit mvml-make --dataset synthetic --n 1000 --seed 3 --run-dir data/syn
    """
    import json

    from paperkit.methods.mvml.run import MakeSettings, execute_make, prepare_make
    from paperkit_cli import runtime

    s = prepare_make(runtime.settings(MakeSettings))
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("max_memory_gb",))
    info = execute_make(s, run)
    runtime.write_manifest(run_dir=run.path, seed=s.seed)
    options.echo_data(json.dumps({"run_dir": str(run.path), "dataset": info["dataset"],
                                  "n_samples": info["n_samples"], "view_widths": info["view_widths"]}))
