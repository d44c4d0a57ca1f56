"""Anti-aliased signed-distance rasteriser for diagram strokes: a numba kernel beside a numpy reference.

A stroke is one row of a float64 table ``(S, 10)``:
``kind, a0, a1, a2, a3, a4, width, grey, dash, _`` with kind 0 = segment ``(x0, y0, x1, y1)`` and kind 1 =
arc ``(cx, cy, r, t0, t1)`` (angles in radians, ``t0 <= t1 <= t0 + 2 pi``). Pixel ``(row i, col j)`` has
its centre at ``(x, y) = (j, i)``. Coverage is ``clip(w/2 + 0.5 - d, 0, 1)`` of the distance ``d`` to the
stroke's centre line (a one-pixel linear ramp = anti-aliasing); a dashed stroke (``dash`` = period in px)
is drawn where the arc-length position modulo the period is below 60% of it. The image is
``1 - max_s grey_s * coverage_s`` (white paper, dark ink); the boundary map marks pixels within one pixel
of a drawn stroke's edge (``d <= w/2 + 1``), the spec's 1-px dilated strokes.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

SEGMENT, ARC = 0, 1
DASH_ON = 0.6
TWO_PI = 2.0 * math.pi


@njit(cache=True, inline="always")
def _distance(kind: float, a0: float, a1: float, a2: float, a3: float, a4: float, x: float, y: float) -> tuple:
    """(distance to the centre line, arc-length position of the nearest point)."""
    if kind == SEGMENT:
        dx, dy = a2 - a0, a3 - a1
        length2 = dx * dx + dy * dy
        t = 0.0 if length2 == 0.0 else ((x - a0) * dx + (y - a1) * dy) / length2
        t = min(1.0, max(0.0, t))
        px, py = a0 + t * dx - x, a1 + t * dy - y
        return math.sqrt(px * px + py * py), t * math.sqrt(length2)
    vx, vy = x - a0, y - a1
    rho = math.sqrt(vx * vx + vy * vy)
    a = a3 + (math.atan2(vy, vx) - a3) % TWO_PI
    if a <= a4:
        return abs(rho - a2), a2 * (a - a3)
    sx, sy = a0 + a2 * math.cos(a3) - x, a1 + a2 * math.sin(a3) - y
    ex, ey = a0 + a2 * math.cos(a4) - x, a1 + a2 * math.sin(a4) - y
    ds, de = math.sqrt(sx * sx + sy * sy), math.sqrt(ex * ex + ey * ey)
    return (ds, 0.0) if ds <= de else (de, a2 * (a4 - a3))


@njit(cache=True)
def _extent(s: np.ndarray) -> tuple:
    """Bounding box (x0, y0, x1, y1) of a stroke including its width and the anti-aliasing ramp."""
    pad = 0.5 * s[6] + 1.5
    if s[0] == SEGMENT:
        return min(s[1], s[3]) - pad, min(s[2], s[4]) - pad, max(s[1], s[3]) + pad, max(s[2], s[4]) + pad
    return s[1] - s[3] - pad, s[2] - s[3] - pad, s[1] + s[3] + pad, s[2] + s[3] + pad


@njit(cache=True, parallel=True)
def rasterise(strokes: np.ndarray, height: int, width: int) -> tuple:
    """(image float64 (H, W) in [0, 1], boundary uint8 (H, W)); rows in parallel, strokes clipped to their box."""
    ink = np.zeros((height, width))
    edge = np.zeros((height, width), dtype=np.uint8)
    n = strokes.shape[0]
    boxes = np.empty((n, 4))
    for k in range(n):
        boxes[k, 0], boxes[k, 1], boxes[k, 2], boxes[k, 3] = _extent(strokes[k])
    for i in prange(height):
        for k in range(n):
            if i < boxes[k, 1] or i > boxes[k, 3]:
                continue
            s = strokes[k]
            j0 = max(0, int(math.floor(boxes[k, 0])))
            j1 = min(width - 1, int(math.ceil(boxes[k, 2])))
            for j in range(j0, j1 + 1):
                d, pos = _distance(s[0], s[1], s[2], s[3], s[4], s[5], float(j), float(i))
                if s[8] > 0.0 and pos % s[8] >= DASH_ON * s[8]:
                    continue
                cov = min(1.0, max(0.0, 0.5 * s[6] + 0.5 - d))
                if s[7] * cov > ink[i, j]:
                    ink[i, j] = s[7] * cov
                if d <= 0.5 * s[6] + 1.0:
                    edge[i, j] = 1
    return 1.0 - ink, edge


def rasterise_reference(strokes: np.ndarray, height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The same image and boundary map with numpy, one stroke at a time over the whole grid."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    ink = np.zeros((height, width))
    edge = np.zeros((height, width), dtype=np.uint8)
    for kind, a0, a1, a2, a3, a4, w, grey, dash, _ in np.asarray(strokes, dtype=np.float64):
        if kind == SEGMENT:
            dx, dy = a2 - a0, a3 - a1
            length2 = dx * dx + dy * dy
            t = np.zeros_like(x) if length2 == 0 else ((x - a0) * dx + (y - a1) * dy) / length2
            t = np.clip(t, 0.0, 1.0)
            d = np.hypot(a0 + t * dx - x, a1 + t * dy - y)
            pos = t * np.sqrt(length2)
        else:
            rho = np.hypot(x - a0, y - a1)
            a = a3 + np.mod(np.arctan2(y - a1, x - a0) - a3, TWO_PI)
            ds = np.hypot(a0 + a2 * np.cos(a3) - x, a1 + a2 * np.sin(a3) - y)
            de = np.hypot(a0 + a2 * np.cos(a4) - x, a1 + a2 * np.sin(a4) - y)
            inside = a <= a4
            d = np.where(inside, np.abs(rho - a2), np.minimum(ds, de))
            pos = np.where(inside, a2 * (a - a3), np.where(ds <= de, 0.0, a2 * (a4 - a3)))
        drawn = np.ones_like(x, dtype=bool) if dash <= 0 else np.mod(pos, dash) < DASH_ON * dash
        cov = np.where(drawn, np.clip(0.5 * w + 0.5 - d, 0.0, 1.0), 0.0)
        ink = np.maximum(ink, grey * cov)
        edge |= (drawn & (d <= 0.5 * w + 1.0)).astype(np.uint8)
    return 1.0 - ink, edge
