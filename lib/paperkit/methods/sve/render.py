"""The data engine: random geometry diagrams with exact labels (spec "Offline plan").

Each diagram holds 1..``max_primitives`` primitives (segments/polylines, triangles, rectangles and
parallelograms, circles, arcs/sectors) and constructions (points on lines, tangents, inscribed
triangles), plus clutter (point letters drawn with Pillow, dashed auxiliary lines, random widths and
grey levels). Labels come from the geometry, not from the pixels: class boxes, junctions (endpoints,
vertices, centres of sectors, constructed points and every analytic intersection of two primitive
strokes), the boundary map of the rasteriser, and multiple-choice questions with their keys.

Diagram ``k`` of a data set with seed ``s`` is drawn from ``SeedSequence([s, k])`` alone, so any subset,
order or worker split renders the same pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from paperkit.methods.sve.kernels import ARC, SEGMENT, rasterise

CLASSES = ("line", "triangle", "quadrilateral", "circle", "sector")
QUESTION_TYPES = ("count", "on_line", "centre", "parallel")
N_OPTIONS = 4
LETTERS = "ABCDEFGHKLMNOPQRST"
PARALLEL_NO_KEPT = 0.3          # share of "not parallel" questions kept: about as many "yes" as "no" keys
MIN_SIZE = 64


@dataclass
class Diagram:
    """One rendered diagram and its labels (coordinates in pixels, x = column, y = row)."""

    image: np.ndarray                      # uint8 (H, W), 255 = paper
    boundary: np.ndarray                   # uint8 (H, W), 1 on (dilated) strokes
    boxes: np.ndarray                      # float32 (B, 4) x0, y0, x1, y1
    classes: np.ndarray                    # int64 (B,)
    junctions: np.ndarray                  # float32 (J, 2) x, y
    questions: list[dict] = field(default_factory=list)


# ------------------------------------------------------------------------------------------ geometry
def segment(p: np.ndarray, q: np.ndarray, width: float, grey: float, dash: float = 0.0) -> list[float]:
    return [SEGMENT, p[0], p[1], q[0], q[1], 0.0, width, grey, dash, 0.0]


def arc(c: np.ndarray, r: float, t0: float, t1: float, width: float, grey: float, dash: float = 0.0) -> list[float]:
    return [ARC, c[0], c[1], r, t0, t1, width, grey, dash, 0.0]


def _on_arc(angle: float, t0: float, t1: float) -> bool:
    return t0 + (angle - t0) % (2 * math.pi) <= t1 + 1e-9


def intersections(a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    """Analytic intersection points of two strokes (segment/segment, segment/arc, arc/arc)."""
    if a[0] == ARC and b[0] == SEGMENT:
        a, b = b, a
    if a[0] == SEGMENT and b[0] == SEGMENT:
        p, r = a[1:3], a[3:5] - a[1:3]
        q, s = b[1:3], b[3:5] - b[1:3]
        den = r[0] * s[1] - r[1] * s[0]
        if abs(den) < 1e-9:
            return []
        t = ((q[0] - p[0]) * s[1] - (q[1] - p[1]) * s[0]) / den
        u = ((q[0] - p[0]) * r[1] - (q[1] - p[1]) * r[0]) / den
        return [p + t * r] if -1e-9 <= t <= 1 + 1e-9 and -1e-9 <= u <= 1 + 1e-9 else []
    if a[0] == SEGMENT:
        p, d = a[1:3], a[3:5] - a[1:3]
        c, rad = b[1:3], b[3]
        f = p - c
        qa, qb, qc = d @ d, 2 * f @ d, f @ f - rad * rad
        disc = qb * qb - 4 * qa * qc
        if disc < 0 or qa == 0:
            return []
        roots = {(-qb - math.sqrt(disc)) / (2 * qa), (-qb + math.sqrt(disc)) / (2 * qa)}
        pts = [p + t * d for t in sorted(roots) if -1e-9 <= t <= 1 + 1e-9]
        return [x for x in pts if _on_arc(math.atan2(x[1] - c[1], x[0] - c[0]), b[4], b[5])]
    c0, r0, c1, r1 = a[1:3], a[3], b[1:3], b[3]
    dist = float(np.hypot(*(c1 - c0)))
    if dist == 0 or dist > r0 + r1 or dist < abs(r0 - r1):
        return []
    along = (r0 * r0 - r1 * r1 + dist * dist) / (2 * dist)
    h = math.sqrt(max(0.0, r0 * r0 - along * along))
    mid = c0 + along * (c1 - c0) / dist
    perp = np.array([-(c1 - c0)[1], (c1 - c0)[0]]) / dist
    pts = [mid + h * perp, mid - h * perp]
    return [x for x in pts if _on_arc(math.atan2(x[1] - c0[1], x[0] - c0[0]), a[4], a[5])
            and _on_arc(math.atan2(x[1] - c1[1], x[0] - c1[0]), b[4], b[5])]


def stroke_distance(stroke: np.ndarray, x: float, y: float) -> float:
    """Distance from (x, y) to a stroke's centre line (scalar version of the kernel's)."""
    if stroke[0] == SEGMENT:
        p, d = stroke[1:3], stroke[3:5] - stroke[1:3]
        t = 0.0 if d @ d == 0 else float(np.clip(((x - p[0]) * d[0] + (y - p[1]) * d[1]) / (d @ d), 0, 1))
        return float(np.hypot(p[0] + t * d[0] - x, p[1] + t * d[1] - y))
    c, r, t0, t1 = stroke[1:3], stroke[3], stroke[4], stroke[5]
    if _on_arc(math.atan2(y - c[1], x - c[0]), t0, t1):
        return abs(float(np.hypot(x - c[0], y - c[1])) - r)
    ends = [c + r * np.array([math.cos(t), math.sin(t)]) for t in (t0, t1)]
    return min(float(np.hypot(e[0] - x, e[1] - y)) for e in ends)


def arc_box(c: np.ndarray, r: float, t0: float, t1: float) -> tuple[float, float, float, float]:
    """Tight box of an arc: its end points and every axis extreme inside its angle range."""
    angles = [t0, t1] + [k * math.pi / 2 for k in range(-4, 9) if _on_arc(k * math.pi / 2, t0, t1)]
    xs = [c[0] + r * math.cos(t) for t in angles]
    ys = [c[1] + r * math.sin(t) for t in angles]
    return min(xs), min(ys), max(xs), max(ys)


# ---------------------------------------------------------------------------------------- primitives
@dataclass
class _Primitive:
    cls: int
    strokes: list[list[float]]
    corners: list[np.ndarray]                 # junctions owned by the primitive (endpoints, vertices)
    box: tuple[float, float, float, float]
    centre: np.ndarray | None = None


class _Builder:
    """Draws one diagram's primitives with a numpy Generator, inside a margin of the canvas."""

    def __init__(self, rng: np.random.Generator, size: int):
        self.rng, self.size = rng, size
        self.margin = 0.08 * size

    def point(self) -> np.ndarray:
        return self.rng.uniform(self.margin, self.size - self.margin, 2)

    def style(self) -> tuple[float, float]:
        return float(self.rng.uniform(1.0, 2.2)), float(self.rng.uniform(0.65, 1.0))

    def inside(self, box: tuple[float, float, float, float]) -> bool:
        lo, hi = 2.0, self.size - 3.0
        return box[0] >= lo and box[1] >= lo and box[2] <= hi and box[3] <= hi

    def polygon(self, pts: list[np.ndarray], cls: int) -> _Primitive:
        w, g = self.style()
        strokes = [segment(pts[i], pts[(i + 1) % len(pts)], w, g) for i in range(len(pts))]
        return _Primitive(cls, strokes, list(pts), _points_box(pts, w))

    def line(self) -> _Primitive:
        n = 2 if self.rng.random() < 0.7 else 3        # a segment or a two-piece polyline
        pts = [self.point()]
        for _ in range(n - 1):
            pts.append(self.point())
        w, g = self.style()
        return _Primitive(0, [segment(pts[i], pts[i + 1], w, g) for i in range(n - 1)], pts, _points_box(pts, w))

    def triangle(self) -> _Primitive:
        pts = [self.point() for _ in range(3)]
        return self.polygon(pts, 1)

    def quadrilateral(self) -> _Primitive:
        c, u = self.point(), self.rng.uniform(-0.25, 0.25, 2) * self.size
        if self.rng.random() < 0.5:                      # rectangle: v perpendicular to u
            v = np.array([-u[1], u[0]]) * self.rng.uniform(0.4, 1.0)
        else:                                            # parallelogram
            v = self.rng.uniform(-0.25, 0.25, 2) * self.size
        return self.polygon([c - u - v, c + u - v, c + u + v, c - u + v], 2)

    def circle(self) -> _Primitive:
        r = self.rng.uniform(0.09, 0.3) * self.size
        c = self.point()
        w, g = self.style()
        box = (c[0] - r - w / 2, c[1] - r - w / 2, c[0] + r + w / 2, c[1] + r + w / 2)
        return _Primitive(3, [arc(c, r, 0.0, 2 * math.pi, w, g)], [], box, centre=c)

    def sector(self) -> _Primitive:
        r = self.rng.uniform(0.12, 0.35) * self.size
        c, t0 = self.point(), self.rng.uniform(0, 2 * math.pi)
        t1 = t0 + self.rng.uniform(0.4, 1.6) * math.pi
        w, g = self.style()
        ends = [c + r * np.array([math.cos(t), math.sin(t)]) for t in (t0, t1)]
        strokes = [arc(c, r, t0, t1, w, g)]
        corners = list(ends)
        bx = arc_box(c, r, t0, t1)
        if self.rng.random() < 0.7:                      # a sector (with radii), else a bare arc
            strokes += [segment(c, ends[0], w, g), segment(c, ends[1], w, g)]
            corners.append(c)
            bx = (min(bx[0], c[0]), min(bx[1], c[1]), max(bx[2], c[0]), max(bx[3], c[1]))
        box = (bx[0] - w / 2, bx[1] - w / 2, bx[2] + w / 2, bx[3] + w / 2)
        return _Primitive(4, strokes, corners, box, centre=c)

    def inscribed_triangle(self, circ: _Primitive) -> _Primitive:
        c, r = circ.centre, circ.strokes[0][3]
        angles = np.sort(self.rng.uniform(0, 2 * math.pi, 3))
        return self.polygon([c + r * np.array([math.cos(t), math.sin(t)]) for t in angles], 1)

    def tangent(self, circ: _Primitive) -> _Primitive:
        c, r = circ.centre, circ.strokes[0][3]
        t = self.rng.uniform(0, 2 * math.pi)
        touch = c + r * np.array([math.cos(t), math.sin(t)])
        direction = np.array([-math.sin(t), math.cos(t)])
        a, b = touch - direction * self.rng.uniform(8, 0.3 * self.size), touch + direction * self.rng.uniform(8, 0.3 * self.size)
        w, g = self.style()
        return _Primitive(0, [segment(a, b, w, g)], [a, b, touch], _points_box([a, b], w))


