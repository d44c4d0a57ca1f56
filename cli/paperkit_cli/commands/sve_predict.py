"""``paperkit sve-predict``: primitives, junctions and router weights per diagram as JSON lines (SVE-Math)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._sve_common import model_option

SETTINGS = "paperkit.methods.sve.run:PredictSettings"


@options.command("sve-predict", writes=("metrics_path", "boundary_dir"),
                 short_help="Detect primitives and junctions in diagrams (JSON lines per image).")
@click.option("--images", required=True, metavar="DIR|PATH.npz|NAME",
              help="A built-in labelled set ('sve-eval64': 200 diagrams of 64 px, the held-out set of 'sve-small'; "
                   "'sve-eval200': 200 of 128 px), a folder of PNG/JPEG diagrams (greyscale or RGB; RGBA composited on white; 16-bit scaled; at "
                   "least 64 px a side) or an NPZ with an 'images' array (uint8, or floats in [0, 1]).")
@model_option
@click.option("--batch-size", type=click.IntRange(1, 4096), default=32, show_default=True, help="Images per forward pass.")
@click.option("--score-threshold", type=options.FiniteFloat(0.0, 1.0), default=0.3, show_default=True,
              help="Boxes with a lower centre score are left out of the JSON (metrics use all of them).")
@click.option("--boundary-dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Also write each predicted boundary map as a PNG (255 = boundary).")
@click.option("--metrics", "metrics_path", default=None, metavar="PATH.json",
              help="With a labelled NPZ: write the metrics (as sve-eval) here too.")
@options.output_options
@options.device_option
@options.jobs_option
def cli(images, model, batch_size, score_threshold, boundary_dir, metrics_path, output, fmt, manifest_path, device, jobs):
    """Run a trained model (or the built-in 'sve-small', trained on 64-px diagrams) on diagrams.

    One JSON line per image: {"image": file name or 0-based index, "boxes": [[x0, y0, x1, y1], ...] in
    px, "classes": [line|triangle|quadrilateral|circle|sector, ...], "scores": [...], "junctions":
    [[x, y], ...], "router_weights": {fused_p2, p3, p4, p5} (the image-only weights)}. Images whose sides
    are not multiples of 32 are padded with white at the bottom/right (coordinates are unchanged).

    \b
    Examples:
      $ paperkit sve-predict --images sve-eval64 --model sve-small --metrics m.json -o preds.jsonl
      $ paperkit sve-predict --images pngs/ --model runs/sve/model.pt --boundary-dir edges/ -o preds.jsonl
    """
    from pathlib import Path

    from paperkit.core import io
    from paperkit.core.errors import UsageError
    from paperkit.methods.sve import plots
    from paperkit.methods.sve.run import PredictSettings, boundary_files, execute_predict, prepare_predict
    from paperkit_cli import runtime

    if fmt not in (None, "jsonl") or (not io.is_stdio(output) and io.detect_format(output, default="jsonl") != "jsonl"):
        raise UsageError(f"-o {output}: sve-predict writes JSON lines (.jsonl or '-')")
    inp = prepare_predict(runtime.settings(PredictSettings), images, model, want_metrics=metrics_path is not None)
    if boundary_dir:
        files = boundary_files(inp.names, boundary_dir, inp.images_path)
    rows, edges, metrics = execute_predict(inp)
    outputs = []
    if boundary_dir:
        from PIL import Image

        Path(boundary_dir).mkdir(parents=True, exist_ok=True)
        for path, edge in zip(files, edges, strict=True):
            plots.save_png(Image.fromarray(edge * 255), path)
            outputs.append(path)
    if metrics_path:
        io.write_json(metrics_path, metrics)
        outputs.append(metrics_path)
    io.write_jsonl(output, rows)
    runtime.write_manifest(output=output, outputs=outputs, manifest_path=manifest_path,
                           inputs=[inp.images_path] if inp.images_path.is_file() else [],
                           extra={"model_sha256": io.sha256_file(inp.model_path)})
    options.report(f"sve-predict: {len(rows)} images, {sum(len(r['boxes']) for r in rows)} boxes, "
                   f"{sum(len(r['junctions']) for r in rows)} junctions")
