"""``paperkit var-approx-tokenize``: VAR's multi-scale residual quantizer (k-means codebooks) on sklearn's digits."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.var_approx.tokenize:TokenizeSettings"


@options.command("var-approx-tokenize",
                 short_help="VAR's multi-scale residual quantizer on digits: error per number of scales.")
@click.option("--side", type=click.IntRange(1, 64), default=16, show_default=True,
              help="Side the 8x8 digits are resized to (bicubic up, area down) before tokenizing.")
@click.option("--patch", type=click.IntRange(min=1), default=1, show_default=True,
              help="Pixels per token side: the feature map is (side/patch)^2 tokens of patch^2 channels.")
@click.option("--scales", default="var", show_default=True, metavar="LIST|var|geom:A:B:K",
              help="Token-map sides, increasing and ending at side/patch: a list (1,2,4,8,16), 'var' "
                   "(VAR's 1,2,3,4,5,6,8,10,13,16) or geom:FIRST:LAST:COUNT.")
@click.option("--codebook", type=click.IntRange(min=1), default=16, show_default=True,
              help="Codewords per scale (k-means); log2 of it is the bits per token.")
@click.option("--n-test", type=click.IntRange(min=1), default=360, show_default=True,
              help="Held-out digits (the codebooks never see them).")
@click.option("--n-images", type=click.IntRange(min=1), default=1797, show_default=True,
              help="Digits used in all (a seeded random subset of sklearn's 1,797).")
@click.option("--kmeans-init", type=click.IntRange(1, 100), default=3, show_default=True,
              help="k-means restarts per scale (the best inertia is kept).")
@options.seed_option
@options.run_dir_options
def cli(run_dir, resume, force, **kw):
    """Tokenize sklearn's digits with VAR's multi-scale residual quantization (FoundationVision/VAR
    models/quant.py): for each scale, area-downsample the residual, replace every token by its nearest
    k-means codeword, bicubic-upsample it back, add it to the reconstruction and subtract it from the
    residual. Every scale has its own codebook, fitted greedily on the training residuals; no encoder and
    no learned conv after the upsampling (the feature map is the image). --seed draws the train/test split
    and the k-means starts.

    Writes to DIR: tokenize.csv (one row per number of scales K: side of the K-th scale, tokens, bits,
    codewords, train/test RMSE, test relative L2, and the test RMSE of the same cascade without
    quantisation), tokenize.png (error vs K), recon.png (test digits reconstructed after each K),
    codebooks.npz (scale_0 ... one (codewords, patch^2) array per scale). Prints a table on stderr and one
    JSON line on stdout.

    \b
    Examples:
      $ paperkit var-approx-tokenize --run-dir runs/tok
      $ paperkit var-approx-tokenize --scales geom:1:16:5 --codebook 32 --run-dir runs/tok-geom
      $ paperkit var-approx-tokenize --side 8 --patch 2 --scales 1,2,4 --run-dir runs/tok-patch
    """
    import json

    from paperkit.core import io, plots, tables
    from paperkit.methods.var_approx.tokenize import (
        TokenizeSettings,
        execute_tokenize,
        prepare_tokenize,
        tokenize_figures,
    )
    from paperkit_cli import runtime

    s = runtime.settings(TokenizeSettings)
    inputs = prepare_tokenize(s)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    rows, books = execute_tokenize(inputs, run)
    tables.write_table(run.file("tokenize.csv"), rows)
    io.write_arrays(run.file("codebooks.npz"), {f"scale_{k}": b for k, b in enumerate(books)})
    curve, recon = tokenize_figures(inputs, rows, books)
    plots.save_figure(curve, run.file("tokenize.png"))
    plots.save_figure(recon, run.file("recon.png"))
    options.report_table(rows, [("scales_used", "K", "d"), ("side", "side", "d"), ("tokens", "tokens", "d"),
                                ("bits", "bits", ".0f"), ("train_rmse", "train RMSE", ".4f"),
                                ("test_rmse", "test RMSE", ".4f"), ("test_rel_l2", "rel L2", ".3f"),
                                ("test_rmse_unquantized", "no-quant RMSE", ".4f")],
                         title=f"var-approx-tokenize: digits {s.side}x{s.side}, patch {s.patch}, "
                               f"{s.codebook} codewords per scale")
    runtime.write_manifest(run_dir=run.path, seed=s.seed)
    last = rows[-1]
    options.echo_data(json.dumps({"run_dir": str(run.path), "scales": list(inputs.scales), "tokens": last["tokens"],
                                  "test_rmse": [round(r["test_rmse"], 6) for r in rows]}))
