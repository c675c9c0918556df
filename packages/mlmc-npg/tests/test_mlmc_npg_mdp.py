"""Tabular MDPs: exact evaluation against Monte Carlo, the kinked problem, the algorithms' traces."""

import math

import numpy as np
import pytest

from paperworks.mlmc_npg import (
    NPGConfig,
    TabularMOMDP,
    kinked_problem,
    optimal_value,
    proportional_fairness,
    random_mdp,
    rollouts_to_accuracy,
    run_npg,
    softmax_policy,
)


@pytest.fixture(scope="module")
def mdp():
    return random_mdp(6, 3, 2, 0.8, rng=7)


def test_exact_returns_match_monte_carlo(mdp):
    pi = softmax_policy(np.random.default_rng(0).standard_normal((6, 3)))
    ev = mdp.evaluate(pi)
    X = mdp.sample_returns(pi, 200_000, rng=1)
    se = X.std(axis=0) / math.sqrt(X.shape[0])
    assert np.all(np.abs(X.mean(axis=0) - ev.J) < 4 * se)
    assert math.isclose(ev.occupancy.sum(), 1.0) and np.all(ev.occupancy > 0)
    # the advantage has mean zero under the policy, and J = E_{s~d}[r_pi] / (1 - gamma)
    assert np.allclose(np.einsum("sa,sam->sm", pi, ev.advantage), 0.0, atol=1e-12)
    r_pi = np.einsum("sa,sam->sm", pi, mdp.R)
    assert np.allclose(ev.occupancy @ r_pi / (1 - mdp.gamma), ev.J)


def test_sampled_advantages_match_exact(mdp):
    pi = np.full((6, 3), 1 / 3)
    adv, used = mdp.sample_advantages(pi, 4000, rng=2)
    assert used == 6 * 3 * 4000
    assert np.abs(adv - mdp.evaluate(pi).advantage).max() < 0.1


def test_kinked_problem_optimum_is_the_kink(mdp):
    f = kinked_problem(mdp, kappa=2.0)
    c = np.array(f.kink)
    f_star = float(f.value(c))
    assert math.isclose(optimal_value(mdp, f, iterations=4000), f_star, abs_tol=1e-6)
    trace = run_npg(mdp, f, NPGConfig("oracle", eta=0.5, iterations=200), rng=0)
    assert abs(trace.values[-1] - f_star) < 1e-6 and np.all(trace.values <= f_star + 1e-9)


def test_algorithms_improve_and_count_rollouts(mdp):
    f = proportional_fairness(2)
    f_star = optimal_value(mdp, f)
    for method, factor in (("plugin_npg", 0.05), ("mlmc_npg", 0.05), ("plugin_pg", 0.9)):  # PG is slower
        trace = run_npg(mdp, f, NPGConfig(method, eta=0.5, batch=128, iterations=30), rng=3)
        assert trace.gaps(f_star)[-1] < factor * trace.gaps(f_star)[0]
        assert np.all(np.diff(trace.rollouts) > 0)
    plug = run_npg(mdp, f, NPGConfig("plugin_npg", batch=128, iterations=30), rng=3)
    assert plug.rollouts[-1] == 30 * 128
    sampled = run_npg(mdp, f, NPGConfig("plugin_npg", batch=16, iterations=5, advantage_rollouts=2), rng=3)
    assert sampled.rollouts[-1] == 5 * (16 + 6 * 3 * 2)


def test_rollouts_to_accuracy_is_the_last_exit():
    from paperworks.mlmc_npg import NPGTrace

    tr = NPGTrace(
        values=np.array([0.0, 0.95, 0.5, 0.96, 0.97]),
        rollouts=np.array([0, 10, 20, 30, 40]),
        weights=np.zeros((4, 2)),
        theta=np.zeros((2, 2)),
    )
    assert rollouts_to_accuracy(tr, 1.0, 0.1) == 30  # gap 0.05 at it 1, but 0.5 at it 2
    assert rollouts_to_accuracy(tr, 1.0, 0.01) == math.inf


def test_bad_inputs(mdp):
    with pytest.raises(ValueError, match="gamma"):
        TabularMOMDP(mdp.P, mdp.R, 1.0)
    with pytest.raises(ValueError, match="gamma"):
        random_mdp(3, 2, 2, gamma=0.0)
    with pytest.raises(ValueError, match="P"):
        TabularMOMDP(mdp.P * 2, mdp.R, 0.9)
    with pytest.raises(ValueError, match="R: expected shape"):
        TabularMOMDP(mdp.P, mdp.R[:, :2], 0.9)
    with pytest.raises(ValueError, match="pi"):
        mdp.evaluate(np.full((6, 2), 0.5))
    with pytest.raises(ValueError, match="reward dimension"):
        run_npg(mdp, proportional_fairness(3), NPGConfig("oracle", iterations=2))
    with pytest.raises(ValueError, match="method"):
        NPGConfig("reinforce")
    with pytest.raises(ValueError, match="L_max"):
        NPGConfig(max_level=0)
