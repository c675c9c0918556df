"""The standard, non-truthful calibration errors the paper compares against.

* :func:`top_label_ece` - binned confidence (top-label) ECE, ``sum_B n_B/n |acc_B - conf_B|``
  (Guo et al. 2017; torchmetrics' ``MulticlassCalibrationError(norm="l1")``), with equal-width or
  equal-mass bins, l1 or l2 norm;
* :func:`classwise_ece` - mean over classes of the binned ECE of ``(p[:, c], [y = c])``
  (Kull et al. 2019);
* :func:`smooth_ece` - smooth ECE of the confidence (Blasiak et al. 2023): kernel-smoothed residual
  with a reflected Gaussian kernel, bandwidth at the fixed point ``smECE_sigma = sigma``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._inputs import as_labels, as_probs, check_n_bins
from .binning import equal_mass_bins, equal_width_bins

__all__ = ["classwise_ece", "smooth_ece", "top_label_ece"]

_BINNINGS = ("width", "mass")
_NORMS = ("l1", "l2")


def _bins_of(scores: np.ndarray, n_bins: int, binning: str) -> np.ndarray:
    if binning == "width":
        return equal_width_bins(scores, n_bins)
    return equal_mass_bins(scores, n_bins)


def _check_opts(binning: str, norm: str = "l1") -> None:
    if binning not in _BINNINGS:
        raise ValueError(f"binning: expected one of {_BINNINGS}, got {binning!r}")
    if norm not in _NORMS:
        raise ValueError(f"norm: expected one of {_NORMS}, got {norm!r}")


def _top_label_batched(p: np.ndarray, labels: np.ndarray, n_bins: int, binning: str, norm: str) -> np.ndarray:
    n = p.shape[0]
    r = labels.shape[0]
    top = p.argmax(axis=1)
    conf = p[np.arange(n), top]
    bins = _bins_of(conf, n_bins, binning)
    hits = (labels == top[None, :]).astype(float)
    obs = np.bincount((np.arange(r)[:, None] * n_bins + bins).ravel(), hits.ravel(), r * n_bins)
    gap = obs.reshape(r, n_bins) - np.bincount(bins, conf, n_bins)  # n_B (acc_B - conf_B)
    if norm == "l1":
        return np.abs(gap).sum(axis=1) / n
    count = np.bincount(bins, minlength=n_bins).astype(float)
    safe = np.where(count > 0, count, 1.0)
    return np.sqrt((gap**2 / safe).sum(axis=1) / n)


def _classwise_batched(p: np.ndarray, labels: np.ndarray, n_bins: int, binning: str) -> np.ndarray:
    n, k = p.shape
    r = labels.shape[0]
    bins = equal_width_bins(p, n_bins) if binning == "width" else equal_mass_bins(p, n_bins, axis=0)
    pred = np.bincount((np.arange(k) * n_bins + bins).ravel(), p.ravel(), k * n_bins).reshape(k, n_bins)
    lab_bins = np.take_along_axis(bins, labels.T, axis=1).T
    flat = (np.arange(r)[:, None] * k + labels) * n_bins + lab_bins
    obs = np.bincount(flat.ravel(), minlength=r * k * n_bins).reshape(r, k, n_bins)
    return np.abs(obs - pred).sum(axis=(1, 2)) / n / k


def top_label_ece(
    probs: Any,
    labels: Any,
    n_bins: int = 15,
    *,
    binning: str = "width",
    norm: str = "l1",
    atol: float = 1e-4,
) -> float:
    """Binned top-label (confidence) ECE.

    probs: (n, k); labels: (n,); ``binning``: "width" (``[j/m, (j+1)/m)``, last bin closed) or
    "mass" (equal-mass); ``norm``: "l1" (the usual ECE) or "l2" (root of the weighted squared gaps).
    Equals torchmetrics' ``multiclass_calibration_error`` on the same bins.
    """
    _check_opts(binning, norm)
    p = as_probs(probs, atol=atol)
    y = as_labels(labels, *p.shape)
    n_bins = check_n_bins(n_bins, p.shape[0]) if binning == "mass" else _positive(n_bins)
    return float(_top_label_batched(p, y[None, :], n_bins, binning, norm)[0])


def classwise_ece(
    probs: Any, labels: Any, n_bins: int = 15, *, binning: str = "width", atol: float = 1e-4
) -> float:
    """Classwise ECE: mean over classes of ``sum_B n_B/n |freq_B(c) - mean_B p_c|``.

    probs: (n, k); labels: (n,); each class is binned by its own probability.
    """
    _check_opts(binning)
    p = as_probs(probs, atol=atol)
    y = as_labels(labels, *p.shape)
    n_bins = check_n_bins(n_bins, p.shape[0]) if binning == "mass" else _positive(n_bins)
    return float(_classwise_batched(p, y[None, :], n_bins, binning)[0])


def _positive(n_bins: Any) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, int | np.integer):
        raise TypeError(f"n_bins: expected a positive int, got {n_bins!r}")
    if n_bins < 1:
        raise ValueError(f"n_bins: expected a positive int, got {n_bins}")
    return int(n_bins)


def _smooth_batched(p: np.ndarray, labels: np.ndarray, grid: int = 128, chunk: int = 16) -> np.ndarray:
    """smECE of the confidence for each row of labels (R, n); discretised on ``grid`` nodes."""
    n = p.shape[0]
    r = labels.shape[0]
    top = p.argmax(axis=1)
    conf = p[np.arange(n), top]
    node = np.minimum((conf * grid).astype(np.int64), grid - 1)
    t = (np.arange(grid) + 0.5) / grid
    hits = (labels == top[None, :]).astype(float)
    mass = np.bincount((np.arange(r)[:, None] * grid + node).ravel(), (hits - conf).ravel(), r * grid)
    mass = mass.reshape(r, grid) / n  # residual mass per node
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


def smooth_ece(probs: Any, labels: Any, *, grid: int = 128, atol: float = 1e-4) -> float:
    """Smooth ECE of the top-label confidence (Blasiak, Gopalan, Hu, Nakkiran 2023).

    ``smECE_sigma = int_0^1 | 1/n sum_i K_sigma(t, c_i) (a_i - c_i) | dt`` with a Gaussian kernel
    reflected at 0 and 1; the reported value is the ``sigma`` solving ``smECE_sigma = sigma``
    (geometric bisection). Confidences are snapped to ``grid`` nodes first. probs: (n, k); labels: (n,).
    """
    p = as_probs(probs, atol=atol)
    y = as_labels(labels, *p.shape)
    if isinstance(grid, bool) or not isinstance(grid, int | np.integer) or grid < 8:
        raise ValueError(f"grid: expected an int >= 8, got {grid!r}")
    return float(_smooth_batched(p, y[None, :], int(grid))[0])
