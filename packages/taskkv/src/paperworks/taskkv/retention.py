"""Step-level KV retention on plain tensors: validation, exact-budget step selection, gathering.

A *step* is a contiguous token span (one observation/action turn of an agent trajectory); steps are
given by ``offsets``, a strictly increasing integer sequence with ``offsets[0] == 0`` and
``offsets[-1] == seq_len`` (step ``s`` holds tokens ``offsets[s]:offsets[s+1]``). A retention policy
scores steps, and :func:`select_tokens` keeps whole steps in score order until the token budget is
spent, filling the remainder exactly with the most recent tokens of the next step, so that the kept
cache has exactly ``floor(budget * seq_len)`` tokens. Pinned steps (the instruction, the current
step) are always kept. The same tokens are kept in every layer and head (a step-level policy).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

__all__ = [
    "check_budget",
    "check_offsets",
    "contiguous_scores",
    "gather_tokens",
    "n_keep_for",
    "retain_kv",
    "select_tokens",
]


def check_budget(budget: float) -> float:
    """Validate a KV budget, the kept fraction of the cache, in (0, 1]."""
    if isinstance(budget, bool) or not isinstance(budget, int | float | np.floating | np.integer):
        raise TypeError(f"budget: expected a float in (0, 1], got {type(budget).__name__}")
    b = float(budget)
    if not math.isfinite(b) or not 0.0 < b <= 1.0:
        raise ValueError(f"budget: expected a fraction of the cache in (0, 1], got {budget!r}")
    return b


def n_keep_for(budget: float, seq_len: int) -> int:
    """Number of tokens kept at ``budget``: ``max(1, floor(budget * seq_len))`` (kvpress's convention)."""
    b = check_budget(budget)
    if seq_len < 1:
        raise ValueError(f"seq_len: expected a positive length, got {seq_len}")
    return max(1, min(seq_len, math.floor(b * seq_len + 1e-9)))


def check_offsets(offsets, seq_len: int) -> np.ndarray:
    """Validate step boundaries against a sequence length; returns an int64 array of shape (n_steps + 1,).

    Raises ValueError unless ``offsets`` is 1-D, strictly increasing, starts at 0 and ends at
    ``seq_len`` (the steps must cover the sequence exactly).
    """
    if isinstance(offsets, torch.Tensor):
        offsets = offsets.detach().cpu().numpy()
    arr = np.asarray(offsets)
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(
            f"offsets: expected a 1-D sequence of at least 2 step boundaries, got shape {arr.shape}"
        )
    if not np.issubdtype(arr.dtype, np.integer):
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError("offsets: expected integer step boundaries")
    arr = arr.astype(np.int64)
    if arr[0] != 0 or arr[-1] != seq_len:
        raise ValueError(
            f"offsets: step boundaries must cover the sequence, from 0 to seq_len={seq_len}; "
            f"got {int(arr[0])} .. {int(arr[-1])}"
        )
    if np.any(np.diff(arr) <= 0):
        raise ValueError("offsets: expected strictly increasing step boundaries (no empty steps)")
    return arr


def _pinned(pinned_steps: Sequence[int], n_steps: int) -> list[int]:
    out = []
    for p in pinned_steps:
        if isinstance(p, bool) or not isinstance(p, int | np.integer):
            raise TypeError(f"pinned_steps: expected step indices (ints), got {p!r}")
        q = int(p) + n_steps if p < 0 else int(p)
        if not 0 <= q < n_steps:
            raise ValueError(f"pinned_steps: step {p} is out of range for {n_steps} steps")
        out.append(q)
    return sorted(set(out))


def contiguous_scores(n_steps: int, batch: int | None = None) -> torch.Tensor:
    """Contiguous (recency) retention scores, later steps higher; shape (n_steps,) or (batch, n_steps)."""
    s = torch.arange(n_steps, dtype=torch.float32)
    return s if batch is None else s.expand(batch, n_steps).clone()


def select_tokens(
    step_scores: torch.Tensor, offsets, n_keep: int, pinned_steps: Sequence[int] = ()
) -> torch.Tensor:
    """Indices of the kept tokens, ascending, shape (batch, n_keep) (or (n_keep,) for 1-D scores).

    Steps are taken in decreasing score (ties: the later step first), pinned steps before all others;
    whole steps are kept while they fit and the step at the budget boundary contributes its most
    recent tokens, so exactly ``n_keep`` tokens are kept. Vectorised over the batch.
    """
    if not isinstance(step_scores, torch.Tensor):
        raise TypeError(f"step_scores: expected a torch.Tensor, got {type(step_scores).__name__}")
    squeeze = step_scores.ndim == 1
    scores = step_scores[None] if squeeze else step_scores
    if scores.ndim != 2:
        raise ValueError(
            f"step_scores: expected shape (n_steps,) or (batch, n_steps), got {tuple(step_scores.shape)}"
        )
    if scores.shape[0] == 0:
        raise ValueError("step_scores: expected a non-empty batch")
    if not torch.isfinite(scores).all():
        raise ValueError("step_scores: contains NaN or inf")
    off = np.asarray(offsets, dtype=np.int64)
    n_steps, seq_len = len(off) - 1, int(off[-1])
    if scores.shape[1] != n_steps:
        raise ValueError(f"step_scores: expected {n_steps} steps (from offsets), got {scores.shape[1]}")
    if not 1 <= n_keep <= seq_len:
        raise ValueError(f"n_keep: expected 1 <= n_keep <= {seq_len}, got {n_keep}")
    pins = _pinned(pinned_steps, n_steps)
    lengths = np.diff(off)
    if lengths[pins].sum() > n_keep:
        raise ValueError(
            f"budget: the pinned steps {pins} hold {int(lengths[pins].sum())} tokens, more than the "
            f"{n_keep} tokens the budget allows"
        )
    b = scores.shape[0]
    dev = scores.device
    # rank steps: pinned first, then by score, ties broken towards recency
    step_idx = torch.arange(n_steps, device=dev, dtype=torch.float64)
    key = scores.detach().to(torch.float64)
    spread = float((key.max() - key.min()).abs()) + 1.0
    key = key + step_idx * (1e-9 * spread)
    if pins:
        key[:, pins] = key.max() + 10.0 * spread
    order = torch.argsort(key, dim=1, descending=True)  # (b, n_steps)
    rank = torch.empty_like(order)
    rank.scatter_(1, order, torch.arange(n_steps, device=dev).expand(b, n_steps))
    token_step = torch.as_tensor(np.repeat(np.arange(n_steps), lengths), device=dev)
    step_end = torch.as_tensor(off[1:], device=dev)[token_step]
    back = step_end - 1 - torch.arange(seq_len, device=dev)  # 0 for the last token of its step
    priority = rank[:, token_step] * (seq_len + 1) + back[None]
    kept = torch.topk(-priority, n_keep, dim=1).indices
    kept = torch.sort(kept, dim=1).values
    return kept[0] if squeeze else kept


def gather_tokens(x: torch.Tensor, kept: torch.Tensor) -> torch.Tensor:
    """Keep tokens ``kept`` (batch, n_keep) along the sequence axis of ``x`` (batch, heads, seq, d)."""
    idx = kept[:, None, :, None].expand(x.shape[0], x.shape[1], kept.shape[1], x.shape[3])
    return x.gather(2, idx)


def _as_layers(name: str, x) -> tuple[list[torch.Tensor], bool, bool]:
    """Normalise to a list of (batch, heads, seq, d) tensors; returns (layers, was_tensor, was_unbatched)."""
    if isinstance(x, torch.Tensor):
        if x.ndim not in (4, 5):
            raise ValueError(
                f"{name}: expected (layers, heads, seq, d) or (layers, batch, heads, seq, d), "
                f"got {tuple(x.shape)}"
            )
        layers, was_tensor = list(x.unbind(0)), True
    elif isinstance(x, list | tuple) and x and all(isinstance(t, torch.Tensor) for t in x):
        layers, was_tensor = list(x), False
    else:
        raise TypeError(f"{name}: expected a tensor or a non-empty list of per-layer tensors")
    ndims = {t.ndim for t in layers}
    if len(ndims) != 1 or ndims.pop() not in (3, 4):
        raise ValueError(f"{name}: expected every layer as (heads, seq, d) or (batch, heads, seq, d)")
    unbatched = layers[0].ndim == 3
    if unbatched:
        layers = [t[None] for t in layers]
    return layers, was_tensor, unbatched


def retain_kv(
    keys,
    values,
    offsets,
    budget: float,
    step_scores: torch.Tensor,
    pinned_steps: Sequence[int] = (),
):
    """Prune a KV cache to ``budget`` by whole steps (TaskKV's retention, Sec. "streaming retention").

    Parameters
    ----------
    keys, values : tensor (layers, heads, seq, d) / (layers, batch, heads, seq, d), or a list of per-layer
        tensors (heads, seq, d) / (batch, heads, seq, d) (e.g. a ``transformers`` cache's layers).
    offsets : step boundaries, shape (n_steps + 1,), covering ``0 .. seq``.
    budget : kept fraction of the cache, in (0, 1]; exactly ``n_keep_for(budget, seq)`` tokens are kept.
    step_scores : (n_steps,) or (batch, n_steps); higher is kept first.
    pinned_steps : steps that are never dropped (e.g. the instruction and the current step).

    Returns ``(keys, values, kept)`` in the input's layout with ``seq`` replaced by ``n_keep`` and
    ``kept`` the kept token indices (batch, n_keep) (or (n_keep,) unbatched).
    """
    kl, k_tensor, k_unb = _as_layers("keys", keys)
    vl, _, v_unb = _as_layers("values", values)
    if len(kl) != len(vl):
        raise ValueError(f"values: expected {len(kl)} layers like keys, got {len(vl)}")
    if k_unb != v_unb:
        raise ValueError("values: batched/unbatched layout differs from keys")
    ref = kl[0].shape
    for i, (k, v) in enumerate(zip(kl, vl, strict=True)):
        if k.shape[:3] != ref[:3]:
            raise ValueError(
                f"keys: layer {i} has shape {tuple(k.shape)}, expected batch/heads/seq {tuple(ref[:3])}"
            )
        if v.shape[:3] != k.shape[:3]:
            raise ValueError(
                f"values: layer {i} has batch/heads/seq {tuple(v.shape[:3])}, keys have {tuple(k.shape[:3])}"
            )
    batch, _, seq, _ = ref
    off = check_offsets(offsets, seq)
    n_keep = n_keep_for(budget, seq)
    scores = (
        step_scores
        if step_scores.ndim == 2
        else step_scores.expand(batch, -1)
        if step_scores.ndim == 1
        else step_scores
    )
    if scores.ndim == 2 and scores.shape[0] != batch:
        raise ValueError(f"step_scores: expected batch {batch}, got {scores.shape[0]}")
    kept = select_tokens(scores.to(kl[0].device), off, n_keep, pinned_steps)
    new_k = [gather_tokens(k, kept) for k in kl]
    new_v = [gather_tokens(v, kept) for v in vl]
    if k_unb:
        new_k, new_v, kept = [t[0] for t in new_k], [t[0] for t in new_v], kept[0]
    if k_tensor:
        return torch.stack(new_k), torch.stack(new_v), kept
    return new_k, new_v, kept