def _points_box(pts: list[np.ndarray], w: float) -> tuple[float, float, float, float]:
    arr = np.asarray(pts)
    return (float(arr[:, 0].min() - w / 2), float(arr[:, 1].min() - w / 2),
            float(arr[:, 0].max() + w / 2), float(arr[:, 1].max() + w / 2))


def _well_shaped(prim: _Primitive, size: int) -> bool:
    """Reject degenerate shapes: tiny boxes, short sides, slivers (they make labels ambiguous)."""
    x0, y0, x1, y1 = prim.box
    if max(x1 - x0, y1 - y0) < 0.15 * size:
        return False
    segs = [s for s in prim.strokes if s[0] == SEGMENT]
    if any(math.hypot(s[3] - s[1], s[4] - s[2]) < 0.08 * size for s in segs):
        return False
    if prim.cls in (1, 2):
        pts = np.asarray(prim.corners)
        a, b = pts[1] - pts[0], pts[2] - pts[0]
        area = abs(a[0] * b[1] - a[1] * b[0]) / 2
        return area > 0.02 * size * size
    return True


def _draw_primitives(b: _Builder, n: int) -> list[_Primitive]:
    makers = (b.line, b.triangle, b.quadrilateral, b.circle, b.sector)
    prims: list[_Primitive] = []
    for _ in range(50 * n):
        if len(prims) == n:
            break
        circles = [p for p in prims if p.cls == 3]
        if circles and b.rng.random() < 0.3:             # constructions on an existing circle
            host = circles[int(b.rng.integers(len(circles)))]
            cand = b.inscribed_triangle(host) if b.rng.random() < 0.5 else b.tangent(host)
        else:
            cand = makers[int(b.rng.integers(len(makers)))]()
        if b.inside(cand.box) and _well_shaped(cand, b.size):
            prims.append(cand)
    return prims


