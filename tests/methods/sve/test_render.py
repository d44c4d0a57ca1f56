"""The renderer: numba kernel vs numpy reference, determinism, labels inside the image, analytic junctions."""

import math

import numpy as np
import pytest
from torch.utils.data import IterableDataset

from paperkit.methods.sve import render as R
from paperkit.methods.sve.kernels import ARC, SEGMENT, rasterise, rasterise_reference


def _random_strokes(rng, n, size):
    rows = []
    for _ in range(n):
        w, g, dash = rng.uniform(0.8, 3), rng.uniform(0.3, 1), rng.choice([0.0, rng.uniform(3, 8)])
        if rng.random() < 0.5:
            rows.append([SEGMENT, *rng.uniform(-5, size + 5, 4), 0.0, w, g, dash, 0.0])
        else:
            t0 = rng.uniform(-7, 7)
            rows.append([ARC, *rng.uniform(0, size, 2), rng.uniform(1, size / 2), t0, t0 + rng.uniform(0.1, 2 * math.pi),
                         w, g, dash, 0.0])
    return np.asarray(rows)


@pytest.mark.parametrize("seed", range(4))
def test_numba_rasteriser_equals_numpy_reference(seed):
    rng = np.random.default_rng(seed)
    strokes = _random_strokes(rng, 12, 48)
    img, edge = rasterise(strokes, 48, 56)
    ref_img, ref_edge = rasterise_reference(strokes, 48, 56)
    assert np.abs(img - ref_img).max() <= 1e-6
    assert (edge != ref_edge).sum() == 0


def test_antialiased_segment_coverage_is_exact():
    """A horizontal 2-px segment: coverage clip(w/2 + 0.5 - d, 0, 1) at rows 0..4 from its centre line."""
    img, edge = rasterise(np.asarray([[SEGMENT, 2, 10, 30, 10, 0, 2.0, 1.0, 0, 0]], float), 21, 33)
    col = 1.0 - img[:, 16]
    assert np.allclose(col[10:15], [1.0, 0.5, 0.0, 0.0, 0.0])
    assert edge[:, 16].sum() == 5                       # rows 8..12: d <= w/2 + 1


def test_render_is_deterministic_and_index_local():
    a = R.render_set(3, 6, size=64)
    b = R.render_set(3, 6, size=64)
    for k in R.ARRAYS:
        assert np.array_equal(a[k], b[k]), k
    tail = R.render_set(3, 2, size=64, start=4)       # the same diagrams whatever the split
    assert np.array_equal(tail["images"], a["images"][4:])
    assert not np.array_equal(R.render_set(4, 6, size=64)["images"], a["images"])


def test_labels_lie_inside_the_image():
    d = R.render_set(0, 40, size=64)
    assert (d["boxes"] >= 0).all() and (d["boxes"] <= 63).all()
    assert (d["boxes"][:, 2] > d["boxes"][:, 0]).all() and (d["boxes"][:, 3] > d["boxes"][:, 1]).all()
    assert (d["junctions"] >= 0).all() and (d["junctions"] <= 63).all()
    pts = d["q_points"][d["q_points"][:, :, 0] >= 0]
    assert (pts >= 0).all() and (pts <= 63).all()
    assert ((d["q_answer"] >= 0) & (d["q_answer"] < d["q_options"])).all()
    assert set(np.unique(d["box_class"])) <= set(range(len(R.CLASSES)))


def _brute_crossing(s1, s2):
    """Where two segments cross, by bisection on the sign of a side test (independent of the solver)."""
    p, q = s1[1:3], s1[3:5]
    def side(t):
        d, v = s2[3:5] - s2[1:3], p + t * (q - p) - s2[1:3]
        return d[0] * v[1] - d[1] * v[0]
    lo, hi = 0.0, 1.0
    if np.sign(side(lo)) == np.sign(side(hi)):
        return None
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if np.sign(side(mid)) == np.sign(side(lo)) else (lo, mid)
    x = p + lo * (q - p)
    u = np.dot(x - s2[1:3], s2[3:5] - s2[1:3]) / np.dot(s2[3:5] - s2[1:3], s2[3:5] - s2[1:3])
    return x if 0 <= u <= 1 else None


def test_junctions_are_within_half_a_pixel_of_every_analytic_crossing():
    checked = 0
    for k in range(30):
        rng = np.random.default_rng(np.random.SeedSequence([5, k]))
        prims, _, _, _ = R.diagram_strokes(rng, 128, 4)
        junctions = R._junctions(prims, [], 128)
        segs = [(i, np.asarray(s)) for i, p in enumerate(prims) for s in p.strokes if s[0] == SEGMENT]
        for a in range(len(segs)):
            for b in range(a + 1, len(segs)):
                if segs[a][0] == segs[b][0]:
                    continue
                x = _brute_crossing(segs[a][1], segs[b][1])
                if x is not None and 0 <= x[0] <= 127 and 0 <= x[1] <= 127:
                    assert np.hypot(*(junctions - x).T).min() <= 0.5
                    checked += 1
    assert checked >= 10


def test_circle_line_intersection_is_on_both():
    circle = np.asarray(R.arc(np.array([20.0, 20.0]), 10.0, 0.0, 2 * math.pi, 1, 1))
    line = np.asarray(R.segment(np.array([0.0, 25.0]), np.array([40.0, 25.0]), 1, 1))
    pts = R.intersections(line, circle)
    assert len(pts) == 2
    for p in pts:
        assert abs(np.hypot(*(p - 20.0)) - 10) < 1e-9 and abs(p[1] - 25) < 1e-9


def test_stream_workers_split_the_indices_and_render_the_same_diagrams(monkeypatch):
    """Each loader worker takes every W-th index; the union is the single-process set, diagram by diagram."""
    from types import SimpleNamespace

    from paperkit.methods.sve import train

    stream = train.DiagramStream(seed=2, n=5, size=64, max_primitives=3)
    whole = {k: d for k, d in stream}
    parts = {}
    for w in range(2):
        monkeypatch.setattr(train, "get_worker_info", lambda w=w: SimpleNamespace(id=w, num_workers=2))
        got = dict(iter(stream))
        assert sorted(got) == list(range(w, 5, 2))
        parts.update(got)
    assert sorted(parts) == sorted(whole)
    for k in whole:
        assert np.array_equal(parts[k].image, whole[k].image) and np.array_equal(parts[k].junctions, whole[k].junctions)


class _ThreadReport(IterableDataset):
    """Yields, from each loader worker, the thread counts numba and torch run with there."""

    def __iter__(self):
        import numba
        import torch

        yield numba.get_num_threads(), torch.get_num_threads()


def test_loader_workers_run_one_thread_each():
    """Spawned loader workers would inherit one thread per core from the parent (sve-encode sets that): W of
    them oversubscribe the CPU. stream_loader gives each worker one numba and one torch thread."""
    from paperkit.core import resources
    from paperkit.methods.sve import train

    resources.set_threads(2)
    try:
        reports = list(train.stream_loader(_ThreadReport(), workers=2))
    finally:
        resources.set_threads(1)
    assert reports == [[1, 1], [1, 1]]      # (the default collate turns tuples into lists)
