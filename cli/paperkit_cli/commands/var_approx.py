"""``paperkit var-approx``: fit one VAR transformer (Φ_up + one single-head attention layer) to a target."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._var_approx_common import shared_options

SETTINGS = "paperkit.methods.var_approx.run:FitSettings"


@options.command("var-approx", short_help="Fit a one-layer, one-head VAR transformer to a Lipschitz target.")
@click.option("--target", default="fourier", show_default=True,
              help="fourier (sum of sines with Lipschitz constant --lipschitz), digits (Nadaraya-Watson over "
                   "sklearn digits' PCA codes) or context (products of two different tokens).")
@click.option("--lipschitz", type=options.FiniteFloat(0.0, min_open=True), default=4.0, show_default=True,
              help="--target fourier: the Lipschitz constant L of the target.")
@click.option("--scales", default="2,4,8", show_default=True, metavar="LIST|var|geom:A:B:K",
              help="Side lengths of the pyramid's maps (increasing, from the initial map's side), 'var' for "
                   "VAR's 1,2,3,4,5,6,8,10,13,16, or geom:FIRST:LAST:COUNT.")
@click.option("--embed", type=click.IntRange(min=1), default=32, show_default=True, help="Embedding width D.")
@click.option("--width", type=click.IntRange(min=1), default=64, show_default=True, help="FFN width m.")
@click.option("--readout", type=click.Choice(["last", "pyramid"]), default="last", show_default=True,
              help="Read out the last scale (the image) or every scale (area-downsampled targets).")
@click.option("--head", type=click.Choice(["regress", "flow"]), default="regress", show_default=True,
              help="regress (MSE) or flow (FlowAR's per-scale flow matching, Euler sampler; Cor. 7.2).")
@shared_options
@options.seed_option
@options.run_dir_options
def cli(run_dir, resume, force, **kw):
    """Fit the VAR transformer of Thm 6.6 (Φ_up, one single-head softmax attention layer, token-wise ReLU
    FFNs, linear readout) to a synthetic target g: [0,1]^{H×W×d} -> an image at the last scale.

    Writes to DIR: metrics.json (train/test RMSE, relative L2, max error, parameters, tokens L, attention
    pairs per sample; flow: sample-mean MSE and sliced Wasserstein at the start and end), model.pt (state
    dict), pred_grid.png (test targets vs predictions); flow: flow_history.csv. Prints a table on stderr and
    one JSON line on stdout. The wall time is in manifest.json.

    \b
    Examples:
      $ paperkit var-approx --target fourier --lipschitz 4 --width 64 --run-dir runs/fit
      $ paperkit var-approx --target context --ablate no-attn --steps 300 --run-dir runs/noattn
      $ paperkit var-approx --head flow --mask block --steps 300 --run-dir runs/flow
    """
    import json

    from paperkit.core import io, plots, tables
    from paperkit.methods.var_approx.plots import pred_grid_figure
    from paperkit.methods.var_approx.run import FitSettings, execute_fit, prepare_fit
    from paperkit_cli import runtime

    s = runtime.settings(FitSettings)
    inputs = prepare_fit(s)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    out = execute_fit(inputs, run)
    m = out["metrics"]
    io.write_json(run.file("metrics.json"), m)
    io.save_torch(run.file("model.pt"), out["state"])
    if out["history"]:
        tables.write_table(run.file("flow_history.csv"), out["history"])
    plots.save_figure(pred_grid_figure(inputs.problem, s.seed, out["pred_test"]), run.file("pred_grid.png"))
    options.report_table([m], [("test_rmse", "test RMSE", ".4g"), ("test_rel_l2", "rel L2", ".3f"),
                               ("test_max_error", "max err", ".3g"), ("parameters", "params", "d"),
                               ("tokens", "tokens L", "d"), ("attention_pairs", "attn pairs", "d")],
                         title=f"var-approx: {s.target}, width {s.width}, ablate {s.ablate}, head {s.head}")
    wall = runtime.elapsed()
    runtime.write_manifest(run_dir=run.path, seed=s.seed, extra={"wall_time_s": wall})
    keys = ("test_rmse", "test_rel_l2", "test_max_error", "parameters", "tokens")
    options.echo_data(json.dumps({"run_dir": str(run.path), **{k: m[k] for k in keys}, "wall_time_s": round(wall, 3)}))
