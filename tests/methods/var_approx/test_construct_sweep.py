"""The constructive check (quantiser exact, ids distinct) and the sweep's grid, shards and slopes."""

import numpy as np
import pytest

from paperkit.core.errors import UsageError
from paperkit.methods.var_approx import construct, sweep
from paperkit.methods.var_approx.train import Problem


def test_quantizer_ffn_is_exact_off_the_bands():
    x = np.random.default_rng(0).uniform(0, 1, 5000)
    delta, eta = 0.25, 0.01
    off_band = ((x / delta) % 1) < 1 - eta / delta
    q = construct.quantize_ffn(x, delta, eta)
    assert np.abs(q[off_band] - np.floor(x[off_band] / delta) * delta).max() < 1e-12


def test_constructive_ids_are_distinct_for_2x2_d1_quarter_grid():
    r = construct.constructive_check((2, 2), 1, 0.25, (2, 4, 8))
    assert r["contexts"] == 256 and r["quantizer_exact"]
    assert r["distinct_before"] and r["distinct_after"] and r["tokens_after"] == 84
    # brute force: every (context, token) pair has its own id
    ids, _ = construct.contextual_ids(construct.grid_contexts((2, 2), 1, 0.25, 1000).reshape(256, 4, 1), 0.25, 7.0)
    assert np.unique(ids).size == ids.size


def test_grid_too_large_is_refused():
    with pytest.raises(UsageError, match="contexts"):
        construct.grid_contexts((4, 4), 2, 0.1, 100_000)


def test_shards_cover_the_grid_once():
    cells = sweep.grid(Problem(), ["fourier"], [1.0, 4.0], [8, 16, 32], [16], [(2, 4, 8)])
    assert len(cells) == 6
    parts = [sweep.shard_cells(6, (k, 4)) for k in range(1, 5)]
    assert sorted(i for p in parts for i in p) == list(range(6))


def test_slope_recovers_a_power_law_and_merge_orders_rows():
    rows = [{"cell": i, "target": "fourier", "lipschitz": 1.0, "embed": 16, "scales": "2-4-8", "width": w, "seed": s,
             "test_rmse": 3.0 * w ** -0.5 * (1 + 0.01 * s)} for i, w in enumerate((8, 16, 32, 64)) for s in range(3)]
    (sl,) = sweep.slopes(rows, resamples=200)
    assert abs(sl["slope"] + 0.5) < 1e-3 and sl["slope_lo"] <= sl["slope"] <= sl["slope_hi"]
    assert sl["spearman"] == -1.0
    merged = sweep.merge_rows([rows[6:], rows[:6]])
    assert merged == rows
    with pytest.raises(Exception, match="overlap"):
        sweep.merge_rows([rows, rows[:1]])
