"""Every projection against cvxpy and against the KKT conditions; batches, lower bounds, bad sets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import nnls

import paperworks.hidden_target_oio as oio

cp = pytest.importorskip("cvxpy")


def _sets():
    rng = np.random.default_rng(3)
    A = np.abs(rng.normal(size=(3, 4))) + 0.1
    return [
        oio.Box(0.0, [3.0, 4.0, 5.0, 6.0]),
        oio.Budget(7.0, 4, weights=[1.0, 2.0, 0.5, 1.5]),
        oio.BoxBudget([0.0, 0.5, 0.0, 1.0], [4.0, 5.0, 6.0, 7.0], 9.0, weights=[1.0, 2.0, 1.0, 1.0]),
        oio.Band(0.0, [6.0, 7.0, 8.0, 9.0], 1.5),
        oio.Band(0.0, 6.0, 0.0, n=4),
        oio.Polytope(A, np.array([6.0, 5.0, 7.0]), lo=0.0, hi=8.0),
    ]


SETS = _sets()
IDS = [repr(s) for s in SETS]


def _cvxpy_projection(P: oio.Polytope, v: np.ndarray, lower: np.ndarray) -> np.ndarray:
    y = cp.Variable(P.n)
    cons = [y >= np.maximum(P.lo, lower), y <= P.hi]
    if len(P.b):
        cons.append(P.A @ y <= P.b)
    cp.Problem(cp.Minimize(cp.sum_squares(y - v)), cons).solve(
        solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12
    )
    return np.asarray(y.value)


def _kkt_residual(
    P: oio.Polytope, v: np.ndarray, y: np.ndarray, lower: np.ndarray, tol: float = 1e-7
) -> float:
    """Distance of v - y from the cone of the active constraints' normals (0 at the projection)."""
    lo = np.maximum(P.lo, lower)
    normals = [-np.eye(P.n)[i] for i in range(P.n) if y[i] <= lo[i] + tol]
    normals += [np.eye(P.n)[i] for i in range(P.n) if y[i] >= P.hi[i] - tol]
    if len(P.b):
        normals += [P.A[j] for j in range(len(P.b)) if P.A[j] @ y >= P.b[j] - tol]
    r = v - y
    if not normals:
        return float(np.linalg.norm(r))
    return float(nnls(np.array(normals).T, r)[1])


@pytest.mark.parametrize("Y", SETS, ids=IDS)
def test_projection_matches_cvxpy_and_kkt_with_and_without_lower_bounds(Y):
    rng = np.random.default_rng(0)
    P = Y.as_polytope()
    checked = 0
    for _ in range(25):
        v = rng.normal(2.0, 4.0, Y.n)
        start = Y.project(rng.uniform(0, 8, Y.n))
        lower = np.maximum(start - rng.uniform(0, 3, Y.n), 0.0) * (rng.random() < 0.7)  # x <= a point of Y
        y = Y.project(v, lower=lower)
        ref = _cvxpy_projection(P, v, lower)
        assert np.abs(y - ref).max() < 1e-6
        assert Y.violation(y) <= 1e-9 and (y >= lower - 1e-12).all()
        assert _kkt_residual(P, v, y, lower) < 1e-7
        checked += 1
    assert checked == 25


@pytest.mark.parametrize("Y", SETS, ids=IDS)
def test_batch_projection_equals_row_by_row_and_is_idempotent(Y):
    rng = np.random.default_rng(1)
    V = rng.normal(3.0, 4.0, (7, Y.n))
    low = np.maximum(Y.project(rng.uniform(0, 6, (7, Y.n))) - 1.0, 0.0)
    batch = Y.project(V, lower=low)
    rows = np.stack([Y.project(v, lower=l) for v, l in zip(V, low)])
    assert np.abs(batch - rows).max() < 1e-12
    assert np.abs(Y.project(batch, lower=low) - batch).max() < 1e-9


@settings(max_examples=60, deadline=None)
@given(
    v=st.lists(st.floats(-20, 20), min_size=5, max_size=5),
    width=st.floats(0.0, 3.0),
    budget=st.floats(0.5, 30.0),
)
def test_structured_projections_agree_with_the_generic_active_set_solver(v, width, budget):
    v = np.array(v)
    for Y in (oio.Band(0.0, 9.0, width, n=5), oio.BoxBudget(0.0, 8.0, budget, n=5)):
        y = Y.project(v)
        g = Y.as_polytope().project(v)
        assert np.abs(y - g).max() < 1e-7
        assert Y.contains(y)


def test_polytope_projection_of_a_large_problem_matches_cvxpy():
    rng = np.random.default_rng(5)
    n = 60
    P = oio.Polytope(np.abs(rng.normal(size=(5, n))), np.full(5, 40.0), lo=0.0, hi=3.0)
    v = rng.normal(1.0, 3.0, n)
    assert np.abs(P.project(v) - _cvxpy_projection(P, v, np.zeros(n))).max() < 1e-6


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: oio.Box(0.0, [1.0, -1.0]), "empty"),
        (lambda: oio.Box(0.0, np.inf, n=2), "unbounded"),
        (lambda: oio.Box(-1.0, 1.0, n=2), "lo"),
        (lambda: oio.BoxBudget(1.0, 5.0, 1.0, n=2), "empty"),
        (lambda: oio.Band([0.0, 5.0], [1.0, 6.0], 1.0), "empty"),
        (lambda: oio.Polytope([[1.0, 1.0]], [-1.0]), "empty"),
        (lambda: oio.Polytope([[1.0, -1.0]], [1.0]), "unbounded"),
        (lambda: oio.Budget(-1.0, 2), "budget"),
    ],
)
def test_empty_or_unbounded_sets_are_refused_with_a_one_line_error(make, message):
    with pytest.raises(ValueError, match=message) as e:
        make()
    assert "\n" not in str(e.value)


def test_projection_inputs_are_checked():
    Y = oio.BoxBudget(0.0, 5.0, 6.0, n=3)
    with pytest.raises(ValueError, match="v: expected shape"):
        Y.project(np.zeros(4))
    with pytest.raises(ValueError, match="finite"):
        Y.project([np.nan, 0.0, 0.0])
    with pytest.raises(ValueError, match="lower"):
        Y.project(np.zeros(3), lower=np.full(3, 4.0))  # a·lower = 12 > budget
    with pytest.raises(ValueError, match="lower: expected the shape"):
        Y.project(np.zeros((2, 3)), lower=np.zeros(3))
