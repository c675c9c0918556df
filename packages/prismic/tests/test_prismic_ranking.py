"""Full-ranking NDCG@k / Recall@k from target ranks vs brute force over tie orders and the core's
sort-based metrics; tie handling and history exclusion."""

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.core import ndcg_at_k, recall_at_k
from paperworks.prismic import (
    RankingMetrics,
    history_mask,
    ndcg_from_ranks,
    recall_from_ranks,
    target_ranks,
)
from paperworks.prismic.ranking import MISS_RANK


def _brute_ndcg(scores, target, k, before):
    """NDCG@k with ``before(i)`` deciding whether tied item ``i`` sorts ahead of the target."""
    st_ = scores[target]
    ahead = sum(1 for i, s in enumerate(scores) if s > st_ or (s == st_ and i != target and before(i)))
    return 1.0 / math.log2(ahead + 2) if ahead < k else 0.0


def _expected_ndcg(scores, target, k):
    """Mean NDCG@k over every order of the items tied with the target (uniform tie-breaking)."""
    st_ = scores[target]
    greater = sum(s > st_ for s in scores)
    tied = sum(s == st_ for s in scores) - 1
    vals = [1.0 / math.log2(greater + j + 2) if greater + j < k else 0.0 for j in range(tied + 1)]
    return float(np.mean(vals))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 30), st.integers(1, 12), st.integers(0, 2**31 - 1), st.booleans())
def test_ndcg_matches_brute_force_and_core(n_users, n_items, k, seed, ties):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 4, (n_users, n_items)).astype(float) if ties else rng.normal(size=(n_users, n_items))
    t = rng.integers(0, n_items, n_users)
    st_, tt = torch.as_tensor(s), torch.as_tensor(t)
    pess = ndcg_from_ranks(target_ranks(st_, tt), k).numpy()
    opt = ndcg_from_ranks(target_ranks(st_, tt, ties="optimistic"), k).numpy()
    np.testing.assert_allclose(
        pess, [_brute_ndcg(s[u], t[u], k, lambda i: True) for u in range(n_users)], atol=1e-6
    )
    np.testing.assert_allclose(
        opt, [_brute_ndcg(s[u], t[u], k, lambda i: False) for u in range(n_users)], atol=1e-6
    )
    assert (pess <= opt + 1e-7).all()
    # the core's sort-based metric breaks ties by the lower index: between the two bounds
    rel = np.zeros_like(s)
    rel[np.arange(n_users), t] = 1.0
    core = ndcg_at_k(s, rel, k)
    assert (pess <= core + 1e-6).all() and (core <= opt + 1e-6).all()
    if not ties:  # no ties: every rule agrees with the core
        np.testing.assert_allclose(pess, core, atol=1e-6)
        np.testing.assert_allclose(
            recall_from_ranks(target_ranks(st_, tt), k).numpy(), recall_at_k(s, rel, k)
        )


def test_average_rank_is_the_mean_rank_over_tie_orders():
    s = np.array([[0.5, 0.9, 0.5, 0.5, 0.1]])
    r = target_ranks(torch.as_tensor(s), torch.tensor([2]), ties="average")
    ranks = []
    for order in itertools.permutations([0, 2, 3]):  # the three items tied at 0.5
        ranks.append(1 + order.index(2))
    assert float(r[0]) == pytest.approx(np.mean(ranks))
    assert float(target_ranks(torch.as_tensor(s), torch.tensor([2]))[0]) == 3  # pessimistic
    # NDCG is convex in the rank: NDCG of the mean rank <= the mean NDCG over tie orders (Jensen)
    assert float(ndcg_from_ranks(r, 10)[0]) <= _expected_ndcg(list(s[0]), 2, 10) + 1e-9


def test_collapsed_scores_earn_nothing_whatever_the_target_id():
    """The 0.2 evaluator broke ties by the lower item id, so a constant model scored NDCG > 0 on targets
    with low ids; pessimistic ties rank every target last."""
    scores = torch.zeros(5, 50)
    targets = torch.arange(5)
    assert ndcg_from_ranks(target_ranks(scores, targets), 10).sum() == 0
    assert (target_ranks(scores, targets) == 49).all()


def test_history_exclusion():
    scores = torch.tensor([[0.9, 0.8, 0.7, 0.6], [0.1, 0.2, 0.3, 0.4]])
    mask = history_mask([np.array([1]), np.array([4, 2])], 4)
    assert mask.tolist() == [[True, False, False, False], [False, True, False, True]]
    r = target_ranks(scores, torch.tensor([2, 2]), exclude=mask)
    assert r.tolist() == [1, 0]  # items 1 (row 0) and 4 (row 1) no longer ahead
    r = target_ranks(scores, torch.tensor([0, 1]), exclude=mask)
    assert r.tolist() == [MISS_RANK, MISS_RANK]  # an excluded target is a miss at every k
    assert ndcg_from_ranks(r, 10).sum() == 0


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
    with pytest.raises(TypeError, match="targets: expected integer"):
        target_ranks(torch.zeros(1, 3), torch.tensor([1.7]))  # 0.2 truncated it to 1
    with pytest.raises(ValueError, match="ties"):
        target_ranks(torch.zeros(1, 3), torch.tensor([1]), ties="random")
    with pytest.raises(ValueError, match="exclude"):
        target_ranks(torch.zeros(1, 3), torch.tensor([1]), exclude=torch.zeros(1, 2, dtype=torch.bool))
    with pytest.raises(ValueError, match="empty batch"):
        RankingMetrics().compute()
    for k in (0, -1):
        with pytest.raises(ValueError, match="k: expected an int >= 1"):
            ndcg_from_ranks(torch.tensor([0]), k)
    with pytest.raises(TypeError, match="k: expected an int"):
        recall_from_ranks(torch.tensor([0]), 2.5)
    with pytest.raises(ValueError, match="ranks: expected finite"):
        ndcg_from_ranks(torch.tensor([float("nan")]))
    with pytest.raises(ValueError, match="ranks: expected 0-based ranks >= 0"):
        recall_from_ranks(torch.tensor([-1]))
