"""Perfectly truthful binned calibration errors (arXiv 2510.06388, generalising Hartline et al. 2025).

The construction, for a linear property ``Gamma(q) = A q`` of the label distribution ``q``
(``A`` of shape (d, k)): report ``v_i = A p_i``, observe ``z_i = A e_{y_i}``, partition the samples
into ``m`` bins using the reports only, with bin sizes that do not depend on the data, and take

    TCE = 1 / (n * s) * sum_B || sum_{i in B} (z_i - v_i) ||^2,     s = n / m (the nominal bin size).

Given the inputs, the labels are independent, so by variance additivity

    E[TCE] = 1 / (n s) * sum_B || sum_{i in B} A (q_i - p_i) ||^2  +  1 / (n s) * sum_i tr Cov(A e_{y_i}),

and the second term depends on the true distributions ``q_i`` only. The first term is zero when
``p_i = q_i``: reporting the truth minimises the expected error (perfect truthfulness). It is not
strict: a report whose biases cancel inside every bin ties with the truth (the averaged two-bin
errors of :mod:`.atb` are strict). With ``n`` divisible by ``m`` this is exactly the squared
equal-mass ("quantile") l2-ECE.

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

from ._inputs import as_labels, as_probs, as_property_matrix, check_atol, check_n_bins
from ._kernels import classwise_gaps, top_gaps, vector_gaps

__all__ = [
    "truthful_classwise_error",
    "truthful_confidence_error",
    "truthful_multiclass_error",
    "truthful_property_error",
]


def _property_batched(p: np.ndarray, labels: np.ndarray, a: np.ndarray, n_bins: int) -> np.ndarray:
    n = p.shape[0]
    gaps = vector_gaps(p.astype(np.float64) @ a.T, a, labels, n_bins)
    return (gaps**2).sum(axis=1) * n_bins / n**2


def _classwise_batched(p: np.ndarray, labels: np.ndarray, n_bins: int) -> np.ndarray:
    n, k = p.shape
    return (classwise_gaps(p, labels, n_bins, "mass") ** 2).sum(axis=1) * n_bins / n**2 / k


def _confidence_batched(p: np.ndarray, labels: np.ndarray, n_bins: int, corrected: bool = True) -> np.ndarray:
    n = p.shape[0]
    gaps, _, hits = top_gaps(p, labels, n_bins, "mass")
    sq = (gaps**2).sum(axis=1)
    if corrected:
        sq = sq + (~hits).sum(axis=1)
    return sq * n_bins / n**2


def _power_of_two(m: int) -> int:
    if m & (m - 1):
        raise ValueError(f"n_bins: the k-d partition needs a power of two, got {m}")
    return m


def truthful_property_error(
    probs: Any, labels: Any, property_matrix: Any, n_bins: int = 8, *, atol: float | None = None
) -> float:
    """Truthful calibration error of the linear property ``A p`` (paper's general construction).

    probs: (n, k) predicted distributions; labels: (n,) ints in [0, k); property_matrix ``A``:
    (d, k) real (or (k,) for one property). With d = 1 the bins are equal-mass bins of ``A p``; with
    d > 1 they are a k-d equal-mass partition of ``A p`` and ``n_bins`` must be a power of two.
    Returns the squared-l2 error of the module docstring (a float >= 0).
    """
    p = as_probs(probs, atol=check_atol(atol))
    n, k = p.shape
    y = as_labels(labels, n, k)
    a = as_property_matrix(property_matrix, k)
    m = check_n_bins(n_bins, n)
    if a.shape[0] > 1:
        _power_of_two(m)
    return float(_property_batched(p, y[None, :], a, m)[0])


def truthful_classwise_error(
    probs: Any, labels: Any, n_bins: int = 10, *, atol: float | None = None
) -> float:
    """Truthful classwise calibration error: mean over classes ``c`` of the squared equal-mass
    l2 error of the binary problem ``(p[:, c], [y = c])`` with fixed bin weights ``1/(n * n/m)``.

    probs: (n, k); labels: (n,). Perfectly truthful (paper, classwise calibration).
    """
    p = as_probs(probs, atol=check_atol(atol))
    y = as_labels(labels, *p.shape)
    return float(_classwise_batched(p, y[None, :], check_n_bins(n_bins, p.shape[0]))[0])


def truthful_multiclass_error(
    probs: Any, labels: Any, n_bins: int = 8, *, atol: float | None = None
) -> float:
    """Truthful full-multiclass (canonical) calibration error: the property ``A = I`` with a k-d
    equal-mass partition of the simplex into ``n_bins`` (a power of two) cells.

    probs: (n, k); labels: (n,).
    """
    p = as_probs(probs, atol=check_atol(atol))
    n, k = p.shape
    y = as_labels(labels, n, k)
    m = _power_of_two(check_n_bins(n_bins, n))
    return float(_property_batched(p, y[None, :], np.eye(k), m)[0])


def truthful_confidence_error(
    probs: Any, labels: Any, n_bins: int = 10, *, corrected: bool = True, atol: float | None = None
) -> float:
    """Confidence (top-label) calibration error with the truthful correction.

    Equal-mass bins of the confidence ``c_i = max_c p_ic``; ``a_i = [y_i = argmax p_i]``;
    ``m / n^2 * (sum_B (sum_{i in B} (a_i - c_i))^2 + sum_i (1 - a_i))``. Without the second term
    (the plain squared equal-mass confidence ECE) a predictor gains by naming an unlikely class as
    its top class with a low confidence; with it, the truth minimises the expectation (weakly: the
    error sees a report only through its argmax and max, so reports sharing both tie with the truth).
    ``corrected=False`` gives that plain (non-truthful) squared equal-mass confidence ECE.
    """
    if not isinstance(corrected, bool | np.bool_):
        raise TypeError(f"corrected: expected a bool, got {corrected!r}")
    p = as_probs(probs, atol=check_atol(atol))
    y = as_labels(labels, *p.shape)
    m = check_n_bins(n_bins, p.shape[0])
    return float(_confidence_batched(p, y[None, :], m, bool(corrected))[0])
