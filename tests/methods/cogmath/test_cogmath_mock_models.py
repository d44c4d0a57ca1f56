"""Mock models with known behaviour give the known scores."""

import pytest

from paperkit.methods.cogmath import backends, synthetic
from paperkit.methods.cogmath.cache import ResponseCache
from paperkit.methods.cogmath.prompts import load_prompts
from paperkit.methods.cogmath.run import evaluate


@pytest.fixture(scope="module")
def rows():
    return synthetic.generate(60, seed=11)[1]


def run(rows, failures=None, seed=0):
    prompts = load_prompts()
    memory = [(r["inquiry"], r["reference"]) for r in rows if r["dimension"] == 0]
    inner = backends.RuleBackend(template=prompts.solve, failures=backends.parse_failures(failures), memory=memory, seed=seed)
    return evaluate(rows, backends.CachedBackend(inner, ResponseCache(None)), prompts).summary


def rpr(s):
    return {int(k): v["rpr"] for k, v in s["dimensions"].items()}


def test_perfect_solver_masters_everything(rows):
    s = run(rows)
    assert s["accuracy"] == s["pass_rate"] == 1.0 and s["overestimation"] == 0.0
    assert all(v == 1.0 for v in rpr(s).values())


def test_memoriser_is_accurate_but_masters_nothing(rows):
    s = run(rows, "memorise")
    assert s["accuracy"] == 1.0 and s["pass_rate"] == 0.0 and s["overestimation"] == 1.0
    r = rpr(s)
    for d in (2, 3, 6, 9):
        assert r[d] == 0.0, d
    assert r[4] == 1.0  # an irrelevant sentence does not fool a memoriser


@pytest.mark.parametrize("mode, dims", [("literal", {7}), ("distracted", {4}), ("no_refusal", {2, 3}),
                                        ("no_backward", {9}), ("no_intermediate", {8})])
def test_each_failure_mode_fails_only_its_dimensions(rows, mode, dims):
    s = run(rows, mode)
    assert s["accuracy"] == 1.0 and s["pass_rate"] < 1.0
    r = rpr(s)
    for d in range(1, 10):
        if d in dims:
            assert r[d] < 0.5, (mode, d, r[d])
        else:
            assert r[d] == 1.0, (mode, d, r[d])


def test_off_by_one_fails_the_originals(rows):
    s = run(rows, "off_by_one")
    assert s["accuracy"] == 0.0 and s["pass_rate"] == 0.0


def test_partial_failure_rate_is_seeded_and_roughly_the_rate(rows):
    a, b = run(rows, "distracted:0.5", seed=1), run(rows, "distracted:0.5", seed=1)
    assert a == b
    assert 0.25 < rpr(a)[4] < 0.75
