"""Partitions of the predictions into bins. Every partition here depends on the predictions only,
never on the labels, which is what the truthfulness argument needs (paper, Sec. 3; Hartline et al.
2025, the variance-additivity recipe).

* :func:`equal_width_bins` - the usual ECE bins ``[j/m, (j+1)/m)``, the last one closed at 1.
* :func:`equal_mass_bins` - quantile bins: sort the scores (stable, ties by sample index) and cut the
  order into ``m`` blocks whose sizes differ by at most one.
* :func:`kd_bins` - a multidimensional equal-mass partition (a k-d tree of median splits) of
  vector-valued predictions, used for full multiclass calibration; ``m`` must be a power of two.
"""

from __future__ import annotations

import numpy as np

__all__ = ["equal_mass_bins", "equal_width_bins", "kd_bins"]


def equal_width_bins(scores: np.ndarray, n_bins: int) -> np.ndarray:
    """Bin index in ``[0, n_bins)`` of each score in [0, 1]; shape of ``scores``.

    Bin ``j`` is ``[j/m, (j+1)/m)``; a score of exactly 1 falls in the last bin (netcal's and
    NumPy's histogram convention; torchmetrics puts it in a bin of its own).
    """
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    idx = np.searchsorted(edges, scores, side="right") - 1
    return np.clip(idx, 0, n_bins - 1)


def equal_mass_bins(scores: np.ndarray, n_bins: int, axis: int = 0) -> np.ndarray:
    """Quantile bins along ``axis``: bin ``floor(rank * m / n)`` of each score's stable rank.

    Works on a 1-D array of shape (n,) or column-wise on (n, k) with ``axis=0``. Sizes are
    ``floor(n/m)`` or ``ceil(n/m)`` and depend on n and m only.
    """
    n = scores.shape[axis]
    order = np.argsort(scores, axis=axis, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(n).reshape((-1,) + (1,) * (scores.ndim - 1)), axis=axis)
    return ranks * n_bins // n


def kd_bins(points: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-mass k-d partition of ``points`` (n, d) into ``n_bins`` (a power of two) cells.

    Each level splits every cell at its median along the coordinate of largest spread within the
    cell; ties are broken by sample index. Cell sizes are floor or ceil of ``n / n_bins``. Returns
    the cell index of each point, shape (n,).
    """
    n, d = points.shape
    levels = round(float(np.log2(n_bins)))
    if 2**levels != n_bins:
        raise ValueError(f"n_bins: the k-d partition needs a power of two, got {n_bins}")
    cell = np.zeros(n, dtype=np.int64)
    idx = np.arange(n)
    for level in range(levels):
        n_cells = 2**level
        size = np.bincount(cell, minlength=n_cells).astype(float)
        mean = np.stack([np.bincount(cell, points[:, j], n_cells) for j in range(d)], 1) / size[:, None]
        sq = np.stack([np.bincount(cell, points[:, j] ** 2, n_cells) for j in range(d)], 1) / size[:, None]
        coord = np.argmax(sq - mean**2, axis=1)
        value = points[idx, coord[cell]]
        order = np.lexsort((idx, value, cell))
        start = np.concatenate([[0], np.cumsum(size.astype(np.int64))[:-1]])
        pos = np.empty(n, dtype=np.int64)
        pos[order] = np.arange(n) - start[cell[order]]
        cell = 2 * cell + (pos >= (size.astype(np.int64) // 2)[cell])
    return cell
