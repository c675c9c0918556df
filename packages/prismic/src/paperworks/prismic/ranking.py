"""Full-ranking evaluation of held-out next items: NDCG@k and Recall@k from the rank of the target.

With one relevant item per user (the held-out next item ``t``), ranking all ``N`` items by score puts
``t`` at a 0-based rank that depends on how ties with ``t``'s score are broken. With
``g = #{i: s_i > s_t}`` and ``e = #{i != t: s_i = s_t}``:

* ``ties="pessimistic"`` (default): ``r = g + e``, the target after every item of equal score, so a
  model whose scores collapse to a constant earns nothing (``r = N - 1``);
* ``ties="average"``: ``r = g + e / 2``, the mean rank over uniformly random tie-breaking (a float);
* ``ties="optimistic"``: ``r = g``, the target first among its ties (an upper bound).

Then ``NDCG@k = 1 / log2(r + 2)`` if ``r < k`` else 0 and ``Recall@k = [r < k]``. Computing ``r``
needs no sort: one comparison pass, vectorised over users.

``exclude``: an optional boolean mask ``(..., N)`` of items removed from the ranking (their scores set
to ``-inf``), e.g. a user's history items (:func:`history_mask`) for "unseen items only" evaluation.
RecBole's full-sort evaluation masks the training history for *general* recommenders only; for
sequential models (``MODEL_TYPE == SEQUENTIAL``, its SASRec included) it masks nothing, so repeat
consumption of a history item counts as a hit, as here by default. An excluded target is not ranked at
all: it gets rank :data:`MISS_RANK` (a miss at every ``k``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from paperworks.core.validate import one_of, positive_int

__all__ = [
    "MISS_RANK",
    "TIES",
    "RankingMetrics",
    "history_mask",
    "ndcg_from_ranks",
    "recall_from_ranks",
    "target_ranks",
]

TIES = ("pessimistic", "average", "optimistic")
MISS_RANK = 2**62  # the rank of a target excluded from the ranking: beyond every cut-off


def _as_tensor(x: object, name: str) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}: expected a tensor or array, got {type(x).__name__} ({e})") from None
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{name}: expected a numeric tensor or array, got dtype {a.dtype}")
    return torch.as_tensor(a)


def target_ranks(
    scores: torch.Tensor,
    targets: torch.Tensor,
    *,
    ties: str = "pessimistic",
    exclude: torch.Tensor | None = None,
) -> torch.Tensor:
    """0-based rank of each target among all items (module docstring).

    ``scores``: ``(..., N)`` finite scores over items ``0..N-1``; ``targets``: ``(...)`` integer column
    indices; ``ties``: one of :data:`TIES`; ``exclude``: optional bool mask ``(..., N)``. Returns
    ``(...)`` int64 (float64 for ``ties="average"``); an excluded target gets rank :data:`MISS_RANK`.
    """
    ties = one_of(ties, "ties", TIES)
    scores, targets = _as_tensor(scores, "scores"), _as_tensor(targets, "targets")
    if not scores.is_floating_point():
        raise TypeError(f"scores: expected a floating-point tensor, got dtype {scores.dtype}")
    if targets.is_floating_point() or targets.is_complex() or targets.dtype == torch.bool:
        raise TypeError(f"targets: expected integer column indices, got dtype {targets.dtype}")
    targets = targets.to(device=scores.device, dtype=torch.int64)
    if scores.ndim < 1 or scores.shape[-1] == 0 or scores.shape[:-1] != targets.shape:
        raise ValueError(
            f"targets: expected shape {tuple(scores.shape[:-1])} (scores without its item axis), "
            f"got {tuple(targets.shape)} for scores of shape {tuple(scores.shape)}"
        )
    n = scores.shape[-1]
    if targets.numel() and (targets.min() < 0 or targets.max() >= n):
        raise ValueError(f"targets: expected column indices in 0..{n - 1}")
    if not torch.isfinite(scores).all():
        raise ValueError("scores: expected finite values (found NaN or inf)")
    if exclude is not None:
        exclude = _as_tensor(exclude, "exclude")
        if exclude.dtype != torch.bool or exclude.shape != scores.shape:
            raise ValueError(
                f"exclude: expected a bool mask of shape {tuple(scores.shape)}, "
                f"got {exclude.dtype} {tuple(exclude.shape)}"
            )
        exclude = exclude.to(scores.device)
    return _ranks(scores, targets, ties=ties, exclude=exclude)


def _ranks(
    scores: torch.Tensor,
    targets: torch.Tensor,
    *,
    ties: str = "pessimistic",
    exclude: torch.Tensor | None = None,
) -> torch.Tensor:
    """:func:`target_ranks` without the input checks (callers guarantee finite scores, valid targets)."""
    t = targets[..., None]
    if exclude is not None:
        scores = scores.masked_fill(exclude, float("-inf"))
    st = torch.gather(scores, -1, t)
    if ties == "pessimistic":  # every other item with a score >= the target's is ahead of it
        ranks = (scores >= st).sum(-1) - 1
    elif ties == "optimistic":
        ranks = (scores > st).sum(-1)
    else:
        greater = (scores > st).sum(-1)
        equal = (scores == st).sum(-1) - 1  # other items tied with the target
        ranks = greater.to(torch.float64) + equal / 2.0
    if exclude is not None:
        hit = torch.gather(exclude, -1, t).squeeze(-1)
        ranks = torch.where(hit, torch.full_like(ranks, MISS_RANK), ranks)
    return ranks


def history_mask(histories: Sequence[np.ndarray], n_items: int) -> torch.Tensor:
    """``(U, N)`` bool mask of the items each history contains (column ``i - 1`` = item ``i``), for
    ``target_ranks(..., exclude=...)``."""
    n_items = positive_int(n_items, "n_items")
    if len(histories) == 0:
        raise ValueError("histories: expected at least one history (empty batch)")
    mask = torch.zeros(len(histories), n_items, dtype=torch.bool)
    for u, h in enumerate(histories):
        h = np.asarray(h)
        if h.ndim != 1 or not np.issubdtype(h.dtype, np.integer):
            raise ValueError(f"histories[{u}]: expected a 1-d sequence of integer item ids")
        if h.size and (h.min() < 1 or h.max() > n_items):
            raise ValueError(f"histories[{u}]: unknown item id (expected ids in 1..{n_items})")
        mask[u, torch.as_tensor(h - 1)] = True
    return mask


def _check_ranks(ranks: object, k: object) -> tuple[torch.Tensor, int]:
    k = positive_int(k, "k")
    r = _as_tensor(ranks, "ranks")
    if r.dtype == torch.bool:
        raise TypeError("ranks: expected numeric 0-based ranks, got dtype torch.bool")
    r = r.to(torch.float64)
    if not torch.isfinite(r).all():
        raise ValueError("ranks: expected finite ranks (found NaN or inf)")
    if r.numel() and r.min() < 0:
        raise ValueError(f"ranks: expected 0-based ranks >= 0, got min {float(r.min())}")
    return r, k


def ndcg_from_ranks(ranks: torch.Tensor, k: int = 10) -> torch.Tensor:
    """NDCG@k of a single relevant item at 0-based ``ranks`` (>= 0, finite; ints or, for average tie
    handling, floats). Returns a float32 tensor of the same shape."""
    r, k = _check_ranks(ranks, k)
    return _ndcg(r, k)


def _ndcg(r: torch.Tensor, k: int) -> torch.Tensor:
    r = r.to(torch.float64)
    return torch.where(r < k, 1.0 / torch.log2(r + 2.0), torch.zeros_like(r)).to(torch.float32)


def recall_from_ranks(ranks: torch.Tensor, k: int = 10) -> torch.Tensor:
    """Recall@k (hit rate) of a single relevant item at 0-based ``ranks`` (>= 0, finite)."""
    r, k = _check_ranks(ranks, k)
    return (r < k).to(torch.float32)


class RankingMetrics:
    """Stateful NDCG@k / Recall@k (torchmetrics-style ``update`` / ``compute`` / ``reset``).

    ``ties``: see :func:`target_ranks`; ``update(scores, targets, exclude=None)``.
    """

    def __init__(self, k: int = 10, *, ties: str = "pessimistic") -> None:
        self.k = positive_int(k, "k")
        self.ties = one_of(ties, "ties", TIES)
        self.reset()

    def reset(self) -> None:
        self._ndcg, self._recall, self._n = 0.0, 0.0, 0

    def update(
        self, scores: torch.Tensor, targets: torch.Tensor, exclude: torch.Tensor | None = None
    ) -> None:
        """``scores``: ``(B, N)``; ``targets``: ``(B,)`` column indices of the held-out items."""
        r = target_ranks(scores, targets, ties=self.ties, exclude=exclude)
        self._ndcg += float(_ndcg(r, self.k).sum())
        self._recall += float((r < self.k).sum())
        self._n += r.numel()

    def compute(self) -> dict[str, float]:
        if self._n == 0:
            raise ValueError("RankingMetrics.compute: no update was called (empty batch)")
        return {f"ndcg@{self.k}": self._ndcg / self._n, f"recall@{self.k}": self._recall / self._n}
