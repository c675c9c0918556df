"""SID: gadjid (the well-kept implementation) against our reference, and both against interventional
distributions computed in closed form in linear Gaussian SEMs (the definition, by brute force)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.smnc_dag.metrics import count_accuracy, sid, sid_reference


def _random_dag(d, p, rng):
    B = np.triu(rng.random((d, d)) < p, 1)
    perm = rng.permutation(d)
    return B[np.ix_(perm, perm)]


def _gaussian_sid(B_true, B_est, rng) -> int:
    """Count pairs whose parent-adjusted p(x_j | do(x_i)) (from B_est's parents of i, on the true joint)
    differs from the true interventional law, in a linear Gaussian SEM on B_true with generic weights."""
    d = len(B_true)
    W = B_true * rng.uniform(0.5, 1.5, (d, d)) * rng.choice([-1, 1], (d, d))
    D = np.diag(rng.uniform(0.5, 1.5, d))
    inv = np.linalg.inv(np.eye(d) - W)
    S = inv.T @ D @ inv  # covariance of x = x W + N
    errors = 0
    for i in range(d):
        Wm, Dm = W.copy(), D.copy()
        Wm[:, i], Dm[i, i] = 0, 0  # do(x_i): cut its parents, no noise
        invm = np.linalg.inv(np.eye(d) - Wm)
        Sdo = invm.T @ Dm @ invm
        Z = [int(k) for k in np.flatnonzero(B_est[:, i])]
        for j in range(d):
            if j == i:
                continue
            te, var_do = invm[i, j], Sdo[j, j]
            if j in Z:
                coef, var = 0.0, S[j, j]
            else:
                idx = [i, *Z]
                beta = np.linalg.solve(S[np.ix_(idx, idx)], S[idx, j])
                resid = S[j, j] - S[j, idx] @ beta
                bz = beta[1:]
                coef, var = beta[0], resid + bz @ S[np.ix_(Z, Z)] @ bz
            errors += not (np.isclose(coef, te, atol=1e-9) and np.isclose(var, var_do, rtol=1e-9))
    return errors


def test_sid_of_known_examples():
    # Peters and Buehlmann (2015), the chain 0 -> 1 -> 2: reversing the first edge costs SID,
    # adding the superfluous edge 0 -> 2 costs nothing.
    chain = np.zeros((3, 3), bool)
    chain[0, 1] = chain[1, 2] = True
    extra = chain.copy()
    extra[0, 2] = True
    rev = chain.copy()
    rev[0, 1], rev[1, 0] = False, True
    assert sid(chain, chain) == sid_reference(chain, chain) == 0
    assert sid(chain, extra) == sid_reference(chain, extra) == 0
    assert sid(chain, rev) == sid_reference(chain, rev) > 0
    assert count_accuracy(chain, extra)["shd"] == 1


@settings(max_examples=30, deadline=None)
@given(d=st.integers(2, 5), seed=st.integers(0, 100_000))
def test_reference_sid_is_the_definition_in_gaussian_sems(d, seed):
    rng = np.random.default_rng(seed)
    B_true = _random_dag(d, 0.5, rng)
    B_est = (
        _random_dag(d, 0.5, rng) if rng.random() < 0.5 else B_true ^ (np.triu(rng.random((d, d)) < 0.2, 1))
    )
    if not _is_dag(B_est):
        B_est = _random_dag(d, 0.4, rng)
    assert sid_reference(B_true, B_est) == _gaussian_sid(B_true, B_est, rng)


@settings(max_examples=25, deadline=None)
@given(d=st.integers(2, 12), seed=st.integers(0, 100_000))
def test_gadjid_and_reference_agree(d, seed):
    pytest.importorskip("gadjid")
    rng = np.random.default_rng(seed)
    B_true, B_est = _random_dag(d, 0.3, rng), _random_dag(d, 0.3, rng)
    assert sid(B_true, B_est) == sid_reference(B_true, B_est)


def test_sid_errors():
    cyc = np.array([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match=r"^B_est: .*cycle"):
        sid(np.zeros((2, 2)), cyc)
    with pytest.raises(ValueError, match=r"^B_est: .*shape"):
        sid(np.zeros((2, 2)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"^B_true: "):
        sid(np.zeros((2, 3)), np.zeros((2, 2)))


def _is_dag(B):
    import networkx as nx

    return nx.is_directed_acyclic_graph(nx.DiGraph(B))
