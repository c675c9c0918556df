"""Full-ranking evaluation of held-out next items: NDCG@k and Recall@k from the rank of the target.

With one relevant item per user (the held-out next item ``t``), ranking all ``N`` items by score
(descending, ties to the lower item id, as :func:`paperworks.core.ndcg_at_k`) puts ``t`` at 0-based rank
``r = #{i: s_i > s_t} + #{i < t: s_i = s_t}``; then ``NDCG@k = 1 / log2(r + 2)`` if ``r < k`` else 0 and
``Recall@k = [r < k]``. Computing ``r`` needs no sort: one comparison pass, vectorised over users.
"""

from __future__ import annotations

import torch

__all__ = ["RankingMetrics", "ndcg_from_ranks", "recall_from_ranks", "target_ranks"]


def target_ranks(scores: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """0-based rank of each target. ``scores``: ``(..., N)`` over items ``0..N-1``; ``targets``: ``(...)``
    column indices (tensors or arrays). Returns ``(...)`` int64."""
    scores, targets = torch.as_tensor(scores), torch.as_tensor(targets, dtype=torch.int64)
    if scores.ndim < 1 or scores.shape[:-1] != targets.shape:
        raise ValueError(
            f"targets: expected shape {tuple(scores.shape[:-1])} (scores without its item axis), "
            f"got {tuple(targets.shape)}"
        )
    n = scores.shape[-1]
    if targets.numel() and (targets.min() < 0 or targets.max() >= n):
        raise ValueError(f"targets: expected column indices in 0..{n - 1}")
    if not torch.isfinite(scores).all():
        raise ValueError("scores: expected finite values (found NaN or inf)")
    return _ranks(scores, targets)


def _ranks(scores: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """:func:`target_ranks` without the input checks (callers guarantee finite scores, valid targets)."""
    n = scores.shape[-1]
    t = targets[..., None]
    st = torch.gather(scores, -1, t)
    idx = torch.arange(n, device=scores.device)
    ahead = (scores > st) | ((scores == st) & (idx < t))
    return ahead.sum(-1)


def ndcg_from_ranks(ranks: torch.Tensor, k: int = 10) -> torch.Tensor:
    """NDCG@k of a single relevant item at 0-based ``ranks`` (float tensor of the same shape)."""
    r = ranks.to(torch.float64)
    return torch.where(r < k, 1.0 / torch.log2(r + 2.0), torch.zeros_like(r)).to(torch.float32)


def recall_from_ranks(ranks: torch.Tensor, k: int = 10) -> torch.Tensor:
    """Recall@k (hit rate) of a single relevant item at 0-based ``ranks``."""
    return (ranks < k).to(torch.float32)


class RankingMetrics:
    """Stateful NDCG@k / Recall@k (torchmetrics-style ``update`` / ``compute`` / ``reset``)."""

    def __init__(self, k: int = 10) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k: expected a positive int, got {k!r}")
        self.k = k
        self.reset()

    def reset(self) -> None:
        self._ndcg, self._recall, self._n = 0.0, 0.0, 0

    def update(self, scores: torch.Tensor, targets: torch.Tensor) -> None:
        """``scores``: ``(B, N)``; ``targets``: ``(B,)`` column indices of the held-out items."""
        r = target_ranks(scores, targets)
        self._ndcg += float(ndcg_from_ranks(r, self.k).sum())
        self._recall += float(recall_from_ranks(r, self.k).sum())
        self._n += r.numel()

    def compute(self) -> dict[str, float]:
        if self._n == 0:
            raise ValueError("RankingMetrics.compute: no update was called (empty batch)")
        return {f"ndcg@{self.k}": self._ndcg / self._n, f"recall@{self.k}": self._recall / self._n}
