"""Every jitted algorithm equals its plain-Python reference step for step on the same random stream."""

import numpy as np
import pytest

from paperkit.core.seeding import spawn_seeds
from paperkit.methods.bandit import bradley_terry_instance, kernels, official16, preference_gap_instance
from paperkit.methods.bandit.reference import run_reference

SINGLE = ["elimfusion", "elim-nofusion", "decofusion", "ucb", "klucb", "rucb"]
SMALL = bradley_terry_instance([0.7, 0.62, 0.55, 0.3], scale=2.0)


def jitted(name, inst, horizon, alpha, seed, ckpts):
    return kernels.trace_run(kernels.ALGORITHMS[name], inst.means, inst.preference, inst.best, horizon, alpha,
                       1.0 / horizon, 0.05, seed, ckpts)


@pytest.mark.parametrize("name", SINGLE)
@pytest.mark.parametrize("inst, horizon, alpha", [(SMALL, 1500, 0.5), (official16(), 900, 0.7),
                                                  (preference_gap_instance(0.09), 700, 0.2)],
                         ids=["bt4", "official16", "prefgap"])
def test_jitted_equals_reference_step_for_step(name, inst, horizon, alpha):
    seed = 12345
    ckpts = np.arange(1, horizon + 1)
    jr, jd, jtrace = jitted(name, inst, horizon, alpha, seed, ckpts)
    rr, rd, rtrace = run_reference(name, inst.means, inst.preference, inst.best, horizon, alpha=alpha, seed=seed,
                                   ckpts=ckpts, trace=True)
    np.testing.assert_array_equal(jtrace, rtrace)
    np.testing.assert_array_equal(jr, rr)
    np.testing.assert_array_equal(jd, rd)
    # the runs do something: both parts of the regret grow and all arms get used
    assert jr[-1] > 0 and jd[-1] > 0


def test_med_nofusion_equals_reference_and_parallel_driver_equals_single_runs():
    inst, horizon = SMALL, 1200
    ckpts = np.arange(1, horizon + 1)
    jr, jd, _ = jitted("med-nofusion", inst, horizon, 0.5, 7, ckpts)
    rr, rd, _ = run_reference("med-nofusion", inst.means, inst.preference, inst.best, horizon, seed=7, ckpts=ckpts)
    np.testing.assert_array_equal(jr, rr)
    np.testing.assert_array_equal(jd, rd)
    # prange driver: run i equals a single run with seed i, whatever the thread scheduling
    seeds = spawn_seeds(3, 5)
    pts = np.array([10, 100, 1200])
    out_r = np.zeros((5, 3))
    out_d = np.zeros((5, 3))
    kernels.simulate_runs(kernels.DECOFUSION, inst.means, inst.preference, inst.best, horizon, 0.5, 1 / horizon, 0.05, seeds,
                    pts, out_r, out_d)
    for i, s in enumerate(seeds):
        r, d, _ = jitted("decofusion", inst, horizon, 0.5, int(s), pts)
        np.testing.assert_array_equal(out_r[i], r)
        np.testing.assert_array_equal(out_d[i], d)


def test_warmup_and_feedback_frequencies():
    """Warm-up duels every ordered pair once; simulated feedback matches μ and ν (binomial z-tests)."""
    inst = SMALL
    k = inst.n_arms
    _, _, trace = jitted("elimfusion", inst, k * (k - 1), 0.5, 1, [k * (k - 1)])
    pairs = {(int(b), int(c)) for _, b, c in trace}
    assert pairs == {(i, j) for i in range(k) for j in range(k) if i != j}
    # RUCB pulls uniformly at random: the reward regret per round averages mean(Δ^R)
    n = 40000
    r, _, tr = jitted("rucb", inst, n, 0.5, 2, [n])
    gap_mean = inst.reward_gaps.mean()
    sd = inst.reward_gaps.std() / np.sqrt(n)
    assert abs(r[0] / n - gap_mean) < 5 * sd
    assert np.bincount(tr[:, 0], minlength=k).min() > n / k * 0.95


def test_rucb_challenger_is_not_the_candidate_on_a_tie():
    """Zoghi et al. (2014), Algorithm 1: d = argmax_j U_{j,c} with random ties, and d ≠ c on a tie."""
    from paperkit.core.rng_kernels import next_below, python_stream
    from paperkit.methods.bandit.reference import rucb_challenger

    # log t = 0 (as at t = 1): U_{j,c} is the empirical rate, so arm 2 ties the candidate's own 1/2
    c = 0
    wins = np.array([[0, 1, 3, 2], [1, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0]], np.int64)  # U: .5, .5, 0, 1/3
    ties = np.empty(4, np.int64)
    for seed in range(20):
        state = np.array([np.uint64(seed)], np.uint64)
        assert kernels.rucb_challenger(wins, c, 0.0, state, ties) == 1
        assert state[0] == np.uint64(seed)  # a single remaining arm draws nothing
    # c alone at the top: it duels itself; a tie without c: uniform over the tied arms, as the reference
    wins_alone = np.array([[0, 3, 3], [1, 0, 0], [1, 0, 0]], np.int64)
    assert kernels.rucb_challenger(wins_alone, 0, 0.0, np.array([np.uint64(1)], np.uint64), ties) == 0
    col = [0.5, 0.9, 0.9, 0.9, 0.2]
    wins_three = np.array([[0, 1, 1, 1, 4], [9, 0, 0, 0, 0], [9, 0, 0, 0, 0], [9, 0, 0, 0, 0], [1, 0, 0, 0, 0]],
                          np.int64)
    ties5 = np.empty(5, np.int64)
    seen = set()
    for seed in range(30):
        state = np.array([np.uint64(seed)], np.uint64)
        d = kernels.rucb_challenger(wins_three, 0, 0.0, state, ties5)
        _, call = python_stream(seed)
        assert d == rucb_challenger(col, 0, lambda n, call=call: int(call(next_below, n)))
        seen.add(int(d))
    assert seen == {1, 2, 3}
    assert rucb_challenger([0.5, 0.5, 0.0, 1 / 3], 0, lambda n: 0) == 1
