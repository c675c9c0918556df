"""Step-level KV retention on plain tensors: step layouts, exact-budget step selection, gathering.

A *step* is a contiguous token span (one observation/action turn of an agent trajectory); steps are
given by ``offsets``, a strictly increasing integer sequence with ``offsets[0] == 0`` and
``offsets[-1] == seq_len`` (step ``s`` holds tokens ``offsets[s]:offsets[s+1]``). ``offsets`` is
either shared by every row of a batch (1-D) or given per row (a 2-D array, or a list of 1-D
sequences when rows have different numbers of steps): :func:`step_layout` turns either form into a
:class:`StepLayout`, the per-token step index of every row.

A retention policy scores steps, and :func:`select_tokens` keeps whole steps in score order until
the token budget is spent, filling the remainder exactly with the most recent tokens of the next
step, so that the kept cache has exactly ``n_keep`` tokens. Pinned steps (the instruction, the
current step) are always kept. The same tokens are kept in every layer and head (a step-level
policy). :func:`token_priority` gives the same choice as per-token scores, so that any top-k over
tokens (kvpress's ``ScorerPress``) keeps exactly what :func:`select_tokens` keeps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ._validation import as_tensor, check_tensor, validate

__all__ = [
    "StepLayout",
    "check_budget",
    "check_offsets",
    "contiguous_scores",
    "gather_tokens",
    "n_keep_for",
    "retain_kv",
    "select_tokens",
    "seq_len_of",
    "step_layout",
    "token_priority",
]


def check_budget(budget: float) -> float:
    """Validate a KV budget, the kept fraction of the cache, in (0, 1]."""
    return validate.fraction(budget, "budget", open_low=True)


def n_keep_for(budget: float, seq_len: int) -> int:
    """Number of tokens kept at ``budget``: ``max(1, floor(budget * seq_len))`` (kvpress's convention)."""
    b = check_budget(budget)
    n = validate.positive_int(seq_len, "seq_len")
    return max(1, min(n, math.floor(b * n + 1e-9)))


def _int_array(offsets: object, name: str) -> np.ndarray:
    if isinstance(offsets, torch.Tensor):
        offsets = offsets.detach().cpu().numpy()
    try:
        arr = np.asarray(offsets)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected integer step boundaries, got {type(offsets).__name__}") from None
    if arr.dtype == object or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name}: expected integer step boundaries, got dtype {arr.dtype}")
    if arr.dtype.kind == "f" and (not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr))):
        raise ValueError(f"{name}: expected integer step boundaries")
    return arr.astype(np.int64)


def check_offsets(offsets, seq_len: int) -> np.ndarray:
    """Validate one row's step boundaries against a sequence length; returns int64 (n_steps + 1,).

    Raises ValueError unless ``offsets`` is 1-D, strictly increasing, starts at 0 and ends at
    ``seq_len`` (the steps must cover the sequence exactly).
    """
    seq_len = validate.positive_int(seq_len, "seq_len")
    arr = _int_array(offsets, "offsets")
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(
            f"offsets: expected a 1-D sequence of at least 2 step boundaries, got shape {arr.shape}"
        )
    if arr[0] != 0 or arr[-1] != seq_len:
        raise ValueError(
            f"offsets: step boundaries must cover the sequence, from 0 to seq_len={seq_len}; "
            f"got {int(arr[0])} .. {int(arr[-1])}"
        )
    if np.any(np.diff(arr) <= 0):
        raise ValueError("offsets: expected strictly increasing step boundaries (no empty steps)")
    return arr


