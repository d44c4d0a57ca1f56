"""Sensitivity: SALib's Sobol indices of the Ishigami function against the closed form and scipy; MC and Morris."""

import numpy as np

from paperkit.methods.disempower import load_scenario
from paperkit.methods.disempower import sensitivity as sens


def test_ishigami_sobol_indices_match_analytic_and_scipy():
    truth = sens.ishigami_analytic()
    salib = sens.ishigami_salib(4096, seed=0)
    scipy_ = sens.ishigami_scipy(4096, seed=0)
    for key in ("S1", "ST"):
        np.testing.assert_allclose(salib[key], truth[key], atol=0.02)
        np.testing.assert_allclose(scipy_[key], truth[key], atol=0.02)


def test_wilson_interval():
    lo, hi = sens.wilson(50, 100)
    assert lo < 0.5 < hi and abs((lo + hi) / 2 - 0.5) < 1e-12
    assert sens.wilson(0, 20)[0] == 0.0 and sens.wilson(20, 20)[1] == 1.0


def test_mc_and_morris_rank_capability_growth_high():
    sc = load_scenario("baseline_incremental")
    paths = sens.prior_paths(sc, ("c_growth", "alpha", "k_min"))
    X = sens.morris_design(paths, 10, seed=0)
    design = [{p: float(x) for (p, _), x in zip(paths, row, strict=True)} for row in X]
    y = sens.metric_values(sens.run_designs(sc, design, 30, 0.25, 0, 0.0), "hii_final", 30)
    rows = {r["param"]: r for r in sens.morris_indices(paths, X, y, seed=0)}
    assert rows["c_growth"]["mu_star"] > rows["k_min"]["mu_star"]
