"""Averaged two-bin calibration error (ATB) of Hartline, Hu & Wu (arXiv 2508.13100), exact, and its
multiclass versions.

Binary ATB of scores ``s_i`` in [0, 1] and outcomes ``y_i`` in {0, 1}: split the samples at a
threshold ``t`` into the two bins ``{s_i < t}`` and ``{s_i >= t}``, take the squared sum of the
residuals ``s_i - y_i`` of each bin, and average over ``t ~ Uniform[0, 1]``::

    ATB = int_0^1 1/n^2 [ (sum_{s_i < t} (s_i - y_i))^2 + (sum_{s_i >= t} (s_i - y_i))^2 ] dt.

The integrand is constant between consecutive sorted scores, so with the scores sorted,
``s_(0) = 0``, ``s_(n+1) = 1`` and ``P_j`` the sum of the first ``j`` residuals,
``ATB = 1/n^2 sum_{j=0}^{n} (s_(j+1) - s_(j)) (P_j^2 + (P_n - P_j)^2)``: one sort and one cumulative
sum, O(n log n). Both bins depend on the scores only and the labels are independent given the
inputs, so ``E[ATB] = int 1/n^2 (bias_L(t)^2 + bias_R(t)^2) dt + 1/n^2 sum_i q_i (1 - q_i)``: the
truth (zero bias at every threshold) minimises it, strictly up to pooling: any other report has a
non-zero bias on a set of thresholds of positive length, unless it is constant on groups of samples
whose biases cancel within each group (reporting a group's mean distribution ties with the truth).

Multiclass (our reading of the paper's extension; the paper's text was not available here):

* :func:`classwise_atb` - the mean over classes ``c`` of the binary ATB of ``(p_c, [y = c])``;
* :func:`multiclass_atb` - a linear property ``v = A p`` (``A = I``: full multiclass), residual
  vectors ``v_i - A e_{y_i}``: for each coordinate ``j`` the two bins ``{v_ij < t}``,
  ``{v_ij >= t}``, the squared l2 norms of the two residual sums, ``t`` uniform over the range of
  ``v_j`` on the simplex (``[min_c A_jc, max_c A_jc]``), then the mean over coordinates. Its
  diagonal part is the classwise ATB; the cross terms test each class against the bins of the
  others. With k = 2 and ``A = I`` it equals twice the binary ATB (``||e_y - p||^2 = 2 (y - p_1)^2``);
* :func:`confidence_atb` - the binary ATB of ``(max_c p_c, [y = argmax p])`` plus the truthful
  correction ``1/n^2 sum_i (1 - a_i)`` (the same correction as the binned confidence error,
  :func:`~paperworks.truthful_calibration.truthful_confidence_error`).

Every function takes NumPy arrays or torch tensors and returns a float.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._inputs import as_labels, as_probs, as_property_matrix, check_atol, to_numpy
from ._kernels import top_label

__all__ = ["binary_atb", "classwise_atb", "confidence_atb", "multiclass_atb"]

_CHUNK = 4_000_000  # entries of the (R, n, d) prefix sums held at once


def _atb_sorted(
    s: np.ndarray, r: np.ndarray, lo: float = 0.0, hi: float = 1.0, order: np.ndarray | None = None
) -> np.ndarray:
    """ATB of scores ``s`` (n,) with residuals ``r`` (R, n) or (R, n, d) (squared l2 norm): (R,)."""
    n = s.shape[0]
    if order is None:
        order = np.argsort(s, kind="stable")
    edges = np.concatenate(([lo], s[order], [hi]))
    w = np.diff(edges)  # (n + 1,)
    out = np.empty(r.shape[0])
    step = max(1, _CHUNK // max(1, r[0].size))
    for a in range(0, r.shape[0], step):
        rr = r[a : a + step][:, order]
        pre = np.zeros((rr.shape[0], n + 1, *rr.shape[2:]))
        np.cumsum(rr, axis=1, out=pre[:, 1:])
        tail = pre[:, -1:] - pre
        sq = pre**2 + tail**2
        if sq.ndim == 3:
            sq = sq.sum(axis=2)
        out[a : a + step] = sq @ w
    return out / (n * n * (hi - lo))


def _binary_batched(s: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _atb_sorted(s, s[None, :] - y)


def _classwise_batched(p: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Mean over classes of the binary ATB of (p_c, [y = c]); labels (R, n)."""
    _n, k = p.shape
    total = np.zeros(labels.shape[0])
    for c in range(k):
        pc = p[:, c].astype(np.float64)
        total += _atb_sorted(pc, pc[None, :] - (labels == c))
    return total / k


