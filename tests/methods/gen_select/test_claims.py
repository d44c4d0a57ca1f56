"""The paper's reproducible claims on the offline instances: PAK-UCB and RFF-UCB beat the best single
model where the best model depends on the prompt type, nobody beats it on the null instance, and a
model added mid-stream takes over the prompt type it is best on."""

import time

import numpy as np
import pytest

from paperkit.methods.gen_select.instances import make_null, make_switching, switching_means
from paperkit.methods.gen_select.kernels import Kernel
from paperkit.methods.gen_select.simulate import Hyper, curves, simulate, type_shares

SWITCH_HYPER = Hyper(Kernel("rbf", bandwidth=2.0), alpha=1.0, eta=1.0)


def _switching_check(runs):
    inst = make_switching(np.random.default_rng(0))
    res, secs = {}, {}
    for name in ("pak-ucb", "rff-ucb", "greedy", "oracle"):
        otb, opr, sec = [], [], []
        for r in range(runs):
            tr = simulate(inst, name, 2000, hyper=SWITCH_HYPER, seed=0, run=r)
            otb.append(curves(inst, tr)["otb"][-1])
            opr.append(tr.optimal[-500:].mean())
            sec.append(tr.seconds)
        res[name] = (np.mean(otb), np.mean(opr))
        secs[name] = np.median(sec)
    for name in ("pak-ucb", "rff-ucb"):
        assert res[name][0] > 0.03 and res[name][1] > 0.7, (name, res[name])
    for name in ("greedy", "oracle"):
        assert res[name][0] <= 0.01, (name, res[name])
    return secs


def test_switching_instance_pak_and_rff_outscore_the_best_model():
    """T = 2,000, G = 3, 4 types, RBF sigma = 2, eta = 1 (2 runs here; 5 in the slow test)."""
    _switching_check(2)


@pytest.mark.slow
def test_switching_instance_five_runs_and_rff_is_faster():
    best = None
    for _ in range(3):  # timing on a shared machine: the best of three measurements
        secs = _switching_check(5)
        ratio = secs["pak-ucb"] / secs["rff-ucb"]
        best = ratio if best is None else max(best, ratio)
        if best >= 3:
            break
    assert best >= 3, f"RFF-UCB only {best:.1f}x faster than PAK-UCB"


def test_switching_means_make_model_zero_the_best_single_model_but_not_everywhere():
    m = switching_means(4, 3)
    assert np.argmax(m.mean(axis=1)) == 0
    assert list(np.argmax(m, axis=0)) == [0, 1, 2, 0]


def test_null_instance_no_learner_beats_the_best_model():
    inst = make_null(np.random.default_rng(1), models=5, prompts=1000, dim=32)
    hyper = Hyper(Kernel("rbf", bandwidth=1.0), alpha=1.0, eta=None)
    for name in ("pak-ucb", "rff-ucb", "lin-ucb", "hybrid-ucb", "naive-krr", "greedy", "random", "oracle"):
        for r in range(1):
            tr = simulate(inst, name, 1000, hyper=hyper, seed=0, run=r)
            otb = curves(inst, tr)["otb"][-1]
            assert abs(otb) < 0.02, (name, r, otb)
    tr = simulate(inst, "kernel-ucb", 400, hyper=hyper, seed=0, run=0)
    assert abs(curves(inst, tr)["otb"][-1]) < 0.02


@pytest.mark.parametrize("name", ["pak-ucb", "rff-ucb"])
def test_a_model_added_at_round_1000_wins_its_prompt_type(name):
    from dataclasses import replace

    inst = make_switching(np.random.default_rng(0), add_model=True)
    inst = replace(inst, arm_start=np.array([0, 0, 0, 1000]))
    tr = simulate(inst, name, 2000, hyper=SWITCH_HYPER, seed=0, run=0)
    assert not np.any(tr.arm[:1000] == 3)  # not available before it joins
    shares = type_shares(inst, tr, 500)
    assert shares[3, 3] > 0.5, shares[3]


def test_same_seed_same_trace_and_streams_are_shared_across_learners():
    inst = make_switching(np.random.default_rng(0))
    a = simulate(inst, "pak-ucb", 300, hyper=SWITCH_HYPER, seed=4, run=1)
    b = simulate(inst, "pak-ucb", 300, hyper=SWITCH_HYPER, seed=4, run=1)
    c = simulate(inst, "greedy", 300, hyper=SWITCH_HYPER, seed=4, run=1)
    assert np.array_equal(a.arm, b.arm) and np.array_equal(a.score, b.score)
    assert np.array_equal(a.prompt, c.prompt)


def test_schur_and_resolve_pick_the_same_models():
    inst = make_switching(np.random.default_rng(0), prompts=200)
    t0 = time.perf_counter()
    a = simulate(inst, "pak-ucb", 150, hyper=SWITCH_HYPER, seed=0)
    b = simulate(inst, "pak-ucb", 150, hyper=Hyper(Kernel("rbf", bandwidth=2.0), eta=1.0, update="resolve"), seed=0)
    assert np.array_equal(a.arm, b.arm)
    assert time.perf_counter() - t0 < 30
