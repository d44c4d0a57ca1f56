"""The paper's claims on its own instance (the ranking DecoFusion < ElimFusion < ElimNoFusion, DecoFusion
within a small factor of the lower bound and growing like log T, constant regret at alpha 0 and 1),
and determinism.

official16, T = 5×10⁴, 20 runs, α = 0.5 (seconds with numba). The thresholds are set from the paper's
figures; the Monte-Carlo standard errors at this size are a few percent of the gaps between the algorithms.
"""

import numpy as np
import pytest

from paperkit.methods.bandit import lower_bound, official16, simulate

T = 50_000
RUNS = 20
PTS = [5_000, 25_000, 50_000]


@pytest.fixture(scope="module")
def results():
    inst = official16()
    return {a: simulate(inst, a, T, RUNS, alpha=0.5, seed=2025, checkpoints=PTS)
            for a in ("decofusion", "elimfusion", "elim-nofusion", "med-nofusion")}


def final(res, alpha=0.5):
    return res.regret(alpha)[:, -1].mean()


def test_ordering_on_the_official_instance(results):
    deco, elim, noelim, med = (final(results[a]) for a in ("decofusion", "elimfusion", "elim-nofusion",
                                                           "med-nofusion"))
    assert deco < elim < noelim
    assert deco <= med
    # fusion pays: DecoFusion sits within a small factor of the asymptotic lower bound C(α)·log T
    c = lower_bound(official16(), 0.5).at(T)
    assert c < deco < 4 * c


def test_logarithmic_growth_of_decofusion(results):
    reg = results["decofusion"].regret(0.5).mean(axis=0)
    assert reg[2] / reg[0] < 2.0  # linear growth would give 10


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_constant_regret_at_extreme_alpha(alpha):
    res = simulate(official16(), "decofusion", T, RUNS, alpha=alpha, seed=7, checkpoints=PTS)
    reg = res.regret(alpha).mean(axis=0)
    assert reg[2] - reg[1] < 0.05 * reg[2]
    assert reg[2] > 0


def test_same_seed_same_numbers_and_threads_do_not_matter():
    import numba

    inst = official16()
    a = simulate(inst, "decofusion", 3000, 6, seed=11, checkpoints=[100, 3000])
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        b = simulate(inst, "decofusion", 3000, 6, seed=11, checkpoints=[100, 3000], batch=4)
    finally:
        numba.set_num_threads(old)
    np.testing.assert_array_equal(a.reward, b.reward)
    np.testing.assert_array_equal(a.duel, b.duel)
    c = simulate(inst, "decofusion", 3000, 6, seed=12, checkpoints=[100, 3000])
    assert not np.array_equal(a.reward, c.reward)


def test_log_checkpoints_and_argument_checks():
    from paperkit.core.errors import UsageError
    from paperkit.methods.bandit import log_checkpoints, parse_algorithms

    t = log_checkpoints(200_000, 100)
    assert t[0] == 1 and t[-1] == 200_000 and np.all(np.diff(t) > 0) and 60 <= t.size <= 101
    ratios = t[20:] / t[19:-1]
    assert ratios.max() < 1.2  # log-spaced once past the small integers
    with pytest.raises(UsageError, match="thompson"):
        parse_algorithms("decofusion,thompson")
    with pytest.raises(UsageError, match="alpha"):
        simulate(official16(), "decofusion", 100, 1, alpha=-0.1)
    with pytest.raises(UsageError, match="runs"):
        simulate(official16(), "decofusion", 100, 0)


def test_check_settings_resolves_delta_and_rejects_non_finite():
    from paperkit.core.errors import UsageError
    from paperkit.methods.bandit import check_settings

    assert check_settings(1, 1, 0.5) == 1.0 and check_settings(400, 1, 0.5) == 1 / 400
    for kwargs, word in (({"f_coef": float("nan")}, "f_coef"), ({"f_coef": float("inf")}, "f_coef"),
                         ({"f_coef": -0.1}, "f_coef"), ({"delta": float("nan")}, "delta"),
                         ({"delta": 0.0}, "delta"), ({"delta": 1.5}, "delta")):
        with pytest.raises(UsageError, match=word):
            check_settings(100, 1, 0.5, **kwargs)
    with pytest.raises(UsageError, match="alpha"):
        check_settings(100, 1, float("nan"))


def test_regret_figure_is_log_x_and_linear_y_by_default():
    from paperkit.methods.bandit import SimResult
    from paperkit.methods.bandit.plots import regret_figure

    t = np.array([1, 10, 100, 1000])
    res = SimResult("decofusion", t, np.log(t)[None, :] * [[1.0], [2.0]], np.log(t)[None, :] * [[1.0], [3.0]])
    for yscale in ("linear", "log"):
        ax = regret_figure([res], 0.5, lower_bound=1.0, yscale=yscale).axes[0]
        assert ax.get_xscale() == "log" and ax.get_yscale() == yscale
