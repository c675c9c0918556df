"""The convex program (P): structured solver vs a generic solver, KKT residuals, invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from paperworks.squarecb_comb import kkt_residuals, program_objective, solve_marginals


def _generic(r: np.ndarray, m: int, gamma: float) -> np.ndarray:
    """SLSQP on (P) with box and cardinality constraints, from the uniform start."""
    A = r.size
    res = minimize(
        lambda q: program_objective(np.maximum(q, 1e-300), r, gamma),
        x0=np.full(A, min(1.0, m / A) * 0.5),
        jac=lambda q: -r - 1.0 / (gamma * np.maximum(q, 1e-300)),
        bounds=[(1e-12, 1.0)] * A,
        constraints=[{"type": "ineq", "fun": lambda q: m - q.sum(), "jac": lambda q: -np.ones(A)}],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    assert res.success, res.message
    return res.x


@pytest.mark.parametrize(
    ("A", "m", "gamma", "shift"),
    [(5, 1, 3.0, 0.0), (8, 3, 20.0, 0.0), (12, 4, 50.0, 0.0), (6, 2, 5.0, -2.0), (10, 10, 7.0, 0.5)],
)
def test_matches_generic_solver_and_kkt(A: int, m: int, gamma: float, shift: float) -> None:
    rng = np.random.default_rng(A * 100 + m)
    r = rng.uniform(0, 1, size=A) + shift
    sol = solve_marginals(r, m, gamma)
    ref = _generic(r, m, gamma)
    # same optimum: objective values agree and ours is not worse
    f_ours, f_ref = program_objective(sol.q, r, gamma), program_objective(ref, r, gamma)
    assert f_ours <= f_ref + 1e-7
    assert f_ours == pytest.approx(f_ref, abs=1e-6)
    np.testing.assert_allclose(sol.q, ref, atol=2e-4)
    res = kkt_residuals(sol.q, r, m, gamma)
    assert res["primal"] <= 1e-9 and res["dual"] <= 1e-9
    assert res["stationarity"] <= 1e-6 * (1 + abs(res["lam"]))
    assert res["complementarity"] <= 1e-8


def test_kkt_residuals_detect_a_wrong_point() -> None:
    r = np.array([0.9, 0.5, 0.4, 0.1])
    sol = solve_marginals(r, 2, 10.0)
    wrong = np.full(4, 0.5)
    assert kkt_residuals(wrong, r, 2, 10.0)["stationarity"] > 1e-2
    assert kkt_residuals(sol.q, r, 2, 10.0)["stationarity"] < 1e-8


def test_m1_equals_normalised_inverse_gap_weighting() -> None:
    """For m = 1 the KKT form is q_a = 1 / (gamma (lam - r_a)), summing to one."""
    r = np.array([0.8, 0.6, 0.3, 0.2, 0.1])
    gamma = 4.0
    sol = solve_marginals(r, 1, gamma)
    assert sol.q.sum() == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(sol.q, 1.0 / (gamma * (sol.lam - r)), rtol=1e-9)


def test_slack_cardinality_when_every_arm_is_bad() -> None:
    """Very negative predictions: lam = 0 and fewer than m arms in expectation."""
    r = np.full(10, -5.0)
    sol = solve_marginals(r, 3, 10.0)
    assert sol.lam == 0.0
    np.testing.assert_allclose(sol.q, 1.0 / 50.0)


@settings(max_examples=60, deadline=None)
@given(
    A=st.integers(1, 60),
    data=st.data(),
    log_gamma=st.floats(-1, 6),
)
def test_invariants(A: int, data: st.DataObject, log_gamma: float) -> None:
    m = data.draw(st.integers(1, A))
    r = np.array(data.draw(st.lists(st.floats(-3, 3), min_size=A, max_size=A)))
    gamma = 10.0**log_gamma
    sol = solve_marginals(r, m, gamma)
    q = sol.q
    assert np.all(q > 0) and np.all(q <= 1.0)
    assert q.sum() <= m + 1e-12
    assert sol.lam >= 0
    # monotone in the predicted reward (ties aside)
    order = np.argsort(r)
    assert np.all(np.diff(q[order]) >= -1e-12)
    if sol.lam > 0:
        assert q.sum() == pytest.approx(m, rel=1e-8)


def test_scales_to_large_arm_sets() -> None:
    r = np.random.default_rng(0).uniform(size=100_000)
    sol = solve_marginals(r, 10, 1e5)
    assert sol.q.sum() == pytest.approx(10, rel=1e-9)
    assert sol.iterations < 60


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"scores": np.array([[0.1, 0.2]]), "m": 1, "gamma": 1.0}, "scores: expected a non-empty 1-D"),
        ({"scores": np.array([0.1, np.nan]), "m": 1, "gamma": 1.0}, "scores: expected finite"),
        ({"scores": np.array([0.1, 0.2]), "m": 3, "gamma": 1.0}, r"m: expected an int in \[1, A=2\]"),
        ({"scores": np.array([0.1, 0.2]), "m": 0, "gamma": 1.0}, "m: expected"),
        ({"scores": np.array([0.1, 0.2]), "m": 1, "gamma": -1.0}, "gamma: expected a positive"),
        ({"scores": np.array([0.1, 0.2]), "m": 1, "gamma": float("inf")}, "gamma: expected a positive"),
    ],
)
def test_bad_input(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        solve_marginals(**kwargs)
