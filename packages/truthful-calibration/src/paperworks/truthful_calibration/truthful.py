"""Perfectly truthful calibration errors (arXiv 2510.06388, generalising Hartline et al. 2025).

The construction, for a linear property ``Gamma(q) = A q`` of the label distribution ``q``
(``A`` of shape (d, k)): report ``v_i = A p_i``, observe ``z_i = A e_{y_i}``, partition the samples
into ``m`` bins using the reports only, with bin sizes that do not depend on the data, and take

    TCE = 1 / (n * s) * sum_B || sum_{i in B} (z_i - v_i) ||^2,     s = n / m (the nominal bin size).

Given the inputs, the labels are independent, so by variance additivity

    E[TCE] = 1 / (n s) * sum_B || sum_{i in B} A (q_i - p_i) ||^2  +  1 / (n s) * sum_i tr Cov(A e_{y_i}),

and the second term depends on the true distributions ``q_i`` only. The first term is zero when
``p_i = q_i``: reporting the truth minimises the expected error (perfect truthfulness). With
``n`` divisible by ``m`` this is exactly the squared equal-mass ("quantile") l2-ECE.

* classwise: the mean over classes ``c`` of the error of the property ``p_c`` (each class binned
  by its own probability);
* full multiclass: ``A = I`` with a k-d equal-mass partition of the simplex;
* confidence (top-label) calibration is not a fixed linear property: which class is scored depends
  on the report. Our truthful correction adds ``1/(n s) * sum_i (1 - a_i)``, ``a_i = [y_i = argmax p_i]``;
  the expected per-sample constant becomes ``1 - q_i[yhat_i]^2``, which is smallest when the
  reported top class is the truly most likely one (see the README's Fidelity section).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._inputs import as_labels, as_probs, check_n_bins, to_numpy
from .binning import equal_mass_bins, kd_bins

__all__ = [
    "truthful_classwise_error",
    "truthful_confidence_error",
    "truthful_multiclass_error",
    "truthful_property_error",
]


def _label_counts(bins: np.ndarray, labels: np.ndarray, n_bins: int, k: int) -> np.ndarray:
    """counts[r, b, c] = #{i in bin b : labels[r, i] = c}; labels (R, n), bins (n,)."""
    r = labels.shape[0]
    flat = (np.arange(r)[:, None] * n_bins + bins[None, :]) * k + labels
    return np.bincount(flat.ravel(), minlength=r * n_bins * k).reshape(r, n_bins, k).astype(float)


def _property_batched(p: np.ndarray, labels: np.ndarray, a: np.ndarray, n_bins: int) -> np.ndarray:
    n, k = p.shape
    v = p @ a.T  # (n, d)
    bins = equal_mass_bins(v[:, 0], n_bins) if a.shape[0] == 1 else kd_bins(v, n_bins)
    pred = np.stack([np.bincount(bins, v[:, j], n_bins) for j in range(v.shape[1])], 1)  # (m, d)
    obs = _label_counts(bins, labels, n_bins, k) @ a.T  # (R, m, d)
    return ((obs - pred) ** 2).sum(axis=(1, 2)) * n_bins / n**2


def _classwise_batched(p: np.ndarray, labels: np.ndarray, n_bins: int) -> np.ndarray:
    n, k = p.shape
    r = labels.shape[0]
    bins = equal_mass_bins(p, n_bins, axis=0)  # (n, k): class c binned by p[:, c]
    pred = np.bincount((np.arange(k) * n_bins + bins).ravel(), p.ravel(), k * n_bins).reshape(k, n_bins)
    lab_bins = np.take_along_axis(bins, labels.T, axis=1).T  # (R, n): bin of sample i for class y_ri
    flat = (np.arange(r)[:, None] * k + labels) * n_bins + lab_bins
    obs = np.bincount(flat.ravel(), minlength=r * k * n_bins).reshape(r, k, n_bins)
    return ((obs - pred) ** 2).sum(axis=(1, 2)) * n_bins / n**2 / k


