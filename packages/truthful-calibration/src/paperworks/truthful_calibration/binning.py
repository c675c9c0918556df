"""Partitions of the predictions into bins. Every partition here depends on the predictions only,
never on the labels, which is what the truthfulness argument needs (paper, Sec. 3; Hartline et al.
2025, the variance-additivity recipe).

* :func:`equal_width_bins` - the usual ECE bins ``[j/m, (j+1)/m)``, the last one closed at 1.
* :func:`equal_mass_bins` - quantile bins: sort the scores (stable, ties by sample index) and cut the
  order into ``m`` blocks whose sizes differ by at most one.
* :func:`kd_bins` - a multidimensional equal-mass partition (a k-d tree of median splits) of
  vector-valued predictions, used for full multiclass calibration; ``m`` must be a power of two.

The public functions check their arguments (one-line errors naming the argument); the underscored
twins used by the estimators take arrays that are already checked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperworks.core.validate import finite_array, int_in_range

from ._inputs import check_n_bins, to_numpy

__all__ = ["equal_mass_bins", "equal_width_bins", "kd_bins"]


def _width(scores: np.ndarray, n_bins: int) -> np.ndarray:
    """``min(floor(s * m), m - 1)`` for scores already known to lie in [0, 1]."""
    idx = (np.asarray(scores, dtype=np.float64) * n_bins).astype(np.intp)
    np.minimum(idx, n_bins - 1, out=idx)
    return idx


def _mass_1d(scores: np.ndarray, n_bins: int) -> np.ndarray:
    n = scores.shape[0]
    order = np.argsort(scores, kind="stable")
    bins = np.empty(n, dtype=np.intp)
    bins[order] = np.arange(n, dtype=np.intp) * n_bins // n
    return bins


def _mass_cols(p: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-mass bins of every column of ``p`` (n, k), returned as (k, n): row c bins column c."""
    cols = np.ascontiguousarray(p.T)
    k, n = cols.shape
    order = np.argsort(cols, axis=1, kind="stable")
    bins = np.empty((k, n), dtype=np.intp)
    np.put_along_axis(bins, order, np.broadcast_to(np.arange(n, dtype=np.intp) * n_bins // n, (k, n)), 1)
    return bins


def _kd(points: np.ndarray, n_bins: int) -> np.ndarray:
    n, d = points.shape
    levels = n_bins.bit_length() - 1
    cell = np.zeros(n, dtype=np.intp)
    idx = np.arange(n)
    for level in range(levels):
        n_cells = 2**level
        size = np.bincount(cell, minlength=n_cells)
        mean = np.stack([np.bincount(cell, points[:, j], n_cells) for j in range(d)], 1) / size[:, None]
        sq = np.stack([np.bincount(cell, points[:, j] ** 2, n_cells) for j in range(d)], 1) / size[:, None]
        coord = np.argmax(sq - mean**2, axis=1)
        value = points[idx, coord[cell]]
        order = np.lexsort((idx, value, cell))
        start = np.concatenate([[0], np.cumsum(size)[:-1]])
        pos = np.empty(n, dtype=np.intp)
        pos[order] = np.arange(n) - start[cell[order]]
        cell = 2 * cell + (pos >= (size // 2)[cell])
    return cell


def _scores(scores: Any, name: str = "scores") -> np.ndarray:
    arr, _ = to_numpy(scores, name)
    return finite_array(arr, name, dtype_kind="f")


def equal_width_bins(scores: Any, n_bins: int) -> np.ndarray:
    """Bin index in ``[0, n_bins)`` of each score in [0, 1]; same shape as ``scores``.

    Bin ``j`` is ``[j/m, (j+1)/m)`` (computed as ``floor(s * m)`` in float64); a score of exactly 1
    falls in the last bin (netcal's and NumPy's histogram convention; torchmetrics puts it in a bin of
    its own). Raises on NaN/inf, scores outside [0, 1] and ``n_bins < 1``.
    """
    s = _scores(scores)
    m = check_n_bins(n_bins)
    lo, hi = float(s.min()), float(s.max())
    if lo < 0 or hi > 1:
        raise ValueError(f"scores: expected values in [0, 1], got min {lo:.4g}, max {hi:.4g}")
    return _width(s, m)


def equal_mass_bins(scores: Any, n_bins: int, axis: int = 0) -> np.ndarray:
    """Quantile bins along ``axis``: bin ``floor(rank * m / n)`` of each score's stable rank.

    ``scores``: (n,) or (n, k) with ``axis=0`` (each column binned on its own) or ``axis=1``. Sizes
    are ``floor(n/m)`` or ``ceil(n/m)`` and depend on n and m only; ``n_bins`` may not exceed n.
    Scores may be any finite reals (the property values ``A p`` of a linear property, for instance).
    """
    s = _scores(scores)
    if s.ndim not in (1, 2):
        raise ValueError(f"scores: expected shape (n,) or (n, k), got shape {s.shape}")
    ax = int_in_range(axis, "axis", -s.ndim, s.ndim - 1) % s.ndim
    m = check_n_bins(n_bins, s.shape[ax])
    if s.ndim == 1:
        return _mass_1d(s, m)
    if ax == 0:
        return _mass_cols(s, m).T.copy()
    return _mass_cols(s.T, m)


def kd_bins(points: Any, n_bins: int) -> np.ndarray:
    """Equal-mass k-d partition of ``points`` (n, d) into ``n_bins`` (a power of two, <= n) cells.

    Each level splits every cell at its median along the coordinate of largest spread within the
    cell; ties are broken by sample index. Cell sizes are floor or ceil of ``n / n_bins``. Returns
    the cell index of each point, shape (n,).
    """
    p = _scores(points, "points")
    if p.ndim != 2:
        raise ValueError(f"points: expected shape (n, d), got shape {p.shape}")
    m = check_n_bins(n_bins, p.shape[0])
    if m & (m - 1):
        raise ValueError(f"n_bins: the k-d partition needs a power of two, got {m}")
    return _kd(p.astype(np.float64, copy=False), m)
