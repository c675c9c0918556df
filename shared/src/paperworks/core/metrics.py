"""Small ranking and spectrum metrics used by several packages.

Ranking metrics take ``scores`` and ``relevance`` of shape ``(n_queries, n_items)``; items are ranked
by descending score, ties broken by the lower item index (a stable sort), and the result is one value
per query, shape ``(n_queries,)``. Average with ``.mean()``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["dcg_at_k", "effective_rank", "ndcg_at_k", "recall_at_k"]


def _check_ranking_inputs(scores: ArrayLike, relevance: ArrayLike, k: int) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=float)
    r = np.asarray(relevance, dtype=float)
    if s.ndim != 2:
        raise ValueError(f"scores: expected shape (n_queries, n_items), got {s.shape}")
    if r.shape != s.shape:
        raise ValueError(f"relevance: expected the shape of scores {s.shape}, got {r.shape}")
    if s.shape[1] == 0:
        raise ValueError("scores: expected at least one item")
    if not np.isfinite(s).all():
        raise ValueError("scores: expected finite values (found NaN or inf)")
    if not np.isfinite(r).all() or (r < 0).any():
        raise ValueError("relevance: expected finite, non-negative values")
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k: expected a positive int, got {k!r}")
    return s, r


def _top_k(s: np.ndarray, k: int) -> np.ndarray:
    """Item indices of the k best scores per row, best first, ties to the lower index. (n, min(k, m))."""
    return np.argsort(-s, axis=1, kind="stable")[:, :k]


def dcg_at_k(scores: ArrayLike, relevance: ArrayLike, k: int, gain: str = "linear") -> np.ndarray:
    """Discounted cumulative gain: sum over the top k of g(rel) / log2(rank + 1), rank from 1.

    ``gain``: ``"linear"`` (g(r) = r) or ``"exp"`` (g(r) = 2**r - 1, Burges et al. 2005).
    """
    s, r = _check_ranking_inputs(scores, relevance, k)
    return _dcg(_top_k(s, k), r, gain)


def _dcg(top: np.ndarray, r: np.ndarray, gain: str) -> np.ndarray:
    if gain not in ("linear", "exp"):
        raise ValueError(f"gain: expected 'linear' or 'exp', got {gain!r}")
    rel = np.take_along_axis(r, top, axis=1)
    g = rel if gain == "linear" else np.expm1(rel * np.log(2.0))
    discounts = 1.0 / np.log2(np.arange(2, top.shape[1] + 2))
    return g @ discounts


def ndcg_at_k(scores: ArrayLike, relevance: ArrayLike, k: int, gain: str = "linear") -> np.ndarray:
    """DCG@k divided by the DCG@k of the ideal ranking; 0 for a query with no relevant item."""
    s, r = _check_ranking_inputs(scores, relevance, k)
    dcg = _dcg(_top_k(s, k), r, gain)
    ideal = _dcg(_top_k(r, k), r, gain)
    out = np.zeros_like(dcg)
    np.divide(dcg, ideal, out=out, where=ideal > 0)
    return out


def recall_at_k(scores: ArrayLike, relevance: ArrayLike, k: int) -> np.ndarray:
    """Share of a query's relevant items (relevance > 0) found in its top k; 0 when it has none."""
    s, r = _check_ranking_inputs(scores, relevance, k)
    hit = np.take_along_axis(r > 0, _top_k(s, k), axis=1).sum(axis=1).astype(float)
    n_rel = (r > 0).sum(axis=1)
    out = np.zeros_like(hit)
    np.divide(hit, n_rel, out=out, where=n_rel > 0)
    return out


def effective_rank(x: ArrayLike, *, singular_values: bool = False, eps: float = 1e-12) -> float:
    """Effective rank of Roy & Vetterli (2007): exp of the Shannon entropy of p_i = s_i / sum(s).

    ``x``: a matrix of shape (n, d), or, with ``singular_values=True``, its singular values (r,).
    Ranges from 1 (rank one) to min(n, d) (all singular values equal).
    """
    a = np.asarray(x, dtype=float)
    if singular_values:
        if a.ndim != 1 or a.size == 0 or (a < 0).any():
            raise ValueError(f"x: expected non-negative singular values of shape (r,), got shape {a.shape}")
        s = a
    else:
        if a.ndim != 2 or 0 in a.shape:
            raise ValueError(f"x: expected a non-empty matrix of shape (n, d), got shape {a.shape}")
        s = np.linalg.svd(a, compute_uv=False)
    if not np.isfinite(s).all():
        raise ValueError("x: expected finite values (found NaN or inf)")
    total = s.sum()
    if total <= eps:
        raise ValueError("x: effective rank is undefined for a zero matrix")
    p = s / total
    p = p[p > 0]
    return float(np.exp(-(p * np.log(p)).sum()))
