"""``paperkit sve-encode``: train the primitive encoder, the global counts encoder, the router and the probe
(SVE-Math / GeoGLIP, Zhang et al., ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._sve_common import max_primitives_option, size_option

SETTINGS = "paperkit.methods.sve.run:EncodeSettings"


@options.command("sve-encode", short_help="Train the geometry-grounded encoder, router and probe on rendered diagrams.")
@size_option
@click.option("--n-train", type=click.IntRange(1, 1_000_000), default=8000, show_default=True,
              help="Training diagrams (rendered from --seed, then reused every epoch).")
@click.option("--epochs", type=click.IntRange(1, 1000), default=6, show_default=True,
              help="Epochs of each encoder (primitive multi-task, or counts + heads, and the global encoder).")
@click.option("--probe-epochs", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="Epochs of the router + probe on the frozen encoders.")
@click.option("--batch-size", type=click.IntRange(1, 4096), default=32, show_default=True, help="Images per step.")
@click.option("--lr", type=options.FiniteFloat(0.0, 1.0, min_open=True), default=2e-3, show_default=True,
              help="Peak AdamW learning rate (one-cycle schedule).")
@click.option("--router", type=click.Choice(["on", "equal", "global-only"]), default="on", show_default=True,
              help="Feature router: learned level weights, equal weights, or the global encoder's tokens only.")
@click.option("--concat", type=click.Choice(["channel", "sequence"]), default="channel", show_default=True,
              help="Join routed levels to the global tokens along channels (the paper's default) or the sequence.")
@click.option("--pretrain", type=click.Choice(["primitives", "counts"]), default="primitives", show_default=True,
              help="primitives: multi-task boxes/junctions/boundaries; counts: the same encoder trained on image-level "
                   "class counts only, its heads then fitted on frozen features (the baseline).")
@max_primitives_option
@click.option("--widths", type=options.ListOf(click.IntRange(4, 1024)), default="32,48,96,128", show_default=True,
              metavar="W1,W2,W3,W4", help="Channel widths of the 4 backbone stages (strides 4, 8, 16, 32).")
@click.option("--channels", type=click.IntRange(8, 1024), default=64, show_default=True,
              help="FPN channels (also the router/probe width; the fused stride-2 map has half).")
@click.option("--grid", type=click.IntRange(1, 256), default=16, show_default=True,
              help="Token grid side: every level is resized to grid x grid tokens for the router.")
@click.option("--eval", "eval_path", default=None, metavar="PATH.npz",
              help="Held-out labelled NPZ (sve-render) [default: the shipped 200-image set at --size 128, else "
                   "--n-eval diagrams rendered from a fixed seed].")
@click.option("--n-eval", type=click.IntRange(1, 100_000), default=200, show_default=True,
              help="Held-out diagrams to render when the shipped set does not apply.")
@click.option("--junction-threshold", type=options.FiniteFloat(0.0, 1.0, min_open=True), default=0.3,
              show_default=True, help="Junction heatmap peaks at or above this become junctions.")
@click.option("--dtype", type=click.Choice(["float32", "bfloat16"]), default="float32", show_default=True,
              help="Compute dtype of the encoders' training. bfloat16: mixed precision (bfloat16 autocast, channels-last "
                   "maps; weights, optimiser and losses float32), ~1.4x the images/s where the hardware has bfloat16 "
                   "units (measured on an AVX512-BF16 CPU); the router and probe train in float32.")
@click.option("--half", is_flag=True, help="Store float16 weights in model.pt (half the size; metrics are those of "
                                          "the stored weights).")
@click.option("--router-baselines", is_flag=True,
              help="Also train the probe with the other router modes (on, equal, global-only) on the same frozen "
                   "encoders; metrics.json gets router_baselines (probe accuracy and router weights per mode). "
                   "With --resume it may be added to a finished run: only the baseline probes are trained.")
@options.seed_option
@options.device_option
@options.jobs_option
@options.run_dir_options
def cli(size, n_train, epochs, probe_epochs, batch_size, lr, router, concat, pretrain, max_primitives, widths, channels,
        grid, eval_path, n_eval, junction_threshold, dtype, half, router_baselines, seed, device, jobs, run_dir, resume, force):
    """Train on N rendered diagrams and evaluate on the held-out set.

    Writes to DIR: model.pt (encoder, global encoder, router, probe, config and the metrics), metrics.json
    (mAP@0.5 and AP per class, junction P/R/F1 at 4 px, boundary P/R/F1 at 2 px, probe accuracy per
    question type, mean router weights per level and question type), curves.csv (loss per epoch and
    stage), router_weights.csv/.png, overlay_0..7.png (predictions on 8 held-out diagrams). Prints the
    epoch table and the metrics on stderr and one JSON line on stdout. --resume continues from the
    finished stages (data, encoder, global encoder, probe).

    \b
    Examples:
      $ paperkit sve-encode --n-train 8000 --epochs 6 --run-dir runs/sve
      $ paperkit sve-encode --epochs 2 --dtype bfloat16 --run-dir runs/sve-5min
      $ paperkit sve-encode --size 64 --n-train 500 --epochs 2 --pretrain counts --run-dir runs/counts
      $ paperkit sve-encode --router equal --concat sequence --run-dir runs/equal
    """
    import json

    from paperkit.core import io, plots, tables
    from paperkit.methods.sve import plots as splots
    from paperkit.methods.sve.run import EncodeSettings, execute_encode, prepare_encode
    from paperkit_cli import runtime

    s = runtime.settings(EncodeSettings, widths=tuple(widths))
    inp = prepare_encode(s, eval_path)
    extra = {"eval_sha256": io.sha256_file(eval_path)} if eval_path else None
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("device", "jobs"),
                             additive=("router_baselines",), extra=extra)
    res = execute_encode(inp, run)
    io.save_torch(run.file("model.pt"), res.state)
    io.write_json(run.file("metrics.json"), res.metrics)
    tables.write_table(run.file("curves.csv"), res.curves)
    rw = res.metrics["router_weights"]
    if rw:
        tables.write_table(run.file("router_weights.csv"), [{"question_type": t, **w} for t, w in rw.items()])
        plots.save_figure(splots.router_figure(rw, f"router weights ({router}, {concat})"), run.file("router_weights.png"))
    for i, p in enumerate(res.preds):
        splots.save_png(splots.overlay(inp.eval_data["images"][i], p["boxes"][p["scores"] >= 0.3],
                                       p["classes"][p["scores"] >= 0.3], p["junctions"], p["scores"][p["scores"] >= 0.3]),
                        run.file(f"overlay_{i}.png"))
    keys = sorted({k for r in res.curves for k in r} - {"stage", "epoch"})
    options.report_table(res.curves, [("stage", "stage", ""), ("epoch", "epoch", "d")] + [(k, k, ".4f") for k in keys],
                         title="sve-encode: mean loss per epoch")
    m = res.metrics
    summary = {"run_dir": str(run.path), "map50": m["map50"], "junction_f1": m["junction"]["f1"],
               "boundary_f1": m["boundary"]["f1"], "probe_accuracy": m["probe_accuracy"]["all"],
               "router": router, "pretrain": pretrain}
    options.report_table([{"metric": k, "value": v} for k, v in summary.items() if isinstance(v, float)]
                         + [{"metric": f"probe {t}", "value": v} for t, v in m["probe_accuracy"].items() if t != "all"]
                         + [{"metric": f"probe ({mode} router)", "value": b["probe_accuracy"]["all"]}
                            for mode, b in m.get("router_baselines", {}).items()],
                         [("metric", "metric", ""), ("value", "value", ".4f")], title=f"held-out metrics ({m['eval_set']})")
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=[eval_path] if eval_path else [])
    options.echo_data(json.dumps(summary))