def _dedupe(points: list[np.ndarray], tol: float = 0.5) -> list[np.ndarray]:
    out: list[np.ndarray] = []
    for p in points:
        if all(np.hypot(*(p - q)) > tol for q in out):
            out.append(p)
    return out


def _junctions(prims: list[_Primitive], extra: list[np.ndarray], size: int) -> np.ndarray:
    strokes = [(i, np.asarray(s)) for i, p in enumerate(prims) for s in p.strokes]
    pts = [c for p in prims for c in p.corners] + extra
    for x in range(len(strokes)):
        for y in range(x + 1, len(strokes)):
            if strokes[x][0] != strokes[y][0]:           # a primitive's own corners are already listed
                pts += intersections(strokes[x][1], strokes[y][1])
    pts = [p for p in _dedupe(pts) if 0 <= p[0] <= size - 1 and 0 <= p[1] <= size - 1]
    return np.asarray(pts, dtype=np.float32).reshape(-1, 2)


# ------------------------------------------------------------------------------------------- clutter
def _letters(rng: np.random.Generator, points: np.ndarray, size: int) -> np.ndarray:
    """Point letters next to up to 4 junctions, drawn with Pillow's built-in font (an ink layer in [0, 1])."""
    from PIL import Image, ImageDraw, ImageFont

    layer = Image.new("L", (size, size), 0)
    draw = ImageDraw.Draw(layer)
    font = ImageFont.load_default()
    if len(points):
        picks = rng.permutation(len(points))[: min(4, len(points))]
        names = rng.permutation(len(LETTERS))
        for k, i in enumerate(picks):
            p = points[i]
            off = rng.choice(np.array([[-8.0, -11.0], [3.0, -11.0], [-8.0, 2.0], [3.0, 2.0]]))
            draw.text((float(p[0] + off[0]), float(p[1] + off[1])), LETTERS[names[k]], fill=int(rng.integers(150, 256)),
                      font=font)
    return np.asarray(layer, dtype=np.float64) / 255.0


