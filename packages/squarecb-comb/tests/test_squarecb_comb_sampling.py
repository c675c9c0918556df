"""Sampled actions match the marginals of the program (chi-square), respect the cardinality bound."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from paperworks.squarecb_comb import sample_subset, solve_marginals


@pytest.mark.parametrize("shuffle", [True, False])
def test_inclusion_frequencies_match_marginals(shuffle: bool) -> None:
    rng = np.random.default_rng(0)
    r = rng.uniform(size=15)
    m = 4
    q = solve_marginals(r, m, 30.0).q
    n = 8000
    counts = np.zeros(15)
    sizes = set()
    for _ in range(n):
        a = sample_subset(q, rng, shuffle=shuffle)
        assert np.unique(a).size == a.size
        sizes.add(a.size)
        counts[a] += 1
    assert sizes <= {m}  # sum q = m exactly: every action has m arms
    # each arm's inclusion count is Binomial(n, q_i): a chi-square statistic with 15 degrees of freedom
    chi2 = np.sum((counts - n * q) ** 2 / (n * q * (1 - q) + 1e-300) * (q < 1))
    dof = int(np.sum(q < 1))
    assert stats.chi2.sf(chi2, dof) > 1e-3


def test_fractional_total_gives_floor_or_ceil_arms() -> None:
    rng = np.random.default_rng(1)
    q = np.array([0.5, 0.7, 0.2, 0.9, 0.1])  # sum 2.4
    sizes = np.array([sample_subset(q, rng).size for _ in range(4000)])
    assert set(np.unique(sizes)) <= {2, 3}
    assert sizes.mean() == pytest.approx(2.4, abs=0.05)


def test_saturated_arms_always_played() -> None:
    rng = np.random.default_rng(2)
    q = np.array([1.0, 1.0, 0.5, 0.5, 0.0])
    for _ in range(200):
        a = sample_subset(q, rng)
        assert {0, 1} <= set(a.tolist()) and 4 not in a and a.size == 3


@pytest.mark.parametrize(
    ("q", "match"),
    [(np.array([0.5, 1.5]), r"q: expected marginals in \[0, 1\]"), (np.ones((2, 2)), "q: expected a 1-d")],
)
def test_bad_marginals(q: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        sample_subset(q, np.random.default_rng(0))
