"""The Goal Accessibility Ratio (GAR) as pure functions of attention weights.

For layer ``l``, head ``h`` and query row ``i`` the goal mass is ``m^{l,h}_i = sum_{j in G} a^{l,h}_{ij}``
(``G``: the goal positions, ``a``: the post-softmax attention). GAR of layer ``l`` over a set of rows
``R`` (the generated tokens of a turn) is the mean of ``m^{l,h}_i`` over ``i in R`` and over heads:

    GAR_l(R) = 1 / (|R| H) * sum_{i in R} sum_h m^{l,h}_i.

The length-normalised variant divides each row's mass by the uniform share ``|G_{<=i}| / (i + 1)``
(the mass uniform causal attention would put on the goal), so 1 means "as much as uniform attention".
The formula beyond "attention from generated tokens to goal tokens" is our reading (README, Fidelity).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .masks import _check_goal_mask

__all__ = ["gar_by_turn", "goal_accessibility_ratio", "goal_mass", "uniform_share"]


def _stack(attentions) -> torch.Tensor:
    if isinstance(attentions, torch.Tensor):
        a = attentions
    elif (
        isinstance(attentions, Sequence)
        and len(attentions)
        and all(isinstance(x, torch.Tensor) for x in attentions)
    ):
        a = torch.stack(list(attentions))
    else:
        raise TypeError(
            "attentions: expected a tensor (L, B, H, Tq, Tk) / (B, H, Tq, Tk) or a list of (B, H, Tq, Tk)"
        )
    if a.ndim == 4:
        a = a[None]
    if a.ndim != 5:
        raise ValueError(f"attentions: expected shape (L, B, H, Tq, Tk), got {tuple(a.shape)}")
    if not a.is_floating_point():
        raise ValueError(f"attentions: expected floating attention weights, got dtype {a.dtype}")
    return a


def uniform_share(goal_mask: torch.Tensor, q_offset: int = 0, q_len: int | None = None) -> torch.Tensor:
    """(B, Tq): ``|G ∩ [0, i]| / (i + 1)``, the goal mass of uniform causal attention at row ``i``."""
    g = _check_goal_mask(goal_mask)
    T = g.shape[1]
    q_len = T - q_offset if q_len is None else q_len
    csum = torch.cumsum(g.to(torch.float64), dim=1)
    pos = torch.arange(q_offset, q_offset + q_len, device=g.device)
    return csum[:, pos] / (pos + 1).to(torch.float64)


def goal_mass(attention: torch.Tensor, goal_mask, *, normalize: bool = False) -> torch.Tensor:
    """(..., B, H, Tq): attention mass on the goal columns, per row (``attention``: (..., B, H, Tq, Tk)).

    ``goal_mask``: (B, Tk) bool. ``normalize``: divide by :func:`uniform_share` (rows with no goal
    position at or before them get NaN: select rows after the goal span).
    """
    g = _check_goal_mask(goal_mask)
    if attention.ndim < 4:
        raise ValueError(f"attention: expected shape (..., B, H, Tq, Tk), got {tuple(attention.shape)}")
    B, Tk = attention.shape[-4], attention.shape[-1]
    if g.shape != (B, Tk):
        raise ValueError(
            f"goal_mask: expected shape ({B}, {Tk}) to match the attention, got {tuple(g.shape)}"
        )
    m = (attention * g[:, None, None, :].to(attention.dtype)).sum(-1)
    if normalize:
        Tq = attention.shape[-2]
        share = uniform_share(g, Tk - Tq, Tq).to(m.dtype)  # (B, Tq)
        m = m / torch.where(share > 0, share, torch.nan)[:, None, :]
    return m


def _rows(rows, B: int, Tq: int, device) -> torch.Tensor:
    r = torch.as_tensor(rows, device=device)
    if r.dtype != torch.bool:
        raise ValueError(f"rows: expected a bool tensor of shape ({B}, {Tq}), got dtype {r.dtype}")
    if tuple(r.shape) != (B, Tq):
        raise ValueError(f"rows: expected shape ({B}, {Tq}), got {tuple(r.shape)}")
    if not r.any():
        raise ValueError("rows: expected at least one selected row (the generated tokens), got none")
    return r


def goal_accessibility_ratio(attentions, goal_mask, rows=None, *, normalize: bool = False) -> torch.Tensor:
    """(L,) GAR per layer: mean over the selected rows (pooled over the batch) and heads of the goal mass.

    ``attentions``: (L, B, H, Tq, Tk), a list of L (B, H, Tq, Tk) (Hugging Face's ``outputs.attentions``)
    or one layer (B, H, Tq, Tk); ``goal_mask``: (B, Tk) bool; ``rows``: (B, Tq) bool, the generated
    tokens' rows (default: every row). Values lie in [0, 1] (``normalize=False``).
    """
    a = _stack(attentions)
    _L, B, _H, Tq, _Tk = a.shape
    m = goal_mass(a, goal_mask, normalize=normalize)  # (L, B, H, Tq)
    r = torch.ones(B, Tq, dtype=torch.bool, device=a.device) if rows is None else _rows(rows, B, Tq, a.device)
    sel = m.mean(2)[:, r]  # (L, n_rows)
    if normalize and torch.isnan(sel).any():
        raise ValueError("rows: selected rows with no goal position at or before them (normalize=True)")
    return sel.mean(1)


def gar_by_turn(masses: torch.Tensor, turn_rows, n_turns: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-layer, per-turn GAR from per-row goal masses.

    ``masses``: (L, B, H, Tq) from :func:`goal_mass`; ``turn_rows``: (B, Tq) int, the turn index of each
    generated row (-1: not a generated row). Returns ``(gar, count)``: (L, n_turns) means over rows and
    heads, and (n_turns,) rows per turn; a turn with no rows gets GAR 0 and count 0.
    """
    if masses.ndim != 4:
        raise ValueError(f"masses: expected shape (L, B, H, Tq), got {tuple(masses.shape)}")
    L, B, _H, Tq = masses.shape
    tr = torch.as_tensor(turn_rows, device=masses.device)
    if tuple(tr.shape) != (B, Tq) or tr.dtype.is_floating_point or tr.dtype == torch.bool:
        raise ValueError(
            f"turn_rows: expected an int tensor of shape ({B}, {Tq}), got {tuple(tr.shape)} {tr.dtype}"
        )
    if (tr >= n_turns).any() or (tr < -1).any():
        raise ValueError(f"turn_rows: expected turn indices in [-1, {n_turns - 1}]")
    per_row = masses.mean(2).reshape(L, -1)  # (L, B*Tq)
    idx = tr.reshape(-1)
    keep = idx >= 0
    sums = torch.zeros(L, n_turns, dtype=per_row.dtype, device=masses.device)
    sums.index_add_(1, idx[keep], per_row[:, keep])
    count = torch.bincount(idx[keep], minlength=n_turns).to(per_row.dtype)
    return sums / count.clamp(min=1), count
