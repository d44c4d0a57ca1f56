"""Pictures: label/prediction overlays (Pillow) and router weights by question type (matplotlib)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from paperkit.methods.sve.render import CLASSES

COLOURS = ((31, 119, 180), (44, 160, 44), (148, 103, 189), (255, 127, 14), (23, 190, 207))
JUNCTION = (214, 39, 40)


def overlay(image: np.ndarray, boxes: np.ndarray, classes: np.ndarray, junctions: np.ndarray,
            scores: np.ndarray | None = None, scale: int = 2) -> Any:
    """An RGB Pillow image: the diagram (upscaled ``scale``x), class boxes with names, junctions as red dots."""
    from PIL import Image, ImageDraw

    img = Image.fromarray(image).convert("RGB").resize((image.shape[1] * scale, image.shape[0] * scale), Image.NEAREST)
    draw = ImageDraw.Draw(img)
    f = lambda v: (float(v) + 0.5) * scale  # noqa: E731  (pixel centre j sits at x = j)
    for k, (b, c) in enumerate(zip(np.asarray(boxes).reshape(-1, 4), np.asarray(classes), strict=True)):
        colour = COLOURS[int(c) % len(COLOURS)]
        draw.rectangle([f(b[0]), f(b[1]), f(b[2]), f(b[3])], outline=colour, width=1)
        label = CLASSES[int(c)] + ("" if scores is None else f" {float(scores[k]):.2f}")
        draw.text((f(b[0]) + 2, f(b[1]) + 1), label, fill=colour)
    for x, y in np.asarray(junctions).reshape(-1, 2):
        draw.ellipse([f(x) - 2.5, f(y) - 2.5, f(x) + 2.5, f(y) + 2.5], outline=JUNCTION, width=1)
    return img


def save_png(img: Any, path: str | os.PathLike) -> None:
    from paperkit.core import io

    with io.atomic_write(path, "wb") as fh:
        img.save(fh, format="PNG")


def router_figure(table: dict[str, dict[str, float]], title: str) -> Any:
    """Grouped bars: mean router weight of each level, per question type."""
    from paperkit.core.plots import new_figure

    fig, ax = new_figure(figsize=(6.5, 3.4))
    types = list(table)
    levels = list(next(iter(table.values()))) if table else []
    width = 0.8 / max(1, len(levels))
    for j, level in enumerate(levels):
        ax.bar(np.arange(len(types)) + j * width, [table[t][level] for t in types], width, label=level)
    ax.set_xticks(np.arange(len(types)) + width * (len(levels) - 1) / 2, types)
    ax.set_ylabel("mean router weight")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend(fontsize=8, ncol=len(levels))
    return fig
