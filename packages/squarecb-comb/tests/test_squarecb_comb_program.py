"""The convex program (P): structured solver vs a generic solver, KKT residuals, invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq, minimize

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


def test_m1_log_barrier_against_an_independent_root_finder() -> None:
    """For m = 1 the KKT form is q_a = 1 / (gamma (lam - r_a)) with sum q = 1; lam from scipy's brentq."""
    r = np.array([0.8, 0.6, 0.3, 0.2, 0.1])
    gamma = 4.0

    def total(lam: float) -> float:
        return float(np.sum(np.minimum(1.0, 1.0 / (gamma * (lam - r))))) - 1.0

    lam = brentq(total, r.max() + 1.0 / gamma, r.max() + r.size / gamma + 1.0, xtol=1e-14)
    q_ref = np.minimum(1.0, 1.0 / (gamma * (lam - r)))
    sol = solve_marginals(r, 1, gamma)
    np.testing.assert_allclose(sol.q, q_ref, rtol=1e-9)
    assert sol.lam == pytest.approx(lam, rel=1e-9)


def test_m1_log_barrier_is_not_squarecbs_inverse_gap_weighting() -> None:
    """The docstring's warning: at m = 1 the log-barrier solution differs from SquareCB's rule."""
    r = np.array([0.9, 0.5, 0.45, 0.4, 0.1])
    gamma = 10.0
    best = int(np.argmax(r))
    igw = 1.0 / (r.size + gamma * (r[best] - r))
    igw[best] = 1.0 - (igw.sum() - igw[best])
    diff = np.abs(solve_marginals(r, 1, gamma).q - igw).max()
    assert diff > 0.1


def test_saturated_arms_are_exactly_one_and_the_rescale_touches_only_free_arms() -> None:
    """Strict saturation: arms with gamma (lam - r_i) <= 1 come back as exactly 1.0."""
    rng = np.random.default_rng(7)
    for _ in range(50):
        A = int(rng.integers(5, 80))
        m = int(rng.integers(2, A))
        r = rng.uniform(size=A)
        r[: m - 1] += 5.0  # m - 1 clearly best arms: saturated at any large gamma
        gamma = float(10 ** rng.uniform(1, 4))
        sol = solve_marginals(r, m, gamma, tol=1e-6)  # a loose tolerance: the rescale must act
        sat = r - sol.lam >= -1.0 / gamma
        assert np.all(sol.q[: m - 1] == 1.0)
        assert np.all(sol.q[sat] == 1.0) and np.all(sol.q[~sat] < 1.0)
        assert sol.q.sum() <= m + 1e-12
        res = kkt_residuals(sol.q, r, m, gamma)
        assert res["dual"] <= 1e-9 and res["primal"] <= 1e-12


def test_kkt_residuals_treat_an_almost_saturated_arm_as_free() -> None:
    r = np.array([0.9, 0.5, 0.4, 0.1])
    sol = solve_marginals(r, 2, 50.0)
    q = sol.q.copy()
    q[q == 1.0] = 1.0 - 1e-10  # the old rescale's output: no longer counted as saturated
    assert kkt_residuals(q, r, 2, 50.0)["stationarity"] > 1e-3 or not np.any(sol.q == 1.0)


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
    ("kwargs", "error", "match"),
    [
        ({"scores": np.array([[0.1, 0.2]]), "m": 1, "gamma": 1.0}, ValueError, "scores: expected a 1-d"),
        ({"scores": np.array([0.1, np.nan]), "m": 1, "gamma": 1.0}, ValueError, "scores: expected finite"),
        ({"scores": np.array([]), "m": 1, "gamma": 1.0}, ValueError, "scores: expected a non-empty"),
        ({"scores": ["a", "b"], "m": 1, "gamma": 1.0}, TypeError, "scores: expected a real-valued"),
        ({"scores": np.array([0.1, 0.2]), "m": 3, "gamma": 1.0}, ValueError, "m: expected an int >= 1 <= 2"),
        ({"scores": np.array([0.1, 0.2]), "m": 0, "gamma": 1.0}, ValueError, "m: expected"),
        ({"scores": np.array([0.1, 0.2]), "m": 1.0, "gamma": 1.0}, TypeError, "m: expected an int"),
        ({"scores": np.array([0.1, 0.2]), "m": 1, "gamma": -1.0}, ValueError, "gamma: expected a number > 0"),
        ({"scores": np.array([0.1, 0.2]), "m": 1, "gamma": 0.0}, ValueError, "gamma: expected a number > 0"),
        (
            {"scores": np.array([0.1, 0.2]), "m": 1, "gamma": float("inf")},
            ValueError,
            "gamma: expected a finite",
        ),
        (
            {"scores": np.array([0.1, 0.2]), "m": 1, "gamma": float("nan")},
            ValueError,
            "gamma: expected a finite",
        ),
        ({"scores": np.array([0.1, 0.2]), "m": 1, "gamma": 1.0, "tol": 0.0}, ValueError, "tol: expected"),
    ],
)
def test_bad_input(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        solve_marginals(**kwargs)
