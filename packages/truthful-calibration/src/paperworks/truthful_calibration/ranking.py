"""Ranking robustness: how much a ranking of models moves when the number of bins changes.

:func:`kendall_tau` is Kendall's tau-b between two score vectors (ties counted as in tau-b);
:func:`ranking_stability` takes a (n_bin_choices, n_models) table of errors and returns the mean
tau over all pairs of bin choices and the fraction of (model pair, bin-choice pair) whose order
flips. With ``margin > 0`` only *material* flips count: the two models' errors differ by at least
``margin`` relative to the larger one under both bin choices, so neither order is a near-tie.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperworks.core.validate import finite_array, fraction

__all__ = ["kendall_tau", "ranking_stability"]


def _vector(x: Any, name: str) -> np.ndarray:
    return finite_array(x, name, ndim=1, dtype_kind="f").astype(np.float64)


def kendall_tau(a: Any, b: Any) -> float:
    """Kendall's tau-b of two 1-D score vectors of equal length >= 2 (NaN when either is constant)."""
    a, b = _vector(a, "a"), _vector(b, "b")
    if a.shape != b.shape or a.size < 2:
        raise ValueError(f"b: expected the shape of a, {a.shape}, with length >= 2, got {b.shape}")
    iu = np.triu_indices(a.size, 1)
    da = np.sign(a[:, None] - a[None, :])[iu]
    db = np.sign(b[:, None] - b[None, :])[iu]
    n0 = da.size
    na, nb = np.count_nonzero(da == 0), np.count_nonzero(db == 0)
    denom = np.sqrt((n0 - na) * (n0 - nb))
    return float((da * db).sum() / denom) if denom > 0 else float("nan")


def ranking_stability(errors: Any, margin: float = 0.0) -> tuple[float, float]:
    """``errors``: (n_choices >= 2, n_models >= 2), finite. Returns (mean Kendall tau over choice
    pairs, flip fraction); ``margin`` in [0, 1): the relative gap a flip needs under both choices."""
    e = finite_array(errors, "errors", ndim=2, dtype_kind="f").astype(np.float64)
    if e.shape[0] < 2 or e.shape[1] < 2:
        raise ValueError(f"errors: expected shape (n_choices >= 2, n_models >= 2), got {e.shape}")
    margin = fraction(margin, "margin", open_high=True)
    iu = np.triu_indices(e.shape[1], 1)
    sign = np.sign(e[:, :, None] - e[:, None, :])[:, iu[0], iu[1]]  # (choices, pairs)
    scale = np.maximum(np.abs(e[:, :, None]), np.abs(e[:, None, :]))[:, iu[0], iu[1]]
    gap = np.abs(e[:, :, None] - e[:, None, :])[:, iu[0], iu[1]]
    decisive = gap >= margin * scale if margin > 0 else np.ones_like(gap, dtype=bool)
    taus, flips = [], []
    for i in range(e.shape[0]):
        for j in range(i + 1, e.shape[0]):
            taus.append(kendall_tau(e[i], e[j]))
            flips.append(np.mean((sign[i] * sign[j] < 0) & decisive[i] & decisive[j]))
    return float(np.nanmean(taus)), float(np.mean(flips))
