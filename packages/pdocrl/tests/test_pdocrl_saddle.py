"""The spurious-saddle example: a saddle of the restricted problem that is not optimal, and its repair."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from paperworks.pdocrl import (
    PDOCRL,
    LinearQClass,
    PDOCRLConfig,
    Problem,
    collect_dataset,
    gradient_saddle_solver,
    naive_q_class,
    partial_coverage_behaviour,
    restricted_best_response_value,
    restricted_saddle,
    solve_lp,
    spurious_example,
)


@pytest.fixture(scope="module")
def example():
    m = spurious_example()
    lp = solve_lp(m)
    q_star = m.q_function(lp.policy)
    mu = partial_coverage_behaviour(lp.policy, noise=0.3, rng=0)
    counts = collect_dataset(m, mu, 1000, rng=0).counts(2, 3)
    return m, lp, q_star, counts


def test_example_values(example):
    m, lp, q_star, _ = example
    assert lp.reward == pytest.approx(m.gamma)
    np.testing.assert_allclose(q_star, [[9, 9, 9], [10, 9, 9]], atol=1e-9)


def test_bad_policy_is_a_saddle_of_the_naive_restricted_problem(example):
    m, lp, q_star, counts = example
    kw = dict(initial=m.initial, gamma=m.gamma, budgets=m.budgets)
    bad = np.array([[1.0, 0, 0], [0, 0, 1.0]])
    value_bad = restricted_best_response_value(counts, bad, q_star, w_bound=20.0, **kw)
    assert value_bad == pytest.approx(lp.reward)  # w = 0 is a best response and L = J*
    best = max(
        restricted_best_response_value(counts, np.eye(3)[[a, b]], q_star, w_bound=20.0, **kw)
        for a, b in itertools.product(range(3), range(3))
    )
    assert best == pytest.approx(value_bad)  # no (pi, w) does better against Q*: a saddle (Q is a singleton)
    assert lp.reward - m.returns(bad)[0] == pytest.approx(m.gamma)  # yet pi_bad loses Delta = gamma


def test_the_stronger_class_removes_the_spurious_saddle(example):
    m, lp, _, counts = example
    bad = np.array([[1.0, 0, 0], [0, 0, 1.0]])
    box = LinearQClass.tabular(2, 3, -100.0, 100.0)
    sol = restricted_saddle(
        counts, bad, np.zeros(1), box, initial=m.initial, gamma=m.gamma, budgets=m.budgets, w_bound=20.0
    )
    assert sol.value < lp.reward - m.gamma / 2  # pi_bad's restricted max-min value exposes it


def test_naive_solver_returns_a_spurious_policy_and_the_box_class_does_not(example):
    m, lp, q_star, counts = example
    kw = dict(initial=m.initial, gamma=m.gamma, budgets=m.budgets, w_bound=20.0, lambda_bound=10.0)
    naive = gradient_saddle_solver(counts, naive_q_class(q_star), **kw)
    assert lp.reward - m.returns(naive)[0] >= m.gamma / 2
    box = gradient_saddle_solver(counts, LinearQClass.tabular(2, 3, -100.0, 100.0), **kw)
    assert lp.reward - m.returns(box)[0] < 0.01
    mix = PDOCRL(PDOCRLConfig(iterations=400)).fit(counts, Problem.of(m, 10.0))
    J, Jc = mix.returns(m)
    assert abs(lp.reward - J) < 0.05 and Jc[0] <= m.budgets[0] + 0.05