@dataclass(frozen=True)
class StepLayout:
    """The steps of a batch. ``offsets``: per row, int64 (n_steps_b + 1,); ``token_step`` (batch, seq):
    the step of every token; ``valid`` (batch, max_steps): which step slots exist in each row;
    ``ends`` (batch, max_steps): each step's end offset (0 for missing slots); ``shared``: one
    layout for every row."""

    offsets: tuple[np.ndarray, ...]
    token_step: torch.Tensor
    valid: torch.Tensor
    ends: torch.Tensor
    shared: bool

    @property
    def batch(self) -> int:
        return int(self.token_step.shape[0])

    @property
    def seq_len(self) -> int:
        return int(self.token_step.shape[1])

    @property
    def max_steps(self) -> int:
        return int(self.valid.shape[1])

    @property
    def n_steps(self) -> torch.Tensor:
        """(batch,) number of steps of each row."""
        return self.valid.sum(1)

    @property
    def lengths(self) -> torch.Tensor:
        """(batch, max_steps) tokens per step (0 for missing slots)."""
        starts = torch.zeros_like(self.ends)
        starts[:, 1:] = self.ends[:, :-1]
        return torch.where(self.valid, self.ends - starts, torch.zeros_like(self.ends))

    def to(self, device) -> StepLayout:
        return StepLayout(
            self.offsets, self.token_step.to(device), self.valid.to(device), self.ends.to(device), self.shared
        )


def step_layout(offsets, seq_len: int, batch: int | None = None, device=None) -> StepLayout:
    """A :class:`StepLayout` from shared (1-D) or per-row (2-D array, list of 1-D) offsets.

    ``batch``: the batch size the layout must have (a shared layout is expanded to it; per-row offsets
    must have one row per batch row). A :class:`StepLayout` passes through (checked against
    ``seq_len`` and ``batch``).
    """
    seq_len = validate.positive_int(seq_len, "seq_len")
    if batch is not None:
        batch = validate.positive_int(batch, "batch")
    if isinstance(offsets, StepLayout):
        lay = offsets
        if lay.seq_len != seq_len:
            raise ValueError(f"offsets: the layout covers {lay.seq_len} tokens, expected seq_len={seq_len}")
        if batch is not None and lay.batch != batch:
            if not lay.shared:
                raise ValueError(f"offsets: the layout has {lay.batch} rows, expected batch={batch}")
            return step_layout(lay.offsets[0], seq_len, batch, device)
        return lay if device is None else lay.to(device)
    ragged = isinstance(offsets, list | tuple) and len(offsets) > 0 and not np.isscalar(offsets[0])
    if ragged:
        rows = [check_offsets(o, seq_len) for o in offsets]
        shared = False
    else:
        arr = _int_array(offsets, "offsets")
        if arr.ndim == 2:
            rows = [check_offsets(o, seq_len) for o in arr]
            shared = False
        else:
            rows = [check_offsets(arr, seq_len)]
            shared = True
    if shared:
        n_rows = batch or 1
    else:
        n_rows = len(rows)
        if batch is not None and n_rows != batch:
            raise ValueError(
                f"offsets: expected one row of step boundaries per batch row ({batch}), got {n_rows}"
            )
    max_steps = max(len(r) - 1 for r in rows)
    ends = np.zeros((len(rows), max_steps), dtype=np.int64)
    valid = np.zeros((len(rows), max_steps), dtype=bool)
    token_step = np.zeros((len(rows), seq_len), dtype=np.int64)
    for i, r in enumerate(rows):  # building the layout: once per call, over rows, not tokens
        n = len(r) - 1
        ends[i, :n] = r[1:]
        valid[i, :n] = True
        token_step[i] = np.repeat(np.arange(n), np.diff(r))
    t = lambda a: torch.as_tensor(a, device=device)  # noqa: E731
    ts, vd, en = t(token_step), t(valid), t(ends)
    if shared:
        ts, vd, en = ts.expand(n_rows, -1), vd.expand(n_rows, -1), en.expand(n_rows, -1)
        rows = rows * n_rows
    return StepLayout(tuple(rows), ts, vd, en, shared)


def seq_len_of(offsets) -> int:
    """The sequence length that step boundaries cover (their last entry; of the first row if per row)."""
    if isinstance(offsets, StepLayout):
        return offsets.seq_len
    ragged = isinstance(offsets, list | tuple) and len(offsets) > 0 and not np.isscalar(offsets[0])
    arr = _int_array(offsets[0] if ragged else offsets, "offsets")
    if arr.ndim == 2:
        arr = arr[0]
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"offsets: expected at least 2 step boundaries per row, got shape {arr.shape}")
    return validate.positive_int(int(arr[-1]), "offsets[-1]")


