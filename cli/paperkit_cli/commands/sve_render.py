"""``paperkit sve-render``: labelled geometry diagrams from a seed (SVE-Math data engine, Zhang et al., ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._sve_common import max_primitives_option, size_option

SETTINGS = "paperkit.methods.sve.run:RenderSettings"


@options.command("sve-render", writes=("png_dir",),
                 short_help="Render labelled geometry diagrams (boxes, junctions, boundaries, questions).")
@click.option("--n", type=click.IntRange(min=1), default=200, show_default=True, help="Number of diagrams.")
@size_option
@max_primitives_option
@click.option("-o", "--output", required=True, metavar="PATH.npz",
              help="The NPZ to write (a manifest goes next to it).")
@click.option("--png-dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Also write each diagram as a PNG with its label overlay (boxes, class names, junctions).")
@options.seed_option
@options.jobs_option
def cli(n, size, max_primitives, output, png_dir, seed, jobs):
    """Render N random geometry diagrams with exact labels into one NPZ.

    Diagrams hold segments/polylines, triangles, rectangles/parallelograms, circles, arcs/sectors,
    constructions (points on lines, tangents, inscribed triangles) and clutter (letters, dashed
    auxiliary lines, widths, grey levels). Diagram k depends only on (--seed, k).

    NPZ arrays: images uint8 (N, H, W) (255 = paper); boundary uint8 (N, H, W); boxes float32 (B, 4)
    x0, y0, x1, y1 px with box_image (B,) and box_class (B,) (0 line, 1 triangle, 2 quadrilateral,
    3 circle, 4 sector); junctions float32 (J, 2) x, y with junction_image (J,); questions q_image,
    q_type (0 count, 1 on_line, 2 centre, 3 parallel), q_class, q_points (Q, 4, 2), q_values (Q, 4),
    q_options, q_answer. Pixel j has its centre at coordinate j; indices are 0-based.

    \b
    Examples:
      $ paperkit sve-render --n 200 --seed 0 -o diagrams.npz
      $ paperkit sve-render --n 16 --size 128 -o demo.npz --png-dir demo_png
    """
    import json
    from pathlib import Path

    from paperkit.core import io
    from paperkit.core.errors import UsageError
    from paperkit.methods.sve import plots
    from paperkit.methods.sve.render import labels_of
    from paperkit.methods.sve.run import RenderSettings, execute_render, prepare_render
    from paperkit_cli import runtime

    if io.is_stdio(output) or io.detect_format(output, default="npz") != "npz":
        raise UsageError(f"-o {output}: expected a .npz file")
    s = prepare_render(runtime.settings(RenderSettings))
    data = execute_render(s)
    io.write_arrays(output, data)
    outputs = [output]
    if png_dir:
        Path(png_dir).mkdir(parents=True, exist_ok=True)
        for i in range(len(data["images"])):
            boxes, classes, junctions = labels_of(data, i)
            path = Path(png_dir) / f"{i:05d}.png"
            plots.save_png(plots.overlay(data["images"][i], boxes, classes, junctions), path)
            outputs.append(path)
    runtime.write_manifest(output=output, outputs=outputs, seed=seed)
    options.report(f"sve-render: {n} diagrams of {size} px, {len(data['boxes'])} boxes, {len(data['junctions'])} "
                   f"junctions, {len(data['q_image'])} questions -> {output}")
    options.echo_data(json.dumps({"output": str(output), "n": n, "size": size, "boxes": int(len(data["boxes"])),
                                  "junctions": int(len(data["junctions"])), "questions": int(len(data["q_image"]))}))
