"""disempower-sim agent-based mode: its mean-field limit is the ODE, it is seeded, its agent rules have the
expectations the ODE assumes."""

import numpy as np
import pytest

from paperkit.core.errors import UsageError
from paperkit.methods.disempower import compile_model, load_scenario, simulate
from paperkit.methods.disempower.abm import Agents, Population, imitation_probabilities, simulate_abm
from paperkit.methods.disempower.dynamics import CULTURE, STATE, _step_share

POP = Population(households=20_000, firms=5_000, parties=5)


def test_abm_with_20000_households_follows_the_ode_hii_within_003():
    m = compile_model(load_scenario("baseline_incremental"))
    ode = simulate(m, 50, 0.25, extend=0)
    abm = simulate_abm(m, 50, 0.25, population=POP, seed=0, extend=0)
    gap = np.abs(abm.traj["HII"][0] - ode.traj["HII"][0]).max()
    assert gap < 0.03
    # and it is a real agent run: the shares are the firms' realised fractions, not the ODE's
    assert 0 < np.abs(abm.traj["a"][0] - ode.traj["a"][0]).max() < 0.1
    assert abm.summary["irreversible"][0] == ode.summary["irreversible"][0] == 1


def test_same_seed_same_run_other_seed_other_run():
    m = compile_model(load_scenario("late_mitigation"))
    small = Population(households=2_000, firms=500, parties=3)
    a, b, c = (simulate_abm(m, 20, 0.25, population=small, seed=s, extend=2) for s in (4, 4, 5))
    for k in a.traj:
        np.testing.assert_array_equal(a.traj[k], b.traj[k])
    assert not np.array_equal(a.traj["HII"], c.traj["HII"])


def test_imitation_probabilities_give_the_ode_step_in_expectation():
    rng = np.random.default_rng(0)
    a = rng.uniform(0.01, 0.99, 1000)
    a_next = np.clip(a + rng.normal(0, 0.05, 1000) * a * (1 - a), 0, 1)
    up, down = imitation_probabilities(a, a_next)
    np.testing.assert_allclose(a + (1 - a) * a * up - a * (1 - a) * down, a_next, atol=1e-12)
    assert ((up == 0) | (down == 0)).all()


def test_one_adoption_step_of_many_firms_matches_the_euler_step():
    m = compile_model(load_scenario("baseline_incremental"))
    pop = Population(households=10, firms=400_000, parties=1)
    agents = Agents(m, pop, np.random.default_rng(1))
    a = agents.shares()
    da = a * (1 - a) * np.array([[0.8, -0.5, 0.3]])  # a relative speed lambda * advantage as in the scenarios
    expected = _step_share(a, da, 0.25)[0]
    agents.adopt(a, da, 0.25)
    se = np.sqrt(a[0] * (1 - a[0]) / pop.firms)
    assert (np.abs(agents.shares()[0] - expected) < 5 * se + 1e-4).all()


def test_votes_and_cultural_choices_have_the_ode_leverage_in_expectation():
    m = compile_model(load_scenario("baseline_incremental"))
    pop = Population(households=400_000, firms=10, parties=7)
    agents = Agents(m, pop, np.random.default_rng(2))
    a = np.array([[0.3, 0.6, 0.5]])
    lev = agents.vote_and_choose(a)
    P = m.P
    assert abs(lev[0, STATE] - 0.5 ** P["nu_state"][0]) < 0.005
    assert abs(lev[0, CULTURE] - 0.4 ** P["nu_culture"][0]) < 0.005


@pytest.mark.parametrize("pop", [Population(0, 10, 1), Population(10, 0, 1), Population(10, 10, 0),
                                 Population(3, 10, 5)])
def test_bad_population_sizes_are_usage_errors(pop):
    with pytest.raises(UsageError):
        simulate_abm(compile_model(load_scenario("baseline_incremental")), 1, 0.25, population=pop)