def _pin_mask(pinned_steps: Sequence[int], layout: StepLayout) -> torch.Tensor:
    """(batch, max_steps) bool: the pinned steps of every row (negative indices count from each row's end)."""
    if isinstance(pinned_steps, int | np.integer) or not isinstance(pinned_steps, Sequence | np.ndarray):
        raise TypeError(
            f"pinned_steps: expected a sequence of step indices, got {type(pinned_steps).__name__}"
        )
    n = layout.n_steps  # (b,)
    mask = torch.zeros_like(layout.valid)
    rows = torch.arange(layout.batch, device=mask.device)
    for p in pinned_steps:
        if isinstance(p, bool | np.bool_) or not isinstance(p, int | np.integer):
            raise TypeError(f"pinned_steps: expected step indices (ints), got {p!r}")
        q = n + int(p) if p < 0 else torch.full_like(n, int(p))
        if bool(((q < 0) | (q >= n)).any()):
            raise ValueError(f"pinned_steps: step {p} is out of range for a row of {int(n.min())} steps")
        mask[rows, q] = True
    return mask


def contiguous_scores(n_steps: int, batch: int | None = None) -> torch.Tensor:
    """Contiguous (recency) retention scores, later steps higher; shape (n_steps,) or (batch, n_steps)."""
    n_steps = validate.positive_int(n_steps, "n_steps")
    s = torch.arange(n_steps, dtype=torch.float32)
    if batch is None:
        return s
    return s.expand(validate.positive_int(batch, "batch"), n_steps).clone()


def _scores_2d(step_scores) -> tuple[torch.Tensor, bool]:
    scores = as_tensor(step_scores, "step_scores", ndim=(1, 2))
    squeeze = scores.ndim == 1
    return (scores[None] if squeeze else scores), squeeze