def _property_batched(p: np.ndarray, labels: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Vector ATB of the property ``A p``, A (d, k); labels (R, n). Mean over non-constant coordinates."""
    v = p.astype(np.float64) @ a.T  # (n, d)
    resid = v[None, :, :] - a.T[labels]  # (R, n, d)
    lo, hi = a.min(axis=1), a.max(axis=1)
    coords = [j for j in range(a.shape[0]) if hi[j] > lo[j]]
    total = np.zeros(labels.shape[0])
    for j in coords:
        total += _atb_sorted(v[:, j], resid, float(lo[j]), float(hi[j]))
    return total / len(coords)


def _confidence_batched(p: np.ndarray, labels: np.ndarray, corrected: bool = True) -> np.ndarray:
    top, conf = top_label(p)
    hits = labels == top[None, :]
    n = p.shape[0]
    out = _atb_sorted(conf, conf[None, :] - hits)
    if corrected:
        out = out + (~hits).sum(axis=1) / n**2
    return out


def binary_atb(scores: Any, outcomes: Any) -> float:
    """Exact averaged two-bin calibration error of binary predictions (Hartline et al. 2025).

    scores: (n,) predicted probabilities of the positive outcome, in [0, 1]; outcomes: (n,) 0/1
    (ints, bools or floats). Returns the ATB of the module docstring (a float >= 0), O(n log n).
    """
    s, _ = to_numpy(scores, "scores")
    if s.dtype.kind not in "biuf" or s.dtype.kind == "b":
        raise TypeError(f"scores: expected real-valued probabilities, got dtype {s.dtype}")
    if s.ndim != 1 or s.shape[0] == 0:
        raise ValueError(f"scores: expected a non-empty 1-d array of shape (n,), got shape {s.shape}")
    s = s.astype(np.float64)
    if not np.isfinite(s).all():
        raise ValueError("scores: expected finite values, found NaN or inf")
    if s.min() < 0 or s.max() > 1:
        raise ValueError(
            f"scores: expected probabilities in [0, 1], got min {s.min():.4g}, max {s.max():.4g}"
        )
    y, _ = to_numpy(outcomes, "outcomes")
    if y.dtype.kind not in "biuf":
        raise TypeError(f"outcomes: expected 0/1 outcomes, got dtype {y.dtype}")
    if y.shape != s.shape:
        raise ValueError(f"outcomes: expected shape {s.shape} to match scores, got shape {y.shape}")
    y = y.astype(np.float64)
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("outcomes: expected 0/1 outcomes, found another value")
    return float(_binary_batched(s, y[None, :])[0])


def classwise_atb(probs: Any, labels: Any, *, atol: float | None = None) -> float:
    """Classwise ATB: the mean over classes ``c`` of :func:`binary_atb` of ``(p[:, c], [y = c])``.

    probs: (n, k); labels: (n,). Perfectly and strictly truthful for every class's probability.
    """
    p = as_probs(probs, atol=check_atol(atol))
    y = as_labels(labels, *p.shape)
    return float(_classwise_batched(p, y[None, :])[0])


def multiclass_atb(
    probs: Any, labels: Any, property_matrix: Any = None, *, atol: float | None = None
) -> float:
    """Multiclass (vector) ATB of the linear property ``A p`` (module docstring).

    probs: (n, k); labels: (n,); property_matrix ``A``: (d, k) real, or (k,) for one property, or None
    for the identity (full multiclass calibration). Coordinates that are constant on the simplex
    (a row of ``A`` with equal entries) carry no information and are skipped.
    """
    p = as_probs(probs, atol=check_atol(atol))
    n, k = p.shape
    y = as_labels(labels, n, k)
    if property_matrix is None:
        a = np.eye(k)
    else:
        a = as_property_matrix(property_matrix, k, varying=True)
    return float(_property_batched(p, y[None, :], a)[0])


def confidence_atb(probs: Any, labels: Any, *, corrected: bool = True, atol: float | None = None) -> float:
    """ATB of the confidence ``c_i = max_c p_ic`` against ``a_i = [y_i = argmax p_i]``, plus the
    truthful correction ``1/n^2 sum_i (1 - a_i)`` (``corrected=False``: without it, not truthful).

    probs: (n, k); labels: (n,). The correction turns the per-sample noise ``q(1 - q)`` of the
    reported top class into ``1 - q^2``, smallest for the truly most likely class; the error depends
    on the report only through (argmax, max), so reports sharing both tie with the truth.
    """
    if not isinstance(corrected, bool | np.bool_):
        raise TypeError(f"corrected: expected a bool, got {corrected!r}")
    p = as_probs(probs, atol=check_atol(atol))
    y = as_labels(labels, *p.shape)
    return float(_confidence_batched(p, y[None, :], bool(corrected))[0])
