"""The decomposed Lagrangian: sample form vs count form, gradients vs finite differences, the flow identity,
and the LP saddle vs its tabular closed form."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.pdocrl import (
    LinearQClass,
    collect_dataset,
    garnet_cmdp,
    lagrangian,
    lagrangian_gradients,
    partial_coverage_behaviour,
    q_box,
    restricted_saddle,
    solve_lp,
    tabular_saddle,
)
from paperworks.pdocrl.pdocrl import Problem

S, A = 6, 3


@pytest.fixture(scope="module")
def setting():
    m = garnet_cmdp(S, A, rng=0)
    lp = solve_lp(m)
    mu = partial_coverage_behaviour(lp.policy, noise=0.4, rng=0)
    data = collect_dataset(m, mu, 3000, rng=1)
    return m, lp, data, data.counts(S, A)


def _random_point(rng, counts):
    pi = rng.dirichlet(np.ones(A), size=S)
    w = np.where(counts.supported, rng.uniform(0, 3, size=(S, A)), 0.0)
    q = rng.normal(size=(S, A)) * 3
    lam = rng.uniform(0, 2, size=1)
    return pi, w, q, lam


def test_sample_and_count_forms_agree_and_gradients_match_finite_differences(setting):
    m, _, data, counts = setting
    rng = np.random.default_rng(0)
    pi, w, q, lam = _random_point(rng, counts)
    kw = dict(initial=m.initial, gamma=m.gamma, budgets=m.budgets)

    def L(pi=pi, w=w, q=q, lam=lam):
        return lagrangian(data, pi, w, q, lam, **kw)

    g = lagrangian_gradients(counts, pi, w, q, lam, **kw)
    h = 1e-6
    for name, x in (("q", q), ("w", w), ("policy", pi)):
        fd = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[idx] = h
            fd[idx] = (
                L(**{"pi" if name == "policy" else name: x + e})
                - L(**{"pi" if name == "policy" else name: x - e})
            ) / (2 * h)
        np.testing.assert_allclose(g[name], fd, atol=1e-6)
    fd_lam = (L(lam=lam + h) - L(lam=lam - h)) / (2 * h)
    assert g["lam"][0] == pytest.approx(fd_lam, abs=1e-6)
    # L is affine in q, so its value is sum(g_q * q) + the q-free part
    assert L() == pytest.approx(L(q=np.zeros_like(q)) + float((g["q"] * q).sum()), abs=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_flow_identity_makes_l_independent_of_q_at_a_true_occupancy(seed):
    """With the true model and w = d_pi / mu, L(pi, w, Q, lam) = J_lam(pi) for every Q."""
    m = garnet_cmdp(5, 2, rng=seed % 7)
    rng = np.random.default_rng(seed)
    pi = rng.dirichlet(np.ones(2), size=5)
    mu = np.full((5, 2), 0.1)  # a 'data distribution' with full support and exact model statistics
    import scipy.sparse as sp

    from paperworks.pdocrl.data import DatasetCounts

    big = 1e6
    counts = DatasetCounts(
        n_sa=mu * big,
        n_sas=sp.csr_matrix((m.transitions * (mu * big)[:, :, None]).reshape(10, 5)),
        reward=m.reward,
        costs=m.costs,
        n=int(big),
    )
    w = m.occupancy(pi) / mu
    lam = np.array([rng.uniform(0, 3)])
    q = rng.normal(size=(5, 2)) * 10
    g = lagrangian_gradients(counts, pi, w, q, lam, initial=m.initial, gamma=m.gamma, budgets=m.budgets)
    np.testing.assert_allclose(g["q"], 0.0, atol=1e-9)  # the flow constraints hold
    J, Jc = m.returns(pi)
    d = w * mu
    value = (1 - m.gamma) * float(m.initial @ (pi * q).sum(1)) + float(
        (
            d
            * (
                m.reward
                - lam[0] * (m.costs[0] - m.budgets[0])
                + m.gamma * m.transitions @ (pi * q).sum(1)
                - q
            )
        ).sum()
    )
    assert value == pytest.approx(J - lam[0] * (Jc[0] - m.budgets[0]), abs=1e-8)


def test_lp_saddle_equals_tabular_closed_form(setting):
    m, _lp, _, counts = setting
    problem = Problem.of(m, 5.0)
    low, high = q_box(counts, problem)
    rng = np.random.default_rng(3)
    for _ in range(3):
        pi = rng.dirichlet(np.ones(A), size=S)
        lam = rng.uniform(0, 2, size=1)
        kw = dict(initial=m.initial, gamma=m.gamma, budgets=m.budgets)
        closed = tabular_saddle(counts, pi, lam, q_low=low, **kw)
        via_lp = restricted_saddle(counts, pi, lam, LinearQClass.tabular(S, A, low, high), **kw)
        assert via_lp.value == pytest.approx(closed.value, abs=1e-7)
        np.testing.assert_allclose(via_lp.occupancy, closed.occupancy, atol=1e-7)
        reached = (closed.occupancy.sum(1) > 1e-9)[:, None] & counts.supported  # where Q is pinned down
        np.testing.assert_allclose(via_lp.q[reached], closed.q[reached], atol=1e-6)
        assert low <= closed.q.min() and closed.q.max() <= high


def test_pessimism_values_unseen_pairs_at_the_box_bottom(setting):
    m, _, _, counts = setting
    problem = Problem.of(m, 5.0)
    low, _ = q_box(counts, problem)
    pi = np.full((S, A), 1 / A)
    sol = tabular_saddle(
        counts, pi, np.zeros(1), q_low=low, initial=m.initial, gamma=m.gamma, budgets=m.budgets
    )
    assert (~counts.supported).any()
    np.testing.assert_allclose(sol.q[~counts.supported], low)


def test_linear_class_rejects_bad_bounds():
    with pytest.raises(ValueError, match="lo <= hi"):
        LinearQClass(np.eye(2), np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="features"):
        LinearQClass(np.array([[np.nan]]), 0.0, 1.0)
