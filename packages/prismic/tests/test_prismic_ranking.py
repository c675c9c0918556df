"""Full-ranking NDCG@k / Recall@k from target ranks vs the core's sort-based metrics and a brute force."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.core import ndcg_at_k, recall_at_k
from paperworks.prismic import RankingMetrics, ndcg_from_ranks, recall_from_ranks, target_ranks


def _brute_ndcg(scores, target, k):
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))  # ties: lower index first
    for pos, i in enumerate(order[:k]):
        if i == target:
            return 1.0 / math.log2(pos + 2)  # ideal DCG of one relevant item is 1
    return 0.0


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 30), st.integers(1, 12), st.integers(0, 2**31 - 1), st.booleans())
def test_ndcg_matches_brute_force_and_core(n_users, n_items, k, seed, ties):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 4, (n_users, n_items)).astype(float) if ties else rng.normal(size=(n_users, n_items))
    t = rng.integers(0, n_items, n_users)
    ranks = target_ranks(torch.as_tensor(s), torch.as_tensor(t))
    ours = ndcg_from_ranks(ranks, k).numpy()
    brute = np.array([_brute_ndcg(list(s[u]), t[u], k) for u in range(n_users)])
    rel = np.zeros_like(s)
    rel[np.arange(n_users), t] = 1.0
    np.testing.assert_allclose(ours, brute, atol=1e-6)
    np.testing.assert_allclose(ours, ndcg_at_k(s, rel, k), atol=1e-6)
    np.testing.assert_allclose(recall_from_ranks(ranks, k).numpy(), recall_at_k(s, rel, k), atol=1e-6)


def test_stateful_metric_accumulates_batches():
    s = torch.tensor([[0.1, 0.9, 0.5], [0.3, 0.2, 0.1]])
    t = torch.tensor([1, 2])
    m = RankingMetrics(k=2)
    m.update(s[:1], t[:1])
    m.update(s[1:], t[1:])
    out = m.compute()
    assert out["ndcg@2"] == pytest.approx(0.5)  # first at rank 0 (1.0), second at rank 2 (0)
    assert out["recall@2"] == pytest.approx(0.5)


def test_ranking_errors():
    with pytest.raises(ValueError, match="targets"):
        target_ranks(torch.zeros(2, 3), torch.tensor([0, 3]))
    with pytest.raises(ValueError, match="scores"):
        target_ranks(torch.tensor([[float("nan"), 0.0]]), torch.tensor([0]))
    with pytest.raises(ValueError, match="empty batch"):
        RankingMetrics().compute()
