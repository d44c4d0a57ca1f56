"""``paperkit sve-eval``: a trained sve model's metrics on a labelled NPZ (SVE-Math, Zhang et al., ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._sve_common import model_option

SETTINGS = "paperkit.methods.sve.run:EvalSettings"


@options.command("sve-eval", short_help="Grounding mAP, junction and boundary F1, probe accuracy of a model on an NPZ.")
@click.option("--data", required=True, metavar="PATH.npz|NAME",
              help="A labelled NPZ written by sve-render, or the built-in 'sve-eval64' / 'sve-eval200' (200 diagrams of 64 / 128 px).")
@model_option
@click.option("--batch-size", type=click.IntRange(1, 4096), default=64, show_default=True, help="Images per forward pass.")
@click.option("-o", "--output", default="-", show_default=True, metavar="PATH", help="Where to write the metrics JSON; '-' is stdout.")
@options.device_option
@options.jobs_option
def cli(data, model, batch_size, output, device, jobs):
    """Evaluate a model on labelled diagrams.

    Writes one JSON object: map50 and ap50_per_class (COCO 101-point, IoU 0.5), junction
    precision/recall/f1 (Hungarian matching within 4 px), boundary precision/recall/f1 (2-px tolerance),
    probe_accuracy (all and per question type), router_weights (mean per level and question type).

    \b
    Examples:
      $ paperkit sve-eval --data diagrams.npz --model runs/sve/model.pt -o metrics.json
      $ paperkit sve-eval --data diagrams.npz --model sve-small
    """
    from paperkit.core import io
    from paperkit.methods.sve.run import EvalSettings, execute_eval, prepare_eval
    from paperkit_cli import runtime

    s = runtime.settings(EvalSettings)
    packed, models, config, dev = prepare_eval(s, data, model)
    metrics = execute_eval(s, packed, models, config, dev)
    if io.is_stdio(output):
        options.echo_data(io.dumps_json(metrics, indent=None))
    else:
        io.write_json(output, metrics)
    from paperkit.methods.sve.inputs import BUILTIN_DATA

    runtime.write_manifest(output=output, inputs=[BUILTIN_DATA.get(data, data)])
    options.report(f"sve-eval: mAP@0.5 {metrics['map50']:.4f}, junction F1 {metrics['junction']['f1']:.4f}, "
                   f"boundary F1 {metrics['boundary']['f1']:.4f}, probe accuracy {metrics['probe_accuracy']['all']:.4f}")
