"""The Dinkelbach root on a sample against bisection and brute force; the best fixed threshold."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.stochastic_dinkelbach import (
    GaussianStream,
    best_fixed_threshold,
    dinkelbach_root,
    get_metric,
    threshold_counts,
)


def _brute(scores, pos, metric):
    """Every threshold classifier 1[s > tau] by direct evaluation (O(n^2))."""
    cands = np.concatenate([[np.inf], np.unique(scores)[::-1]])
    best = -np.inf
    for c in cands:
        pred = scores >= c
        tp, fp = np.sum(pos * pred), np.sum((1 - pos) * pred)
        fn, tn = np.sum(pos * ~pred), np.sum((1 - pos) * ~pred)
        best = max(best, metric.value(tp, fp, fn, tn))
    return best


def _bisect_root(scores, pos, metric, iters=200):
    """Root of G(lambda) = max over thresholds of A - lambda B, by bisection (independent of Dinkelbach)."""
    _, tp, fp, fn, tn = threshold_counts(scores, pos)
    num, den = metric.increments
    A = num[0] * tp + num[1] * fp + num[2] * fn + num[3] * tn
    B = den[0] * tp + den[1] * fp + den[2] * fn + den[3] * tn
    lo, hi = metric.lo, metric.hi
    for _ in range(iters):
        mid = (lo + hi) / 2
        g = np.max(np.where(B > 0, A - mid * B, -np.inf))
        lo, hi = (mid, hi) if g > 0 else (lo, mid)
    return (lo + hi) / 2


@pytest.mark.parametrize("name", ["f1", "f2", "jaccard", "accuracy"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_root_matches_bisection_and_brute_force(name, seed):
    gen = GaussianStream(prior=0.2)
    _, y, eta = gen.sample(300, seed)
    m = get_metric(name)
    res = dinkelbach_root(eta, m, labels=y)
    assert res.root == pytest.approx(_bisect_root(eta, y.astype(float), m), abs=1e-10)
    assert res.root == pytest.approx(_brute(eta, y, m), abs=1e-12)
    assert res.iterations <= 20
    # the returned threshold attains the root
    assert m.score(y, (eta > res.threshold).astype(int)) == pytest.approx(res.root)
    value, _ = best_fixed_threshold(eta, y, m)
    assert value == pytest.approx(res.root)


def test_plugin_root_is_the_threshold_rule_at_the_root():
    """With expected counts under probs = scores, the maximiser at lambda* is 1[eta > tau(lambda*)]."""
    _, _, eta = GaussianStream().sample(2000, 3)
    for name in ("f1", "f2", "jaccard"):
        m = get_metric(name)
        res = dinkelbach_root(eta, m, probs=eta)
        assert res.root == pytest.approx(_bisect_root(eta, eta, m), abs=1e-10)
        tau = m.threshold(res.root)
        assert abs(int(np.sum(eta > tau)) - res.k) <= 1


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.7, 0.9, 1.0]), min_size=1, max_size=25),
    st.lists(st.integers(0, 1), min_size=25, max_size=25),
)
def test_best_fixed_threshold_with_ties_matches_brute_force(scores, ys):
    s = np.array(scores)
    y = np.array(ys[: s.size])
    if y.sum() == 0:
        y[0] = 1
    m = get_metric("f1")
    value, thr = best_fixed_threshold(s, y, m)
    assert value == pytest.approx(_brute(s, y, m), abs=1e-12)
    assert m.score(y, (s > thr).astype(int)) == pytest.approx(value)


def test_bad_input():
    with pytest.raises(ValueError, match="exactly one"):
        dinkelbach_root([0.1, 0.2], "f1")
    with pytest.raises(ValueError, match=r"labels in \{0, 1\}"):
        dinkelbach_root([0.1, 0.2], "f1", labels=[0, 3])
    with pytest.raises(ValueError, match=r"probs: expected probabilities in \[0, 1\]"):
        dinkelbach_root([0.1, 0.2], "f1", probs=[0.1, 1.5])
    with pytest.raises(ValueError, match="non-empty"):
        best_fixed_threshold([], [], "f1")
    with pytest.raises(ValueError, match="shape"):
        best_fixed_threshold([0.1, 0.2], [1], "f1")
