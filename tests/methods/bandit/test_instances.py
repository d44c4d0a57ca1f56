"""Instances: validity of every generator, the official preset, bad input, Bradley–Terry fit."""

import numpy as np
import pytest

from paperkit.core.errors import InputError, UsageError
from paperkit.methods.bandit import (
    bradley_terry_instance,
    bradley_terry_matrix,
    fit_bradley_terry,
    instance_from_mapping,
    make_instance,
    official16,
    preference_gap_instance,
    preset,
    reward_gap_instance,
)
from paperkit.methods.bandit.instances import PREFERENCE_GAPS, REWARD_GAPS, preference_gap_matrix


def assert_valid(inst):
    nu, mu = inst.preference, inst.means
    k = mu.size
    assert nu.shape == (k, k)
    np.testing.assert_allclose(nu + nu.T, np.ones((k, k)), atol=1e-12)
    np.testing.assert_array_equal(np.diag(nu), np.full(k, 0.5))
    assert np.all((nu >= 0) & (nu <= 1)) and np.all((mu >= 0) & (mu <= 1))
    b = inst.best
    assert all(nu[b, j] > 0.5 for j in range(k) if j != b)
    assert mu[b] == mu.max()


def all_generated():
    yield official16()
    for g in REWARD_GAPS:
        yield reward_gap_instance(g)
    for g in PREFERENCE_GAPS:
        yield preference_gap_instance(g)
    yield bradley_terry_instance([0.9, 0.7, 0.5, 0.2], scale=3.0)
    yield preset("bradley-terry:4")
    rng = np.random.default_rng(1)
    u = rng.normal(size=6)
    wins = rng.poisson(20 * bradley_terry_matrix(u))
    fitted = fit_bradley_terry(wins, prior=0.5)
    means = np.sort(rng.uniform(size=6))[::-1][np.argsort(np.argsort(-fitted))]  # best utility, best mean
    yield make_instance(means, bradley_terry_matrix(fitted), name="fitted-bt")


@pytest.mark.parametrize("inst", list(all_generated()), ids=lambda i: i.name)
def test_every_generator_gives_a_valid_instance(inst):
    assert_valid(inst)


def test_official_preset_reproduces_the_listed_means():
    inst = preset("official16")
    expected = [0.86, 0.80, 0.75, 0.70] + [round(0.65 - 0.05 * i, 2) for i in range(12)]
    np.testing.assert_allclose(inst.means, expected, atol=1e-12)
    assert inst.best == 0 and inst.n_arms == 16
    assert inst.preference[0, 1] == pytest.approx(0.54) and inst.preference[0, 15] == pytest.approx(0.98)


def test_gap_families_follow_the_paper():
    r = reward_gap_instance(0.11)
    assert r.means[0] == 0.9 and r.means[1] == pytest.approx(0.79) and r.means[-1] == 0.0  # clipped, not negative
    p = preference_gap_matrix(0.05, 4)
    assert p[0, 3] == pytest.approx(0.65) and p[3, 0] == pytest.approx(0.35)  # 1 − ν, not 0.5 − ν
    assert preference_gap_matrix(0.11, 16)[0, 15] == 1.0


def test_bradley_terry_fit_recovers_utilities():
    u = np.array([1.0, 0.4, 0.0, -0.6, -0.8])
    nu = bradley_terry_matrix(u)
    n = 20000
    wins = nu * n  # expected counts: the MLE is then exactly u (up to the centring)
    np.fill_diagonal(wins, 0)
    np.testing.assert_allclose(fit_bradley_terry(wins), u - u.mean(), atol=1e-8)
    # two arms: the MLE ratio is the win ratio
    u2 = fit_bradley_terry([[0, 30], [10, 0]])
    assert u2[0] - u2[1] == pytest.approx(np.log(3.0), abs=1e-9)


def test_bradley_terry_fit_needs_connectivity():
    with pytest.raises(InputError, match="prior > 0"):
        fit_bradley_terry([[0, 5], [0, 0]])
    assert np.isfinite(fit_bradley_terry([[0, 5], [0, 0]], prior=0.5)).all()


