"""``paperkit mvml-make``: write a built-in multi-view multi-label dataset as arrays."""

from __future__ import annotations

from pathlib import Path

import click

from paperkit_cli import options


@options.command("mvml-make", short_help="Write a built-in multi-view multi-label dataset as .npy arrays.")
@click.option("--dataset", type=click.Choice(["digits-mvml", "synthetic", "planted"]), required=True,
              help="digits-mvml (3 views of sklearn digits, 6 labels), synthetic (shared latent), planted "
                   "(low-rank true tensor).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, metavar="DIR",
              help="Folder for view1.npy, view2.npy, ..., labels.npy, info.json and manifest.json.")
@click.option("--n", type=click.IntRange(min=10), default=None, help="Samples (generators only).")
@options.seed_option
def cli(dataset, out, n, seed):
    """Write a built-in multi-view multi-label dataset as .npy arrays.

    Reads nothing; writes DIR/view1.npy ... (one samples × features array per view), DIR/labels.npy
    (0/1, samples × labels), DIR/info.json (names, widths, label rates) and DIR/manifest.json. The
    files feed 'paperkit mvml-fit --views ... --labels ...'.

    \b
    Examples:
      $ paperkit mvml-make --dataset digits-mvml --out data/digits
      $ paperkit mvml-make --dataset synthetic --n 1000 --seed 3 --out data/syn
    """
    from paperkit.methods.mvml import cli_run
    from paperkit_cli import runtime

    written = cli_run.make_command(out, dataset, seed, n)
    runtime.write_manifest(outputs=written, manifest_path=out / "manifest.json", seed=seed)
    options.echo_data(str(out))
