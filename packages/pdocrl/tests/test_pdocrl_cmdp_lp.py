"""CMDP algebra against power iteration and Monte Carlo; the LP against brute force and strong duality."""

from __future__ import annotations

import numpy as np
import pytest

from paperworks.pdocrl import (
    InfeasibleBudgetError,
    TabularCMDP,
    garnet_cmdp,
    gridworld_cmdp,
    min_costs,
    slater_bound,
    solve_lp,
)


def _two_state(budget=0.3, gamma=0.8):
    P = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.1, 0.9]]])
    r = np.array([[0.1, 1.0], [0.3, 0.8]])
    c = np.array([[[0.0, 1.0], [0.2, 0.7]]])
    return TabularCMDP(P, r, c, np.array([budget]), np.array([0.6, 0.4]), gamma)


def test_occupancy_matches_power_iteration():
    m = garnet_cmdp(12, 3, rng=0)
    pi = np.random.default_rng(1).dirichlet(np.ones(3), size=12)
    P_pi = np.einsum("sa,sat->st", pi, m.transitions)
    nu, x = np.zeros(12), m.initial.copy()
    for t in range(400):  # sum_t gamma^t Pr(s_t = s), truncated where gamma^t < 1e-18
        nu += (1 - m.gamma) * m.gamma**t * x
        x = x @ P_pi
    np.testing.assert_allclose(m.state_occupancy(pi), nu, atol=1e-12)
    assert m.occupancy(pi).sum() == pytest.approx(1.0)


def test_returns_match_monte_carlo_rollouts():
    m = _two_state()
    pi = np.array([[0.3, 0.7], [0.5, 0.5]])
    rng = np.random.default_rng(0)
    n, horizon = 4000, 60
    s = rng.choice(2, size=n, p=m.initial)
    total = np.zeros(n)
    for t in range(horizon):
        a = (rng.uniform(size=n) < pi[s, 1]).astype(int)
        total += m.gamma**t * m.reward[s, a]
        s = (rng.uniform(size=n) < m.transitions[s, a, 1]).astype(int)
    J, _ = m.returns(pi)
    est = (1 - m.gamma) * total
    assert abs(est.mean() - J) < 4 * est.std() / np.sqrt(n) + 1e-5


def test_q_function_satisfies_bellman_equation():
    m = garnet_cmdp(8, 3, rng=2)
    pi = np.full((8, 3), 1 / 3)
    q = m.q_function(pi)
    np.testing.assert_allclose(q, m.reward + m.gamma * m.transitions @ (pi * q).sum(1), atol=1e-10)


def test_lp_matches_brute_force_on_two_states():
    m = _two_state()
    sol = solve_lp(m)
    grid = np.linspace(0, 1, 401)
    p0, p1 = (g.ravel() for g in np.meshgrid(grid, grid))  # every stochastic policy on a 401^2 grid
    pi = np.stack([np.stack([1 - p0, p0], -1), np.stack([1 - p1, p1], -1)], axis=1)  # (G, 2, 2)
    P_pi = np.einsum("gsa,sat->gst", pi, m.transitions)
    nu = (1 - m.gamma) * np.linalg.solve(np.eye(2) - m.gamma * np.swapaxes(P_pi, 1, 2), m.initial)
    d = nu[:, :, None] * pi
    J, Jc = (d * m.reward).sum((1, 2)), (d * m.costs[0]).sum((1, 2))
    best = J[Jc <= m.budgets[0]].max()
    assert best <= sol.reward + 1e-9  # nothing feasible beats the LP
    assert sol.reward - best < 5e-3  # and the grid gets close to it
    J, Jc = m.returns(sol.policy)
    assert J == pytest.approx(sol.reward, abs=1e-8) and Jc[0] <= m.budgets[0] + 1e-8


def test_lp_strong_duality():
    m = garnet_cmdp(15, 3, rng=3)
    sol = solve_lp(m)
    assert sol.duals[0] > 0  # the generator makes the budget bind
    lagr = m.reward - sol.duals[0] * m.costs[0]
    loose = TabularCMDP(m.transitions, lagr, m.costs, np.array([1e9]), m.initial, m.gamma)
    dual_value = solve_lp(loose).reward + sol.duals[0] * m.budgets[0]
    assert dual_value == pytest.approx(sol.reward, abs=1e-7)
    assert slater_bound(m) >= sol.duals[0]


def test_infeasible_budget_and_slater_errors():
    m = _two_state()
    lo = min_costs(m)[0]
    bad = TabularCMDP(m.transitions, m.reward, m.costs, np.array([lo - 0.05]), m.initial, m.gamma)
    with pytest.raises(InfeasibleBudgetError, match="budgets"):
        solve_lp(bad)
    tight = TabularCMDP(m.transitions, m.reward, m.costs, np.array([lo]), m.initial, m.gamma)
    with pytest.raises(ValueError, match="Slater"):
        slater_bound(tight)


@pytest.mark.parametrize(
    "change, match",
    [
        ({"gamma": 1.0}, "gamma"),
        ({"gamma": -0.1}, "gamma"),
        ({"transitions": np.full((2, 2, 2), 0.6)}, "sum to 1"),
        ({"budgets": np.array([0.1, 0.2])}, "budgets"),
        ({"initial": np.array([0.5, 0.6])}, "initial"),
        ({"reward": np.array([[np.nan, 0], [0, 0]])}, "reward"),
        ({"costs": np.zeros((1, 3, 2))}, "costs"),
    ],
)
def test_cmdp_rejects_bad_input(change, match):
    m = _two_state()
    kw = dict(
        transitions=m.transitions,
        reward=m.reward,
        costs=m.costs,
        budgets=m.budgets,
        initial=m.initial,
        gamma=m.gamma,
    )
    kw.update(change)
    with pytest.raises((ValueError, TypeError), match=match):
        TabularCMDP(**kw)


def test_generators_bind_the_budget_and_validate():
    for seed in range(3):
        m = gridworld_cmdp(4, n_hazards=3, rng=seed)
        assert (m.budgets > min_costs(m)).all()
    with pytest.raises(ValueError, match="n_hazards"):
        gridworld_cmdp(3, n_hazards=9)
    with pytest.raises(ValueError, match="branching"):
        garnet_cmdp(3, 2, branching=5)
    with pytest.raises(ValueError, match="policy"):
        _two_state().returns(np.ones((2, 2)))


def test_lp_retries_without_budgets_that_cannot_bind(monkeypatch):
    from paperworks.pdocrl import lp as lp_module

    m = garnet_cmdp(8, 2, rng=1)
    loose = TabularCMDP(m.transitions, m.reward, m.costs, np.array([1e9]), m.initial, m.gamma)
    reference = solve_lp(loose).reward
    real, calls = lp_module._solve, []

    def flaky(cmdp, obj, rows):
        calls.append(rows.tolist())
        res = real(cmdp, obj, rows)
        if len(calls) == 1:
            res.status = 4  # what HiGHS reports on a numerically failed solve
        return res

    monkeypatch.setattr(lp_module, "_solve", flaky)
    assert lp_module.solve_lp(loose).reward == pytest.approx(reference, abs=1e-10)
    assert calls == [[0], []]  # the 1e9 budget (above every cost) is dropped on the retry
