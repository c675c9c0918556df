"""Dinkelbach's method on a finite sample, over the threshold classifiers ``1[score > tau]``.

On ``n`` scored instances the threshold family is the ``top-k`` sets of the scores (k = 0..n, ties kept
together). With per-instance numerator and denominator increments (from labels, or their expectations
under probabilities), ``A_k`` and ``B_k`` are cumulative sums over the sorted scores, and

    G(lambda) = max_k A_k - lambda B_k

is convex and decreasing (``B_k > 0``); its root is ``max_k A_k / B_k`` (Dinkelbach 1967). The iteration
``k <- argmax_k A_k - lambda B_k``, ``lambda <- A_k / B_k`` is Newton's method on ``G`` and stops after
finitely many steps. :func:`best_fixed_threshold` is the direct maximisation (any metric of the counts).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import finite_array

from .metrics import as_labels, as_probabilities, get_metric

__all__ = ["DinkelbachResult", "best_fixed_threshold", "dinkelbach_root", "threshold_counts"]


@dataclass(frozen=True)
class DinkelbachResult:
    """The root ``lambda`` (= the best metric value), the threshold and size of its set, the steps."""

    root: float
    threshold: float
    k: int
    iterations: int


def threshold_counts(scores: np.ndarray, pos: np.ndarray):
    """Confusion counts of every threshold classifier ``1[score > tau]`` on one sample.

    ``scores``, ``pos`` (n,): scores and positive weights (labels, or probabilities for expected
    counts). Returns ``(thresholds, tp, fp, fn, tn)``, each of shape (m + 1,) for the ``m`` distinct
    scores: entry ``j`` predicts positive the ``j`` highest distinct scores (threshold between the
    ``j``-th and ``j + 1``-th; entry 0 predicts nothing positive, threshold = max score).
    """
    order = np.argsort(-scores, kind="stable")
    s, w = scores[order], pos[order]
    cut = np.flatnonzero(np.diff(s) != 0) + 1  # ends of groups of equal scores
    ends = np.concatenate([cut, [s.size]])
    cum_pos = np.concatenate([[0.0], np.cumsum(w)[ends - 1]])
    cum_n = np.concatenate([[0], ends]).astype(float)
    total_pos = float(w.sum())
    tp = cum_pos
    fp = cum_n - cum_pos
    fn = total_pos - tp
    tn = s.size - total_pos - fp
    # threshold of entry j: midway between the j-th and (j+1)-th distinct scores
    distinct = s[np.concatenate([[0], cut])]
    below = np.concatenate([distinct[1:], [distinct[-1] - 1.0]])
    thr = np.concatenate([[distinct[0]], (distinct + below) / 2])
    return thr, tp, fp, fn, np.maximum(tn, 0.0)


def _sample(scores, labels, probs):
    s = finite_array(scores, "scores", ndim=1)
    if (labels is None) == (probs is None):
        raise ValueError("labels, probs: give exactly one (labels in {0, 1}, or probabilities)")
    w = as_labels(labels, "labels").astype(float) if labels is not None else as_probabilities(probs, "probs")
    if w.shape != s.shape:
        raise ValueError(f"labels/probs: expected shape {s.shape} like scores, got {w.shape}")
    return s, w


def dinkelbach_root(
    scores, metric: object = "f1", *, labels=None, probs=None, max_iter: int = 1000
) -> DinkelbachResult:
    """Dinkelbach's method over the threshold classifiers of ``scores`` (shape (n,), finite).

    ``labels`` (n,) in {0, 1}: the empirical metric; or ``probs`` (n,): the expected counts under
    independent labels with these probabilities (the plug-in population of the sample). Returns the root
    ``lambda = max_tau M(1[scores > tau])``, the threshold attaining it and the number of iterations.
    """
    m = get_metric(metric)
    s, w = _sample(scores, labels, probs)
    thr, tp, fp, fn, tn = threshold_counts(s, w)
    num_c, den_c = m.increments
    A = num_c[0] * tp + num_c[1] * fp + num_c[2] * fn + num_c[3] * tn
    B = den_c[0] * tp + den_c[1] * fp + den_c[2] * fn + den_c[3] * tn
    ok = B > 0
    if not ok.any():
        raise ValueError("labels/probs: the metric's denominator is 0 for every threshold (no positives?)")
    lam, k = m.lo, -1
    for it in range(1, max_iter + 1):
        g = np.where(ok, A - lam * B, -np.inf)
        k = int(np.argmax(g))
        new = float(A[k] / B[k])
        if new <= lam:
            return DinkelbachResult(max(new, lam), float(thr[k]), k, it)
        lam = new
    return DinkelbachResult(lam, float(thr[k]), k, max_iter)


def best_fixed_threshold(scores, labels, metric: object = "f1") -> tuple[float, float]:
    """``(max_tau M(1[scores > tau], labels), tau)``: the best fixed threshold in hindsight.

    ``metric``: a linear-fractional metric (name or instance) or any object with
    ``value(tp, fp, fn, tn)`` (e.g. a concave utility). Direct maximisation over the ``m + 1`` threshold
    classifiers (exact, O(n log n)).
    """
    if not hasattr(metric, "value"):
        metric = get_metric(metric)
    s = finite_array(scores, "scores", ndim=1)
    y = as_labels(labels, "labels")
    if y.shape != s.shape:
        raise ValueError(f"labels: expected shape {s.shape} like scores, got {y.shape}")
    thr, tp, fp, fn, tn = threshold_counts(s, y.astype(float))
    vals = np.asarray(metric.value(tp, fp, fn, tn), dtype=float)
    j = int(np.argmax(vals))
    return float(vals[j]), float(thr[j])


def best_fixed_threshold_batch(scores: np.ndarray, labels: np.ndarray, metric, ns) -> np.ndarray:
    """Best fixed threshold value in hindsight on each prefix length of ``ns`` for (R, n) streams.

    Returns (R, len(ns)). No validation (internal, used by the experiment on generated streams).
    """
    out = np.empty((scores.shape[0], len(ns)))
    for r in range(scores.shape[0]):
        for j, n in enumerate(ns):
            _, tp, fp, fn, tn = threshold_counts(scores[r, :n], labels[r, :n].astype(float))
            out[r, j] = float(np.max(metric.value(tp, fp, fn, tn)))
    return out
