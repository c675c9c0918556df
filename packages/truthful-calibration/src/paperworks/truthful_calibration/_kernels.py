"""The one binned kernel behind every error of the package, batched over label draws.

Every binned error is a norm of the per-cell gaps ``g[r, c] = sum_{i in c} z_ri - sum_{i in c} v_i``
between what was observed (``z``: a hit, a one-hot label, ``A e_y``) and what was reported (``v``: a
confidence, a probability, ``A p``), with cells that depend on the reports only. :func:`cell_gaps`
computes them in one pass: a cell index per entry, then one ``bincount`` for the reports and one for
the observations of all ``R`` label draws at once (``labels`` is (R, n); R = 1 for a plain call).

* :func:`top_gaps`: top-label (confidence) cells; the standard ECE (l1 / l2) and the truthful
  confidence error are norms of these;
* :func:`classwise_gaps`: one set of cells per class, each class binned by its own probability;
  the classwise ECE and the truthful classwise error;
* :func:`vector_gaps`: cells of a vector-valued report ``A p`` (k-d cells, or equal-mass bins when
  d = 1); the truthful error of a linear property.

The averaged two-bin error (no cells, every threshold) lives in :mod:`.atb`.
"""

from __future__ import annotations

import numpy as np

from .binning import _kd, _mass_1d, _mass_cols, _width

__all__ = ["cell_gaps", "classwise_gaps", "top_gaps", "top_label", "vector_gaps"]


def top_label(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(argmax class (n,), the first maximal one as ``np.argmax`` picks it; its probability (n,) as
    float64). With few classes the row maximum is a running maximum over the columns and the argmax
    the first column equal to it (NumPy's row reductions are slow on short rows); same result."""
    k = p.shape[1]
    if k <= 16:
        conf = np.maximum(p[:, 0], p[:, 1])
        for c in range(2, k):
            np.maximum(conf, p[:, c], out=conf)
        top = (p == conf[:, None]).argmax(axis=1)
        return top, conf.astype(np.float64)
    top = p.argmax(axis=1)
    conf = np.take_along_axis(p, top[:, None], axis=1)[:, 0].astype(np.float64)
    return top, conf


def cell_gaps(
    pred_cells: np.ndarray,
    pred_w: np.ndarray,
    obs_cells: np.ndarray,
    obs_w: np.ndarray | None,
    n_cells: int,
) -> np.ndarray:
    """``obs - pred`` per cell, shape (R, n_cells).

    pred_cells, pred_w: any shape (same), the cell and value of every report entry; obs_cells: (R, n)
    cell of every observation of each label draw; obs_w: its weight (None: 1).
    """
    pred = np.bincount(pred_cells.ravel(), pred_w.ravel(), n_cells)
    r = obs_cells.shape[0]
    flat = obs_cells + (np.arange(r, dtype=np.intp) * n_cells)[:, None] if r > 1 else obs_cells
    w = None if obs_w is None else obs_w.ravel()
    obs = np.bincount(flat.ravel(), w, r * n_cells).reshape(r, n_cells)
    return obs - pred


def top_gaps(
    p: np.ndarray, labels: np.ndarray, n_bins: int, binning: str = "width"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-label cells: (gaps (R, m) of hits minus confidences, bin counts (m,), hits (R, n) bool)."""
    top, conf = top_label(p)
    bins = _width(conf, n_bins) if binning == "width" else _mass_1d(conf, n_bins)
    hits = labels == top[None, :]
    obs_cells = np.broadcast_to(bins, hits.shape)
    gaps = cell_gaps(bins, conf, obs_cells, hits.astype(np.float64), n_bins)
    return gaps, np.bincount(bins, minlength=n_bins), hits


def classwise_gaps(p: np.ndarray, labels: np.ndarray, n_bins: int, binning: str = "width") -> np.ndarray:
    """One cell set per class (class c binned by p[:, c]): gaps (R, k * m), cell ``c * m + bin``."""
    n, k = p.shape
    if binning == "width":  # (n, k) layout, no copy of p
        cells = _width(p, n_bins)
        cells += np.arange(k, dtype=np.intp) * n_bins
        own = cells[np.arange(n), labels]  # (R, n): the cell of each sample's label class
        return cell_gaps(cells, p, own, None, k * n_bins)
    cells = _mass_cols(p, n_bins)  # (k, n) layout
    cells += (np.arange(k, dtype=np.intp) * n_bins)[:, None]
    own = cells[labels, np.arange(n)]
    return cell_gaps(cells, p.T, own, None, k * n_bins)


def vector_gaps(v: np.ndarray, z_of_class: np.ndarray, labels: np.ndarray, n_bins: int) -> np.ndarray:
    """Cells of the reports ``v`` (n, d): gaps (R, m * d), entry ``cell * d + j``.

    ``z_of_class`` (d, k): the observation ``A e_y`` of each class (a column of ``A``); d = 1 uses
    equal-mass bins of ``v``, d > 1 a k-d partition (``n_bins`` a power of two).
    """
    n, d = v.shape
    cell = _mass_1d(v[:, 0], n_bins) if d == 1 else _kd(v, n_bins)
    pred_cells = cell[:, None] * d + np.arange(d, dtype=np.intp)
    obs_cells = np.broadcast_to(pred_cells, (labels.shape[0], n, d)).reshape(labels.shape[0], n * d)
    obs_w = z_of_class.T[labels]  # (R, n, d)
    return cell_gaps(pred_cells, v, obs_cells, obs_w.reshape(labels.shape[0], n * d), n_bins * d)