def token_priority(
    step_scores: torch.Tensor,
    layout: StepLayout,
    pinned_steps: Sequence[int] = (),
    pin_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Per-token retention scores (batch, seq), float64: a top-``n`` over tokens keeps pinned steps first,
    then whole steps by decreasing score (ties: the later step first), and the most recent tokens of the
    step at the boundary; for every ``n`` this is the choice :func:`select_tokens` makes.

    step_scores: (batch, max_steps) (missing step slots of a ragged layout are ignored); pin_mask:
    (batch, max_steps) bool, further pinned slots per row (added to ``pinned_steps``).
    """
    b, s = step_scores.shape
    if (b, s) != (layout.batch, layout.max_steps):
        raise ValueError(
            f"step_scores: expected shape ({layout.batch}, {layout.max_steps}) (batch, steps from offsets), "
            f"got {tuple(step_scores.shape)}"
        )
    dev = step_scores.device
    lay = layout.to(dev)
    key = step_scores.detach().to(torch.float64)
    valid = lay.valid
    spread = float((key[valid].max() - key[valid].min()).abs()) + 1.0
    key = key + torch.arange(s, device=dev, dtype=torch.float64) * (1e-9 * spread)
    top = float(key[valid].max())
    pins = _pin_mask(pinned_steps, lay)
    if pin_mask is not None:
        pins = pins | pin_mask.to(dev)
    key = torch.where(pins, top + 10.0 * spread, key)
    key = torch.where(valid, key, key.new_full((), -math.inf))
    order = torch.argsort(key, dim=1, descending=True)
    rank = torch.empty_like(order)
    rank.scatter_(1, order, torch.arange(s, device=dev).expand(b, s))
    seq = lay.seq_len
    step_end = lay.ends.gather(1, lay.token_step)  # (b, seq)
    back = step_end - 1 - torch.arange(seq, device=dev)  # 0 for the last token of its step
    priority = rank.gather(1, lay.token_step) * (seq + 1) + back
    return -priority.to(torch.float64)


def select_tokens(step_scores, offsets, n_keep: int, pinned_steps: Sequence[int] = ()) -> torch.Tensor:
    """Indices of the kept tokens, ascending, shape (batch, n_keep) (or (n_keep,) for 1-D scores).

    step_scores: (n_steps,) or (batch, n_steps), a tensor or a NumPy array; offsets: shared (1-D) or
    per-row (see :func:`step_layout`). Steps are taken in decreasing score (ties: the later step
    first), pinned steps before all others; whole steps are kept while they fit and the step at the
    budget boundary contributes its most recent tokens, so exactly ``n_keep`` tokens are kept.
    Vectorised over the batch.
    """
    scores, squeeze = _scores_2d(step_scores)
    lay = step_layout(offsets, seq_len_of(offsets), scores.shape[0], device=scores.device)
    n_keep = validate.int_in_range(n_keep, "n_keep", 1, lay.seq_len)
    if scores.shape[1] != lay.max_steps:
        raise ValueError(f"step_scores: expected {lay.max_steps} steps (from offsets), got {scores.shape[1]}")
    pins = _pin_mask(pinned_steps, lay)
    pinned_tokens = (lay.lengths * pins).sum(1)
    if bool((pinned_tokens > n_keep).any()):
        raise ValueError(
            f"budget: the pinned steps {list(pinned_steps)} hold {int(pinned_tokens.max())} tokens, "
            f"more than the {n_keep} tokens the budget allows"
        )
    pr = token_priority(scores, lay, pinned_steps)
    kept = torch.sort(torch.topk(pr, n_keep, dim=1).indices, dim=1).values
    return kept[0] if squeeze else kept


def gather_tokens(x: torch.Tensor, kept: torch.Tensor) -> torch.Tensor:
    """Keep tokens ``kept`` (batch, n_keep) along the sequence axis of ``x`` (batch, heads, seq, d)."""
    x = check_tensor(x, "x", ndim=4, finite=False)
    kept = check_tensor(kept, "kept", ndim=2, floating=False)
    if kept.shape[0] != x.shape[0]:
        raise ValueError(f"kept: expected {x.shape[0]} rows like x, got {kept.shape[0]}")
    if bool((kept < 0).any()) or bool((kept >= x.shape[2]).any()):
        raise ValueError(f"kept: expected token indices in [0, {x.shape[2]})")
    idx = kept[:, None, :, None].expand(x.shape[0], x.shape[1], kept.shape[1], x.shape[3])
    return x.gather(2, idx.to(x.device))


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
    for i, t in enumerate(layers):
        check_tensor(t, f"{name}[{i}]", floating=True)
    unbatched = layers[0].ndim == 3
    if unbatched:
        layers = [t[None] for t in layers]
    return layers, was_tensor, unbatched


def retain_kv(
    keys,
    values,
    offsets,
    budget: float,
    step_scores,
    pinned_steps: Sequence[int] = (),
):
    """Prune a KV cache to ``budget`` by whole steps (TaskKV's retention).

    Parameters
    ----------
    keys, values : tensor (layers, heads, seq, d) / (layers, batch, heads, seq, d), or a list of per-layer
        tensors (heads, seq, d) / (batch, heads, seq, d) (e.g. a ``transformers`` cache's layers).
    offsets : step boundaries covering ``0 .. seq``: shared (n_steps + 1,) or per row (:func:`step_layout`).
    budget : kept fraction of the cache, in (0, 1]; exactly ``n_keep_for(budget, seq)`` tokens are kept.
    step_scores : (n_steps,) (shared by the batch) or (batch, n_steps), a tensor or NumPy array;
        higher is kept first.
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
    n_keep = n_keep_for(budget, seq)
    scores, squeeze = _scores_2d(step_scores)
    if squeeze:
        scores = scores.expand(batch, -1)
    elif scores.shape[0] != batch:
        raise ValueError(f"step_scores: expected batch {batch}, got {scores.shape[0]}")
    lay = step_layout(offsets, seq, batch)
    kept = select_tokens(scores.to(kl[0].device), lay, n_keep, pinned_steps)
    new_k = [gather_tokens(k, kept) for k in kl]
    new_v = [gather_tokens(v, kept) for v in vl]
    if k_unb:
        new_k, new_v, kept = [t[0] for t in new_k], [t[0] for t in new_v], kept[0]
    if k_tensor:
        return torch.stack(new_k), torch.stack(new_v), kept
    return new_k, new_v, kept