def _dashed_aux(b: _Builder) -> list[float]:
    p, q = b.point(), b.point()
    return segment(p, q, float(b.rng.uniform(0.8, 1.4)), float(b.rng.uniform(0.4, 0.7)), dash=float(b.rng.uniform(4, 7)))


def _point_dot(p: np.ndarray) -> list[float]:
    return arc(p, 0.9, 0.0, 2 * math.pi, 1.8, 1.0)


# ----------------------------------------------------------------------------------------- questions
def _question(qtype: int, cls: int = -1, points: list[np.ndarray] = (), values: list[float] = (), n_options: int = 2,
              answer: int = 0) -> dict:
    pts = np.full((N_OPTIONS, 2), -1.0, dtype=np.float32)
    for i, p in enumerate(points):
        pts[i] = p
    vals = np.zeros(N_OPTIONS, dtype=np.float32)
    vals[: len(values)] = values
    return {"type": qtype, "cls": cls, "points": pts, "values": vals, "n_options": n_options, "answer": answer}


def _questions(rng: np.random.Generator, prims: list[_Primitive], size: int) -> list[dict]:
    out = []
    counts = np.bincount([p.cls for p in prims], minlength=len(CLASSES))
    cls = int(rng.integers(len(CLASSES)))
    start = max(0, int(counts[cls]) - int(rng.integers(N_OPTIONS)))
    values = [start + int(i) for i in rng.permutation(N_OPTIONS)]   # shuffled: the key's position is uniform
    out.append(_question(0, cls, values=values, n_options=N_OPTIONS, answer=values.index(int(counts[cls]))))
    strokes = [np.asarray(s) for p in prims for s in p.strokes]
    if strokes:                                          # is P on a drawn line?
        s = strokes[int(rng.integers(len(strokes)))]
        u = rng.uniform(0.15, 0.85)
        if s[0] == SEGMENT:
            p, tangent_dir = s[1:3] + u * (s[3:5] - s[1:3]), s[3:5] - s[1:3]
        else:
            t = s[4] + u * (s[5] - s[4])
            p, tangent_dir = s[1:3] + s[3] * np.array([math.cos(t), math.sin(t)]), np.array([-math.sin(t), math.cos(t)])
        if rng.random() < 0.5:
            normal = np.array([-tangent_dir[1], tangent_dir[0]]) / (np.hypot(*tangent_dir) + 1e-12)
            p = p + normal * rng.uniform(4.0, 7.0) * rng.choice([-1.0, 1.0])
        d = min(stroke_distance(st, p[0], p[1]) for st in strokes)
        if (d <= 0.5 or d >= 3.0) and 0 <= p[0] <= size - 1 and 0 <= p[1] <= size - 1:
            out.append(_question(1, points=[p], answer=0 if d <= 0.5 else 1))
    centred = [p for p in prims if p.centre is not None]
    if centred:                                          # which point is the centre?
        host = centred[int(rng.integers(len(centred)))]
        r = host.strokes[0][3]
        opts = [host.centre]
        while len(opts) < N_OPTIONS:
            cand = host.centre + rng.uniform(-r, r, 2)
            if np.hypot(*(cand - host.centre)) > 0.35 * r and all(np.hypot(*(cand - o)) > 0.2 * r for o in opts):
                opts.append(np.clip(cand, 0, size - 1))
        order = rng.permutation(N_OPTIONS)
        out.append(_question(2, points=[opts[i] for i in order], n_options=N_OPTIONS, answer=int(np.argmin(order))))
    segs = [np.asarray(s) for p in prims for s in p.strokes if s[0] == SEGMENT
            and math.hypot(s[3] - s[1], s[4] - s[2]) >= 0.12 * size]
    if len(segs) >= 2:                                   # are the lines through these two points parallel?
        pairs = [(i, j) for i in range(len(segs)) for j in range(i + 1, len(segs))]
        sines = [abs(_cross(segs[i], segs[j])) for i, j in pairs]
        parallel = [k for k, v in enumerate(sines) if v < 0.03]
        skew = [k for k, v in enumerate(sines) if v > 0.3]
        pool = parallel if parallel and (not skew or rng.random() < 0.5) else skew
        # Most diagrams hold no parallel pair (they come mostly from parallelograms): keeping every "no" would
        # make "no" the key of ~80% of these questions, and a probe at that majority would measure nothing.
        if pool is skew and rng.random() >= PARALLEL_NO_KEPT:
            pool = []
        if pool:
            i, j = pairs[pool[int(rng.integers(len(pool)))]]
            mids = [0.5 * (segs[k][1:3] + segs[k][3:5]) for k in (i, j)]
            out.append(_question(3, points=mids, answer=0 if pool is parallel else 1))
    return out


