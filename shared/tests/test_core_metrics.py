"""Ranking and spectrum metrics against brute-force definitions written independently."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from paperworks.core import dcg_at_k, effective_rank, ndcg_at_k, recall_at_k


def _brute_rank(scores):
    """Item indices best first: higher score first, then lower index (explicit pairwise comparison)."""
    idx = list(range(len(scores)))
    for i in range(len(idx)):
        for j in range(len(idx) - 1 - i):
            a, b = idx[j], idx[j + 1]
            if scores[b] > scores[a]:
                idx[j], idx[j + 1] = b, a
    return idx


def _brute_ndcg(scores, rel, k, gain="linear"):
    g = (lambda r: r) if gain == "linear" else (lambda r: 2.0**r - 1.0)
    order = _brute_rank(scores)[:k]
    dcg = sum(g(rel[i]) / math.log2(pos + 2) for pos, i in enumerate(order))
    ideal_rel = sorted(rel, reverse=True)[:k]
    idcg = sum(g(r) / math.log2(pos + 2) for pos, r in enumerate(ideal_rel))
    return dcg / idcg if idcg > 0 else 0.0


def _brute_recall(scores, rel, k):
    top = set(_brute_rank(scores)[:k])
    relevant = [i for i, r in enumerate(rel) if r > 0]
    return sum(i in top for i in relevant) / len(relevant) if relevant else 0.0


grid = st.integers(1, 6).flatmap(
    lambda m: st.tuples(
        arrays(np.float64, (3, m), elements=st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0])),
        arrays(np.float64, (3, m), elements=st.sampled_from([0.0, 0.0, 1.0, 2.0, 3.0])),
        st.integers(1, m + 2),
    )
)


@settings(max_examples=150, deadline=None)
@given(grid, st.sampled_from(["linear", "exp"]))
def test_ndcg_matches_brute_force_with_ties(case, gain):
    scores, rel, k = case
    got = ndcg_at_k(scores, rel, k, gain=gain)
    want = [_brute_ndcg(list(s), list(r), k, gain) for s, r in zip(scores, rel)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert np.all((got >= 0) & (got <= 1 + 1e-12))


@settings(max_examples=150, deadline=None)
@given(grid)
def test_recall_matches_brute_force(case):
    scores, rel, k = case
    got = recall_at_k(scores, rel, k)
    want = [_brute_recall(list(s), list(r), k) for s, r in zip(scores, rel)]
    np.testing.assert_allclose(got, want)


def test_ndcg_known_values():
    # one relevant item at rank 2: DCG = 1/log2(3), ideal = 1
    np.testing.assert_allclose(ndcg_at_k([[0.9, 0.8, 0.1]], [[0, 1, 0]], 3), [1 / math.log2(3)])
    # relevant item outside the top k
    np.testing.assert_allclose(ndcg_at_k([[0.9, 0.8, 0.1]], [[0, 0, 1]], 2), [0.0])
    exp_gain = dcg_at_k([[3.0, 2.0, 1.0]], [[3, 2, 0]], 2, gain="exp")
    np.testing.assert_allclose(exp_gain, [7 + 3 / math.log2(3)])


def test_effective_rank_extremes_and_brute_force():
    assert effective_rank(np.eye(5)) == pytest.approx(5.0)
    rank_one = np.outer(np.arange(1, 5), np.arange(1, 4))
    assert effective_rank(rank_one) == pytest.approx(1.0, abs=1e-6)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(30, 8))
    s = np.linalg.eigvalsh(x.T @ x) ** 0.5  # singular values by another route
    p = s / s.sum()
    want = math.exp(-sum(pi * math.log(pi) for pi in p))
    assert effective_rank(x) == pytest.approx(want, rel=1e-9)
    assert effective_rank(s, singular_values=True) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: ndcg_at_k([1, 2], [1, 0], 1), "scores: expected shape"),
        (lambda: ndcg_at_k([[1, 2]], [[1, 0, 0]], 1), "relevance: expected the shape"),
        (lambda: ndcg_at_k([[1, np.nan]], [[1, 0]], 1), "scores: expected finite"),
        (lambda: ndcg_at_k([[1, 2]], [[-1, 0]], 1), "relevance: expected finite, non-negative"),
        (lambda: ndcg_at_k([[1, 2]], [[1, 0]], 0), "k: expected a positive int"),
        (lambda: ndcg_at_k([[1, 2]], [[1, 0]], 1, gain="log"), "gain: expected"),
        (lambda: recall_at_k(np.zeros((2, 0)), np.zeros((2, 0)), 1), "at least one item"),
        (lambda: effective_rank(np.zeros((3, 3))), "zero matrix"),
        (lambda: effective_rank(np.ones(3)), "expected a non-empty matrix"),
        (lambda: effective_rank([-1.0, 2.0], singular_values=True), "non-negative singular values"),
    ],
)
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()