def test_bradley_terry_fit_rejects_bad_priors_and_warns_at_max_iter(caplog):
    for prior in (-0.5, float("nan"), "abc"):
        with pytest.raises(InputError, match="prior"):
            fit_bradley_terry([[0, 5], [1, 0]], prior=prior)
    with pytest.raises(InputError, match="rows of equal length"):
        fit_bradley_terry([[0, 5], [1, 0, 2]])
    wins = [[0, 30, 40], [10, 0, 25], [5, 15, 0]]
    with caplog.at_level("WARNING", logger="paperkit.methods.bandit.instances"):
        fit_bradley_terry(wins, max_iter=2)
    assert "max_iter = 2" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="paperkit.methods.bandit.instances"):
        fit_bradley_terry(wins)
    assert caplog.text == ""


OK_NU = [[0.5, 0.6, 0.7], [0.4, 0.5, 0.6], [0.3, 0.4, 0.5]]


@pytest.mark.parametrize("means, nu, match", [
    ([0.9, 0.5, 0.4], [[0.5, 0.6], [0.4, 0.5]], "there are 3 means"),
    ([0.9, 0.5, 0.4], [[0.5, 0.6, 0.7], [0.4, 0.5, 0.6]], "square"),
    ([0.9, 0.5, 0.4], [[0.5, 0.6, 0.7], [0.3, 0.5, 0.6], [0.3, 0.4, 0.5]], r"preference\[0,1\] \+ preference\[1,0\]"),
    ([0.9, 0.5, 0.4], [[0.5, 0.6, 0.3], [0.4, 0.5, 0.6], [0.7, 0.4, 0.5]], "Condorcet"),
    ([0.9, 1.5, 0.4], OK_NU, r"means\[1\] = 1.5"),
    ([0.9, 0.5, 0.4], [[0.5, 0.6, 0.7], [0.4, 0.4, 0.6], [0.3, 0.4, 0.5]], "diagonal"),
    ([0.9, 0.5, 0.4], [[0.5, 1.2, 0.7], [-0.2, 0.5, 0.6], [0.3, 0.4, 0.5]], r"preference\[0,1\] = 1.2"),
    ([0.5, 0.9, 0.4], OK_NU, "Condorcet winner, arm 0, has mean"),
])
def test_bad_instances_name_the_entry(means, nu, match):
    with pytest.raises(InputError, match=match):
        make_instance(means, nu)


def test_instance_mapping_variants(tmp_path):
    import gzip

    (tmp_path / "m.csv").write_text("0.5,0.6,0.7\n0.4,0.5,0.6\n0.3,0.4,0.5\n")
    a = instance_from_mapping({"means": [0.9, 0.5, 0.4], "preference": "m.csv"}, base=tmp_path)
    b = instance_from_mapping({"means": [0.9, 0.5, 0.4], "preference": OK_NU})
    np.testing.assert_array_equal(a.preference, b.preference)
    assert a.files == (str(tmp_path / "m.csv"),) and b.files == ()
    # gzip, a header of labels, tabs by suffix
    with gzip.open(tmp_path / "m.csv.gz", "wt") as f:
        f.write("a,b,c\n0.5,0.6,0.7\n0.4,0.5,0.6\n0.3,0.4,0.5\n")
    (tmp_path / "m.tsv").write_text("0.5\t0.6\t0.7\n0.4\t0.5\t0.6\n0.3\t0.4\t0.5\n")
    for name in ("m.csv.gz", "m.tsv"):
        g = instance_from_mapping({"means": [0.9, 0.5, 0.4], "preference": name}, base=tmp_path)
        np.testing.assert_array_equal(g.preference, b.preference)
    (tmp_path / "ragged.csv").write_text("0.5,0.6,0.7\n0.4,0.5\n")
    with pytest.raises(InputError, match="line 2 has 2 fields"):
        instance_from_mapping({"means": [0.9, 0.5, 0.4], "preference": "ragged.csv"}, base=tmp_path)
    c = instance_from_mapping({"means": [0.9, 0.5, 0.4], "preference": "bradley-terry", "scale": 2})
    np.testing.assert_allclose(c.preference[0, 1], 1 / (1 + np.exp(-2 * 0.4)))
    d = instance_from_mapping({"means": [0.9, 0.5, 0.4], "wins": [[0, 30, 40], [10, 0, 25], [5, 15, 0]]})
    assert d.best == 0
    with pytest.raises(InputError, match="unknown key"):
        instance_from_mapping({"means": [0.9, 0.5], "preference": OK_NU, "colour": 1})
    with pytest.raises(InputError, match="exactly one"):
        instance_from_mapping({"means": [0.9, 0.5, 0.4]})
    with pytest.raises(UsageError, match="unknown preset"):
        preset("official17")