def _cross(a: np.ndarray, b: np.ndarray) -> float:
    u, v = a[3:5] - a[1:3], b[3:5] - b[1:3]
    return float((u[0] * v[1] - u[1] * v[0]) / (np.hypot(*u) * np.hypot(*v)))


# ------------------------------------------------------------------------------------------- diagram
def diagram_strokes(rng: np.random.Generator, size: int, max_primitives: int) -> tuple:
    """The geometry of one diagram: (primitives, strokes table, constructed points, aux strokes)."""
    b = _Builder(rng, size)
    prims = _draw_primitives(b, int(rng.integers(1, max_primitives + 1)))
    dots = []
    lines = [s for p in prims for s in p.strokes if s[0] == SEGMENT]
    for _ in range(int(rng.integers(0, 3))):             # constructed points on lines
        if lines:
            s = np.asarray(lines[int(rng.integers(len(lines)))])
            dots.append(s[1:3] + rng.uniform(0.2, 0.8) * (s[3:5] - s[1:3]))
    aux = [_dashed_aux(b) for _ in range(int(rng.integers(0, 2)))]
    table = [s for p in prims for s in p.strokes] + [_point_dot(d) for d in dots] + aux
    return prims, np.asarray(table, dtype=np.float64).reshape(-1, 10), dots, aux


