"""The standard, non-truthful calibration errors the paper compares against.

* :func:`top_label_ece` - binned confidence (top-label) ECE, ``sum_B n_B/n |acc_B - conf_B|``
  (Guo et al. 2017; torchmetrics' ``MulticlassCalibrationError(norm="l1")``), with equal-width or
  equal-mass bins, l1 or l2 norm;
* :func:`classwise_ece` - mean over classes of the binned ECE of ``(p[:, c], [y = c])``
  (Kull et al. 2019);
* :func:`smooth_ece` - smooth ECE of the confidence (Blasiok & Nakkiran 2023): kernel-smoothed
  residual with a reflected Gaussian kernel, bandwidth at the fixed point ``smECE_sigma = sigma``.

The binned errors are norms of the per-bin gaps of :mod:`._kernels` (one pass: bin index, then
``bincount``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperworks.core.validate import int_in_range, one_of

from ._inputs import as_labels, as_probs, check_atol, check_n_bins
from ._kernels import classwise_gaps, top_gaps, top_label

__all__ = ["classwise_ece", "smooth_ece", "top_label_ece"]

BINNINGS = ("width", "mass")
NORMS = ("l1", "l2")


def check_opts(binning: Any, norm: Any = "l1") -> tuple[str, str]:
    return one_of(binning, "binning", BINNINGS), one_of(norm, "norm", NORMS)


def _top_label_batched(p: np.ndarray, labels: np.ndarray, n_bins: int, binning: str, norm: str) -> np.ndarray:
    """Top-label ECE for each row of labels (R, n)."""
    n = p.shape[0]
    gaps, count, _ = top_gaps(p, labels, n_bins, binning)  # gaps: n_B (acc_B - conf_B)
    if norm == "l1":
        return np.abs(gaps).sum(axis=1) / n
    safe = np.where(count > 0, count, 1)
    return np.sqrt((gaps**2 / safe).sum(axis=1) / n)


def _classwise_batched(p: np.ndarray, labels: np.ndarray, n_bins: int, binning: str) -> np.ndarray:
    n, k = p.shape
    return np.abs(classwise_gaps(p, labels, n_bins, binning)).sum(axis=1) / (n * k)


def _bins_arg(n_bins: Any, binning: str, n: int) -> int:
    return check_n_bins(n_bins, n if binning == "mass" else None)


def top_label_ece(
    probs: Any,
    labels: Any,
    n_bins: int = 15,
    *,
    binning: str = "width",
    norm: str = "l1",
    atol: float | None = None,
) -> float:
    """Binned top-label (confidence) ECE.

    probs: (n, k); labels: (n,); ``binning``: "width" (``[j/m, (j+1)/m)``, last bin closed) or
    "mass" (equal-mass); ``norm``: "l1" (the usual ECE) or "l2" (root of the weighted squared gaps).
    Equals torchmetrics' ``multiclass_calibration_error`` on the same bins. ``atol``: row-sum
    tolerance (None: by the input's dtype).
    """
    binning, norm = check_opts(binning, norm)
    p = as_probs(probs, atol=check_atol(atol))
    y = as_labels(labels, *p.shape)
    m = _bins_arg(n_bins, binning, p.shape[0])
    return float(_top_label_batched(p, y[None, :], m, binning, norm)[0])


def classwise_ece(
    probs: Any, labels: Any, n_bins: int = 15, *, binning: str = "width", atol: float | None = None
) -> float:
    """Classwise ECE: mean over classes of ``sum_B n_B/n |freq_B(c) - mean_B p_c|``.

    probs: (n, k); labels: (n,); each class is binned by its own probability.
    """
    binning, _ = check_opts(binning)
    p = as_probs(probs, atol=check_atol(atol))
    y = as_labels(labels, *p.shape)
    m = _bins_arg(n_bins, binning, p.shape[0])
    return float(_classwise_batched(p, y[None, :], m, binning)[0])


def _smooth_mass(conf: np.ndarray, hits: np.ndarray, grid: int) -> np.ndarray:
    """Residual sums ``sum_i (a_i - c_i)`` per grid node (R, grid): the sufficient statistic."""
    node = np.minimum((conf * grid).astype(np.intp), grid - 1)
    r = hits.shape[0]
    flat = node[None, :] + (np.arange(r, dtype=np.intp) * grid)[:, None]
    return np.bincount(flat.ravel(), (hits - conf[None, :]).ravel(), r * grid).reshape(r, grid)


def _smooth_from_mass(mass: np.ndarray, chunk: int = 16) -> np.ndarray:
    """smECE from the per-node residual means (R, grid) (residual sums / n)."""
    r, grid = mass.shape
    t = (np.arange(grid) + 0.5) / grid
    diff = [t[:, None] - t[None, :], t[:, None] + t[None, :], 2.0 - t[:, None] - t[None, :]]
    out = np.empty(r)
    for s in range(0, r, chunk):
        m = mass[s : s + chunk]
        lo = np.full(len(m), 1e-4)
        hi = np.ones(len(m))
        for _ in range(30):
            sig = np.sqrt(lo * hi)
            kern = sum(np.exp(-0.5 * (d[None] / sig[:, None, None]) ** 2) for d in diff)
            kern /= np.sqrt(2 * np.pi) * sig[:, None, None]
            val = np.abs(np.einsum("rtu,ru->rt", kern, m)).mean(axis=1)
            above = val > sig
            lo = np.where(above, sig, lo)
            hi = np.where(above, hi, sig)
        out[s : s + chunk] = np.sqrt(lo * hi)
    return out


def _smooth_batched(p: np.ndarray, labels: np.ndarray, grid: int = 128) -> np.ndarray:
    """smECE of the confidence for each row of labels (R, n); discretised on ``grid`` nodes."""
    top, conf = top_label(p)
    hits = (labels == top[None, :]).astype(np.float64)
    return _smooth_from_mass(_smooth_mass(conf, hits, grid) / p.shape[0])


def check_grid(grid: Any) -> int:
    return int_in_range(grid, "grid", 8, 4096)


def smooth_ece(probs: Any, labels: Any, *, grid: int = 128, atol: float | None = None) -> float:
    """Smooth ECE of the top-label confidence (Blasiok & Nakkiran 2023).

    ``smECE_sigma = int_0^1 | 1/n sum_i K_sigma(t, c_i) (a_i - c_i) | dt`` with a Gaussian kernel
    reflected at 0 and 1; the reported value is the ``sigma`` solving ``smECE_sigma = sigma``
    (geometric bisection, 30 steps). Confidences are snapped to ``grid`` nodes (8 to 4096) first.
    probs: (n, k); labels: (n,).
    """
    p = as_probs(probs, atol=check_atol(atol))
    y = as_labels(labels, *p.shape)
    return float(_smooth_batched(p, y[None, :], check_grid(grid))[0])
