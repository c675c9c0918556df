"""Ranking robustness: how much a ranking of models moves when the number of bins changes.

:func:`kendall_tau` is Kendall's tau-b between two score vectors (ties counted as in tau-b);
:func:`ranking_stability` takes a (n_bin_choices, n_models) table of errors and returns the mean
tau over all pairs of bin choices and the fraction of (model pair, bin-choice pair) whose order flips.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["kendall_tau", "ranking_stability"]


def kendall_tau(a: Any, b: Any) -> float:
    """Kendall's tau-b of two 1-D score vectors of equal length >= 2 (NaN when either is constant)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape or a.size < 2:
        raise ValueError(f"a, b: expected two 1-D vectors of equal length >= 2, got {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("a, b: expected finite scores")
    da = np.sign(a[:, None] - a[None, :])
    db = np.sign(b[:, None] - b[None, :])
    iu = np.triu_indices(a.size, 1)
    da, db = da[iu], db[iu]
    n0 = da.size
    na, nb = np.count_nonzero(da == 0), np.count_nonzero(db == 0)
    denom = np.sqrt((n0 - na) * (n0 - nb))
    return float((da * db).sum() / denom) if denom > 0 else float("nan")


def ranking_stability(errors: Any) -> tuple[float, float]:
    """``errors``: (n_choices, n_models). Returns (mean Kendall tau over choice pairs, flip fraction)."""
    e = np.asarray(errors, dtype=float)
    if e.ndim != 2 or e.shape[0] < 2 or e.shape[1] < 2:
        raise ValueError(f"errors: expected shape (n_choices >= 2, n_models >= 2), got {e.shape}")
    taus, flips = [], []
    iu = np.triu_indices(e.shape[1], 1)
    for i in range(e.shape[0]):
        for j in range(i + 1, e.shape[0]):
            taus.append(kendall_tau(e[i], e[j]))
            si = np.sign(e[i][:, None] - e[i][None, :])[iu]
            sj = np.sign(e[j][:, None] - e[j][None, :])[iu]
            flips.append(np.mean(si * sj < 0))
    return float(np.nanmean(taus)), float(np.mean(flips))