def render_diagram(seed: int, index: int, size: int = 128, max_primitives: int = 4) -> Diagram:
    """Diagram ``index`` of the data set ``seed`` (independent of every other index)."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), int(index)]))
    prims, table, dots, _ = diagram_strokes(rng, size, max_primitives)
    img, edge = rasterise(table, size, size)
    junctions = _junctions(prims, dots, size)
    letters = _letters(rng, junctions, size)
    img = np.minimum(img, 1.0 - letters)
    image = np.round(np.clip(img, 0.0, 1.0) * 255).astype(np.uint8)
    boxes = np.asarray([p.box for p in prims], dtype=np.float32).reshape(-1, 4)
    return Diagram(image, edge, boxes, np.asarray([p.cls for p in prims], dtype=np.int64), junctions,
                   _questions(rng, prims, size))


def render_set(seed: int, n: int, size: int = 128, max_primitives: int = 4, start: int = 0,
               progress=None) -> dict[str, np.ndarray]:
    """``n`` diagrams (indices ``start..start+n-1``) packed as flat NPZ arrays (see ``pack``)."""
    it = range(start, start + n)
    if progress is not None:
        it = progress(it, desc="render", unit="img")
    return pack([render_diagram(seed, k, size, max_primitives) for k in it])


ARRAYS = ("images", "boundary", "box_image", "box_class", "boxes", "junction_image", "junctions",
          "q_image", "q_type", "q_class", "q_points", "q_values", "q_options", "q_answer")


def pack(diagrams: list[Diagram]) -> dict[str, np.ndarray]:
    """Flat arrays: per-image stacks plus label rows that name their image (``*_image``, 0-based)."""
    qs = [(i, q) for i, d in enumerate(diagrams) for q in d.questions]
    return {
        "images": np.stack([d.image for d in diagrams]),
        "boundary": np.stack([d.boundary for d in diagrams]),
        "box_image": np.concatenate([np.full(len(d.boxes), i, np.int64) for i, d in enumerate(diagrams)]),
        "box_class": np.concatenate([d.classes for d in diagrams]).astype(np.int64),
        "boxes": np.concatenate([d.boxes for d in diagrams]).astype(np.float32).reshape(-1, 4),
        "junction_image": np.concatenate([np.full(len(d.junctions), i, np.int64) for i, d in enumerate(diagrams)]),
        "junctions": np.concatenate([d.junctions for d in diagrams]).astype(np.float32).reshape(-1, 2),
        "q_image": np.asarray([i for i, _ in qs], np.int64),
        "q_type": np.asarray([q["type"] for _, q in qs], np.int64),
        "q_class": np.asarray([q["cls"] for _, q in qs], np.int64),
        "q_points": np.asarray([q["points"] for _, q in qs], np.float32).reshape(-1, N_OPTIONS, 2),
        "q_values": np.asarray([q["values"] for _, q in qs], np.float32).reshape(-1, N_OPTIONS),
        "q_options": np.asarray([q["n_options"] for _, q in qs], np.int64),
        "q_answer": np.asarray([q["answer"] for _, q in qs], np.int64),
    }


def labels_of(data: dict[str, np.ndarray], i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(boxes, classes, junctions) of image ``i`` of a packed set."""
    bm, jm = data["box_image"] == i, data["junction_image"] == i
    return data["boxes"][bm], data["box_class"][bm], data["junctions"][jm]
