"""Comparators against independent routes: a linear program, a brute-force grid, the known quantiles."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import paperworks.hidden_target_oio as oio


def _demand(T=300, seed=0):
    return oio.CorrelatedLognormal((3.0, 5.0, 7.0), cv=0.6, rho=0.3).sample(T, rng=seed)


@pytest.mark.parametrize(
    "Y",
    [oio.Box(0.0, [4.0, 5.0, 12.0]), oio.BoxBudget(0.0, 10.0, 11.0, n=3), oio.Band(0.0, 9.0, 1.0, n=3)],
    ids=["box", "boxbudget", "band"],
)
def test_best_fixed_level_equals_the_linear_program_on_the_same_set(Y):
    loss = oio.NewsvendorLoss(1.0, 3.0)
    d = _demand()
    u, total = oio.best_fixed_level(Y, loss, d)
    _, total_lp = oio.best_fixed_level(Y.as_polytope(), loss, d)  # epigraph LP (HiGHS)
    assert Y.contains(u)
    assert total == pytest.approx(total_lp, rel=1e-9, abs=1e-7)
    assert total == pytest.approx(oio.total_loss(loss, u, d))


def test_best_fixed_level_with_a_quadratic_term_beats_every_nearby_point():
    Y = oio.BoxBudget(0.0, 10.0, 11.0, n=3)
    loss = oio.NewsvendorLoss(1.0, 3.0, mu=0.3)
    d = _demand(200, 1)
    u, total = oio.best_fixed_level(Y, loss, d)
    assert Y.contains(u)
    rng = np.random.default_rng(0)
    for _ in range(300):
        w = Y.project(u + rng.normal(0, 0.3, 3))
        assert oio.total_loss(loss, w, d) >= total - 1e-7


def test_one_product_minimiser_is_the_critical_quantile():
    d = np.arange(1.0, 101.0)[:, None]  # demands 1..100
    loss = oio.NewsvendorLoss(1.0, 3.0)  # critical ratio 0.75: any level in [75, 76] is optimal
    u, total = oio.best_fixed_level(oio.Box(0.0, 200.0, n=1), loss, d)
    grid = np.linspace(0, 120, 12001)
    brute = min(oio.total_loss(loss, np.array([g]), d) for g in grid)
    assert 75.0 - 1e-9 <= u[0] <= 76.0 + 1e-9 and total == pytest.approx(brute)


def test_expected_optimal_levels_minimise_the_expected_loss():
    Y = oio.BoxBudget(0.0, 12.0, 14.0, n=3)
    loss = oio.NewsvendorLoss(1.0, 3.0)
    proc = oio.RegimeSwitching((2.0, 3.0, 4.0), cv=0.5, rho=0.0, high=(5.0, 6.0, 7.0), switches=1)
    u = oio.expected_optimal_levels(Y, loss, proc, 10)
    assert np.allclose(u[:5], u[0]) and np.allclose(u[5:], u[-1])  # two regimes
    assert u[-1] @ np.ones(3) == pytest.approx(14.0)  # the budget binds in the high regime
    assert oio.path_length(u) == pytest.approx(np.linalg.norm(u[-1] - u[0]))
    # low regime (budget slack): each level is the 0.75-quantile of its lognormal marginal
    s = np.sqrt(np.log1p(0.25))
    for i, m in enumerate((2.0, 3.0, 4.0)):

        def expected(y, m=m):
            z = np.random.default_rng(0).standard_normal(200_000)
            dd = m * np.exp(s * z - s * s / 2)
            return np.mean(np.maximum(y - dd, 0) + 3 * np.maximum(dd - y, 0))

        best = minimize_scalar(expected, bounds=(0.0, 12.0), method="bounded").x
        assert u[0, i] == pytest.approx(best, rel=0.02)