def _confidence_batched(p: np.ndarray, labels: np.ndarray, n_bins: int, corrected: bool = True) -> np.ndarray:
    n, _ = p.shape
    r = labels.shape[0]
    top = p.argmax(axis=1)
    conf = p[np.arange(n), top]
    bins = equal_mass_bins(conf, n_bins)
    hits = (labels == top[None, :]).astype(float)  # (R, n)
    obs = np.bincount((np.arange(r)[:, None] * n_bins + bins).ravel(), hits.ravel(), r * n_bins)
    pred = np.bincount(bins, conf, n_bins)
    sq = ((obs.reshape(r, n_bins) - pred) ** 2).sum(axis=1)
    if corrected:
        sq = sq + (1.0 - hits).sum(axis=1)
    return sq * n_bins / n**2


def truthful_property_error(
    probs: Any, labels: Any, property_matrix: Any, n_bins: int = 8, *, atol: float = 1e-4
) -> float:
    """Truthful calibration error of the linear property ``A p`` (paper's general construction).

    probs: (n, k) predicted distributions; labels: (n,) ints in [0, k); property_matrix ``A``:
    (d, k) real. With d = 1 the bins are equal-mass bins of ``A p``; with d > 1 they are a k-d
    equal-mass partition of ``A p`` and ``n_bins`` must be a power of two. Returns the squared-l2
    error of the module docstring (a float >= 0).
    """
    p = as_probs(probs, atol=atol)
    n, k = p.shape
    y = as_labels(labels, n, k)
    a = to_numpy(property_matrix, "property_matrix")
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != k:
        raise ValueError(f"property_matrix: expected shape (d, {k}), got shape {tuple(a.shape)}")
    if not np.issubdtype(a.dtype, np.number) or not np.isfinite(a).all():
        raise ValueError("property_matrix: expected finite real numbers")
    n_bins = check_n_bins(n_bins, n)
    return float(_property_batched(p, y[None, :], a.astype(float), n_bins)[0])


def truthful_classwise_error(probs: Any, labels: Any, n_bins: int = 10, *, atol: float = 1e-4) -> float:
    """Truthful classwise calibration error: mean over classes ``c`` of the squared equal-mass
    l2 error of the binary problem ``(p[:, c], [y = c])`` with fixed bin weights ``1/(n * n/m)``.

    probs: (n, k); labels: (n,). Perfectly truthful (paper, classwise calibration).
    """
    p = as_probs(probs, atol=atol)
    y = as_labels(labels, *p.shape)
    return float(_classwise_batched(p, y[None, :], check_n_bins(n_bins, p.shape[0]))[0])


def truthful_multiclass_error(probs: Any, labels: Any, n_bins: int = 8, *, atol: float = 1e-4) -> float:
    """Truthful full-multiclass (canonical) calibration error: the property ``A = I`` with a k-d
    equal-mass partition of the simplex into ``n_bins`` (a power of two) cells.

    probs: (n, k); labels: (n,).
    """
    p = as_probs(probs, atol=atol)
    n, k = p.shape
    y = as_labels(labels, n, k)
    n_bins = check_n_bins(n_bins, n)
    if n_bins & (n_bins - 1):
        raise ValueError(
            f"n_bins: the full multiclass error uses a k-d partition; expected a power of two, got {n_bins}"
        )
    return float(_property_batched(p, y[None, :], np.eye(k), n_bins)[0])


def truthful_confidence_error(
    probs: Any, labels: Any, n_bins: int = 10, *, corrected: bool = True, atol: float = 1e-4
) -> float:
    """Confidence (top-label) calibration error with the truthful correction.

    Equal-mass bins of the confidence ``c_i = max_c p_ic``; ``a_i = [y_i = argmax p_i]``;
    ``m / n^2 * (sum_B (sum_{i in B} (a_i - c_i))^2 + sum_i (1 - a_i))``. Without the second term
    (the plain squared equal-mass confidence ECE) a predictor gains by naming an unlikely class as
    its top class with a low confidence; with it, the truth minimises the expectation.
    ``corrected=False`` gives that plain (non-truthful) squared equal-mass confidence ECE.
    """
    p = as_probs(probs, atol=atol)
    y = as_labels(labels, *p.shape)
    return float(_confidence_batched(p, y[None, :], check_n_bins(n_bins, p.shape[0]), corrected)[0])
