"""The max-min solver against an independent generic solver, its KKT conditions and its invariances."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from paperworks.maxmin_mtl import (
    closed_form,
    maxmin_weights,
    mgda_weights,
    normalized_improvement_rates,
    solve_maxmin,
    task_curvatures,
)


def _instance(seed: int, k: int, d: int, common: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    P = rng.normal(size=(k, d)) * np.exp(rng.normal(size=(k, 1)))
    if common:  # a shared descent direction makes t* > 0
        P[:, 0] += 2.0 * np.abs(P).max()
    return P


def _primal_slsqp(P: np.ndarray, seed: int) -> float:
    """max t s.t. (2 p_i^T u - ||u||^2) / ||p_i||^2 >= t, by SLSQP over (u, t) from several starts."""
    k, d = P.shape
    n = (P**2).sum(1)
    cons = [
        {"type": "ineq", "fun": (lambda z, i=i: (2 * P[i] @ z[:-1] - z[:-1] @ z[:-1]) / n[i] - z[-1])}
        for i in range(k)
    ]
    rng = np.random.default_rng(seed)
    best = -np.inf
    for _ in range(4):
        z0 = np.append(rng.normal(size=d) * 0.1, -1.0)
        o = minimize(
            lambda z: -z[-1], z0, constraints=cons, method="SLSQP", options={"maxiter": 500, "ftol": 1e-12}
        )
        if o.success:
            best = max(best, o.x[-1])
    return best


@pytest.mark.parametrize("seed", range(12))
def test_active_set_matches_generic_solver(seed):
    rng = np.random.default_rng(100 + seed)
    k, d = int(rng.integers(2, 7)), int(rng.integers(2, 9))
    P = _instance(seed, k, d, common=seed % 2 == 0)
    res = solve_maxmin(P @ P.T)
    assert res.value == pytest.approx(_primal_slsqp(P, seed), abs=1e-5)
    _kkt_certificate(P, res)


@pytest.mark.parametrize("seed", range(8))
def test_dual_matches_generic_simplex_minimisation(seed):
    P = _instance(50 + seed, 5, 4, common=seed % 2 == 1)
    Q = P @ P.T
    n = np.diag(Q)
    res = solve_maxmin(Q)
    o = minimize(
        lambda c: (c @ Q @ c) / (c @ n),
        np.full(5, 0.2),
        method="SLSQP",
        bounds=[(0, 1)] * 5,
        constraints=({"type": "eq", "fun": lambda c: c.sum() - 1},),
        options={"ftol": 1e-14, "maxiter": 500},
    )
    assert res.value <= o.fun + 1e-9
    assert res.value == pytest.approx(o.fun, abs=1e-6)


@pytest.mark.parametrize("seed", range(10))
def test_kkt_conditions_at_returned_update(seed):
    P = _instance(200 + seed, 6, 5, common=seed % 3 != 0)
    Q = P @ P.T
    res = solve_maxmin(Q)
    c = res.coef
    assert np.all(c >= 0) and c.sum() == pytest.approx(1.0)
    u = P.T @ c
    n = np.diag(Q)
    r = (2 * P @ u - u @ u) / n
    np.testing.assert_allclose(r, res.rates, atol=1e-10)
    act = list(res.active)
    assert set(np.flatnonzero(c > 0)) == set(act)
    np.testing.assert_allclose(r[act], res.value, atol=1e-7)  # bottleneck tasks share the worst rate
    assert np.all(r >= res.value - 1e-7)  # every other task is served at least as well
    # stationarity of the Lagrangian: sum_i mu_i grad r_i(u) = 0 with mu_i proportional to c_i n_i
    mu = c * n / (c @ n)
    grad = (mu / n) @ (2 * P - 2 * u[None, :])
    np.testing.assert_allclose(grad, 0.0, atol=1e-7 * np.abs(P).max())


def _kkt_certificate(P: np.ndarray, res) -> None:
    """Independent optimality certificate of (P): the KKT conditions are sufficient (concave rates)."""
    n = (P**2).sum(1)
    c = res.coef
    assert np.all(c >= 0) and c.sum() == pytest.approx(1.0, abs=1e-12)
    u = P.T @ c
    r = (2 * P @ u - u @ u) / n  # rates recomputed from the steps, not from the solver's Gram algebra
    np.testing.assert_allclose(res.rates, r, atol=1e-9)
    assert res.value == pytest.approx(r.min(), abs=1e-12)  # the value is the update's actual worst rate
    act = c > 0
    np.testing.assert_allclose(r[act], r.min(), atol=1e-9)  # bottleneck tasks share the worst rate
    mu = c * n / (c @ n)
    grad = (mu / n) @ (2 * P - 2 * u[None, :])
    scale = (np.abs(mu / n) @ np.abs(P)).max()
    assert np.abs(grad).max() <= 1e-9 * scale  # Lagrangian stationarity


def _uneven(seed: int, k: int, d: int, decades: float = 2.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    P = rng.normal(size=(k, d)) * 10.0 ** rng.uniform(-decades, decades, size=(k, 1))
    if seed % 3:
        P[:, 0] += np.abs(P).max() * rng.uniform(0.0, 2.0)
    return P


def _qp_rates(P: np.ndarray) -> np.ndarray:
    """Rates of the optimum from an independent convex solver (cvxpy/Clarabel) on the primal QCQP,
    in coordinates scaled by the largest own step so that the instance is well conditioned."""
    cp = pytest.importorskip("cvxpy")
    k, d = P.shape
    n = (P**2).sum(1)
    s = np.sqrt(n.max())
    Ps = P / s
    u = cp.Variable(d)
    t = cp.Variable()
    cons = [2 * Ps[i] @ u - cp.sum_squares(u) >= t * n[i] / s**2 for i in range(k)]
    with warnings.catch_warnings():  # tight tolerances make Clarabel say "may be inaccurate"
        warnings.simplefilter("ignore", UserWarning)
        cp.Problem(cp.Maximize(t), cons).solve(
            solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11
        )
    us = u.value * s
    return (2 * P @ us - us @ us) / n


@pytest.mark.parametrize("seed", range(60))
def test_rates_on_uneven_norms_and_more_tasks_than_dims_ridge_0(seed):
    """Own-step norms spanning 4 decades, T > d (rank-deficient Gram), ridge 0: the rates (not only the
    value) satisfy the KKT certificate; the old 1e-10-mean-diagonal ridge was off by up to 3e-4."""
    rng = np.random.default_rng(7000 + seed)
    d = int(rng.integers(1, 4))
    k = int(rng.integers(d + 2, d + 9))  # more tasks than parameters
    P = _uneven(seed, k, d)
    if seed % 5 == 0:
        P[1] = P[0]  # a duplicated task: affinely dependent steps
    res = solve_maxmin(P @ P.T, ridge=0.0)
    _kkt_certificate(P, res)


@pytest.mark.parametrize("seed", range(8))
def test_rates_match_an_independent_qp_solver(seed):
    rng = np.random.default_rng(900 + seed)
    k, d = int(rng.integers(3, 9)), int(rng.integers(1, 5))
    P = _uneven(seed, k, d, decades=0.75)
    res = solve_maxmin(P @ P.T)
    np.testing.assert_allclose(res.rates, _qp_rates(P), atol=5e-6)


def test_rank_deficient_pair_is_exact_without_ridge():
    # d = 1: steps 1 and 2; r1 = 2u - u^2, r2 = u - u^2/4 cross at u = 4/3, t* = 8/9
    P = np.array([[1.0], [2.0]])
    res = solve_maxmin(P @ P.T, ridge=0.0)
    assert res.value == pytest.approx(8 / 9, abs=1e-12)
    np.testing.assert_allclose(res.coef, [2 / 3, 1 / 3], atol=1e-12)
    np.testing.assert_allclose(res.rates, 8 / 9, atol=1e-12)


def test_ridge_acts_on_the_normalised_gram():
    P = _uneven(11, 5, 3, decades=2.0)
    Q = P @ P.T
    a = solve_maxmin(Q, ridge=0.0)
    b = solve_maxmin(Q, ridge=1e-10)
    np.testing.assert_allclose(b.rates, a.rates, atol=1e-8)  # the same small change for every task


def test_closed_form_on_single_task_and_pair():
    Q = np.array([[4.0, 1.0], [1.0, 2.0]])
    c, t = closed_form(Q, [0])
    assert c == pytest.approx([1.0]) and t == pytest.approx(1.0)
    c, t = closed_form(Q, [0, 1])
    # independent check: rates of both tasks equal t at u = c0 p0 + c1 p1
    Kc = Q @ c
    r = (2 * Kc - c @ Kc) / np.diag(Q)
    np.testing.assert_allclose(r, t, atol=1e-9)


def test_pareto_stationary_gives_zero_update():
    g = np.array([[1.0, 0.0], [-2.0, 0.0]])
    res = maxmin_weights(g, np.array([1.0, 3.0]))
    assert res.value == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(res.update, 0.0, atol=1e-9)


def test_unit_curvature_reduces_to_mgda_on_normalised_gradients():
    rng = np.random.default_rng(3)
    G = rng.normal(size=(4, 6))
    G[:, 0] += 3
    res = maxmin_weights(G, curvature="unit")
    U = G / np.linalg.norm(G, axis=1, keepdims=True)
    w = mgda_weights(U @ U.T, max_iter=20000, tol=1e-12)
    np.testing.assert_allclose(res.update, w @ U, atol=1e-4)
    fw = float(np.linalg.norm(w @ U) ** 2)  # Frank-Wolfe converges slowly: ours may only be lower
    assert res.value <= fw + 1e-9
    assert res.value == pytest.approx(fw, abs=1e-4)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    task=st.integers(0, 3),
    log_scale=st.floats(-6, 6),
)
def test_invariant_to_rescaling_any_task_loss(seed, task, log_scale):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(4, 7))
    L = rng.uniform(0.5, 3.0, size=4)
    floor = np.array([0.0, -1.0, 0.2, 0.0])
    s = 10.0**log_scale
    G2, L2, f2 = G.copy(), L.copy(), floor.copy()
    G2[task] *= s
    L2[task] *= s
    f2[task] *= s
    a = maxmin_weights(G, L, loss_floor=floor)
    b = maxmin_weights(G2, L2, loss_floor=f2)
    np.testing.assert_allclose(b.update, a.update, rtol=1e-6, atol=1e-9 * np.abs(a.update).max())
    np.testing.assert_allclose(b.rates, a.rates, atol=1e-7)
    assert b.active == a.active


def test_shared_curvature_is_not_scale_invariant():
    rng = np.random.default_rng(0)
    G = rng.normal(size=(3, 5))
    G2 = G.copy()
    G2[0] *= 100.0
    a = maxmin_weights(G, curvature="shared").update
    b = maxmin_weights(G2, curvature="shared").update
    cos = a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    assert cos < 0.999


def test_rates_definition_matches_quadratic_model():
    rng = np.random.default_rng(1)
    G = rng.normal(size=(3, 4))
    L = np.array([1.0, 2.0, 0.5])
    K = G @ G.T
    lam = task_curvatures(np.diag(K), L, "gap", 0.0)
    w = rng.normal(size=3)
    u = w @ G
    improvement = G @ u - 0.5 * lam * (u @ u)
    best = np.diag(K) / (2 * lam)
    np.testing.assert_allclose(normalized_improvement_rates(K, lam, w), improvement / best, rtol=1e-12)
    np.testing.assert_allclose(best, L)  # gap model: best one-step improvement = optimality gap
