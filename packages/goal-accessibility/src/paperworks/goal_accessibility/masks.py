"""Attention masks that close the attention channel, and the crossover turn they predict.

- window closure: query ``i`` sees key ``j`` iff ``0 <= i - j < W`` (its last ``W`` tokens, itself
  included), or ``j < sinks`` (StreamingLLM's attention sinks: the first tokens stay visible);
- force closure: every query at position ``>= from_pos`` loses the goal columns; everything else,
  and every query before ``from_pos``, is unchanged (causal attention otherwise);
- :func:`crossover_turn`: from token counts alone, the first turn at which no position can see any goal
  token under a window of ``W`` (the parametric failure prediction, our reading of the paper).

Masks are boolean "allowed" tensors; :func:`additive` turns one into the additive float form that
Hugging Face's eager attention adds to its scores.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from paperworks.core.validate import nonnegative_int, positive_int

__all__ = ["additive", "causal_mask", "crossover_turn", "force_closure_mask", "window_mask"]


def _positions(q_len: int, k_len: int, q_offset: int | None, device) -> tuple[torch.Tensor, torch.Tensor]:
    off = k_len - q_len if q_offset is None else q_offset
    return torch.arange(q_len, device=device) + off, torch.arange(k_len, device=device)


def causal_mask(
    q_len: int, k_len: int | None = None, *, q_offset: int | None = None, device=None
) -> torch.Tensor:
    """(q_len, k_len) bool: query ``i`` (absolute position ``q_offset + i``) sees keys ``j <= i``."""
    k_len = q_len if k_len is None else k_len
    qi, kj = _positions(q_len, k_len, q_offset, device)
    return kj[None, :] <= qi[:, None]


def window_mask(
    q_len: int,
    window: int,
    *,
    k_len: int | None = None,
    sinks: int = 0,
    q_offset: int | None = None,
    device=None,
) -> torch.Tensor:
    """(q_len, k_len) bool: causal, and each query sees only its last ``window`` keys plus ``sinks``.

    ``q_offset``: the absolute position of the first query (default ``k_len - q_len``, the decoding case).
    """
    window = positive_int(window, "window")
    sinks = nonnegative_int(sinks, "sinks")
    k_len = q_len if k_len is None else k_len
    qi, kj = _positions(q_len, k_len, q_offset, device)
    d = qi[:, None] - kj[None, :]
    return (d >= 0) & ((d < window) | (kj[None, :] < sinks))


def force_closure_mask(
    goal_mask: torch.Tensor, from_pos, *, q_len: int | None = None, q_offset: int | None = None
) -> torch.Tensor:
    """(B, q_len, T) bool: causal, with the goal columns closed for every query at position ``>= from_pos``.

    ``goal_mask``: (B, T) bool; ``from_pos``: an int or a (B,) tensor (per-episode closure position).
    """
    goal_mask = _check_goal_mask(goal_mask)
    B, T = goal_mask.shape
    q_len = T if q_len is None else q_len
    qi, kj = _positions(q_len, T, q_offset, goal_mask.device)
    fp = torch.as_tensor(from_pos, device=goal_mask.device).reshape(-1)
    if fp.numel() not in (1, B):
        raise ValueError(f"from_pos: expected an int or {B} positions, got {fp.numel()}")
    if (fp < 0).any():
        raise ValueError(f"from_pos: expected positions >= 0, got {fp.min().item()}")
    closed = (qi[None, :] >= fp[:, None])[:, :, None] & goal_mask[:, None, :]  # (B, q, T)
    return (kj[None, :] <= qi[:, None])[None] & ~closed


def additive(allowed: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The additive float mask of a bool mask: 0 where allowed, the dtype's most negative value elsewhere."""
    zero = torch.zeros((), dtype=dtype, device=allowed.device)
    return torch.where(allowed, zero, torch.finfo(dtype).min)


def _check_goal_mask(goal_mask) -> torch.Tensor:
    g = torch.as_tensor(goal_mask)
    if g.dtype != torch.bool:
        if g.is_floating_point() or not ((g == 0) | (g == 1)).all():
            raise ValueError(f"goal_mask: expected a bool (or 0/1) tensor, got dtype {g.dtype}")
        g = g.bool()
    if g.ndim != 2:
        raise ValueError(f"goal_mask: expected shape (batch, seq_len), got {tuple(g.shape)}")
    if not g.any(dim=1).all():
        empty = torch.nonzero(~g.any(dim=1)).flatten().tolist()
        raise ValueError(f"goal_mask: expected at least one goal position per row, rows {empty} are empty")
    return g


def crossover_turn(
    token_counts: Sequence[int],
    goal_span: tuple[int, int],
    window: int,
    *,
    sinks: int = 0,
    first_turn_start: int | None = None,
) -> int:
    """The first turn none of whose positions can see a goal token under a window of ``window``.

    ``token_counts``: tokens per turn, turns laid end to end from ``first_turn_start`` (default: the end
    of the goal span); ``goal_span``: (start, end) half-open positions of the goal tokens. A query at
    ``i`` sees the last goal token ``end - 1`` iff ``i - (end - 1) < window``, so turn ``t`` starting at
    ``s_t`` is closed iff ``s_t >= end - 1 + window``. Returns ``len(token_counts)`` when the episode
    ends before that. Raises when the sinks reach the goal span (it never closes).
    """
    counts = np.asarray(token_counts)
    if counts.ndim != 1 or counts.size == 0 or counts.dtype.kind not in "iu" or (counts < 1).any():
        raise ValueError(
            f"token_counts: expected a non-empty 1-d sequence of positive ints, got {token_counts!r}"
        )
    window = positive_int(window, "window")
    sinks = nonnegative_int(sinks, "sinks")
    g0, g1 = (int(goal_span[0]), int(goal_span[1]))
    if not 0 <= g0 < g1:
        raise ValueError(f"goal_span: expected (start, end) with 0 <= start < end, got {goal_span!r}")
    if sinks > g0:
        raise ValueError(f"sinks: {sinks} sink tokens reach the goal span starting at {g0}; it never closes")
    s0 = g1 if first_turn_start is None else nonnegative_int(first_turn_start, "first_turn_start")
    if s0 < g1:
        raise ValueError(f"first_turn_start: expected >= the goal span's end {g1}, got {s0}")
    starts = s0 + np.concatenate([[0], np.cumsum(counts)[:-1]])
    closed = np.flatnonzero(starts >= g1 - 1 + window)
    return int(closed[0]) if closed.size else int(counts.size)
