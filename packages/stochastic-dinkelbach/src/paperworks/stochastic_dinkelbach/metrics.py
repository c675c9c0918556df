"""Linear-fractional metrics of the binary confusion matrix, and their Dinkelbach subproblem.

A linear-fractional metric is ``M(C) = (a0 + a . C) / (b0 + b . C)`` with ``C = (TP, FP, FN, TN)`` the
confusion matrix as rates (entries sum to 1). Every instance contributes to the numerator and the
denominator additively: instance ``i`` in cell ``c_i`` adds ``a0 + a[c_i]`` and ``b0 + b[c_i]``, so the
empirical metric of ``n`` predictions is ``sum_i (a0 + a[c_i]) / sum_i (b0 + b[c_i])`` (the constants
fold into the per-instance increments). F-measure, Jaccard, accuracy and recall are of this
form; precision and specificity are too, but their denominators vanish on some data (nothing predicted
positive; no negatives), so they are refused.

Dinkelbach (1967): ``max_h A(h)/B(h) = lambda*`` if and only if ``max_h A(h) - lambda* B(h) = 0`` (with
``B > 0``). For a fixed ``lambda`` the subproblem ``max_h E[A - lambda B]`` decomposes over instances:
predicting 1 rather than 0 on an instance with ``P(y = 1 | x) = eta`` gains
``eta u(lambda) - (1 - eta) v(lambda)`` with

    u(lambda) = (a_TP - a_FN) - lambda (b_TP - b_FN)    (gain of a 1 on a positive)
    v(lambda) = (a_TN - a_FP) - lambda (b_TN - b_FP)    (gain of a 0 on a negative)

so the pointwise maximiser is ``1[eta > tau(lambda)]`` with ``tau = v / (u + v)`` whenever
``u + v > 0`` (:meth:`LinearFractionalMetric.threshold`): ``lambda / 2`` for F1,
``lambda / (1 + beta^2)`` for F-beta, ``lambda / (1 + lambda)`` for Jaccard (Koyejo et al. 2014).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from paperworks.core.validate import finite_float, positive_float

__all__ = [
    "CELLS",
    "LinearFractionalMetric",
    "confusion_counts",
    "fbeta",
    "get_metric",
    "metric_names",
]

CELLS = ("TP", "FP", "FN", "TN")
# cell index of (prediction, label): TP = 0, FP = 1, FN = 2, TN = 3
_CELL = np.array([[3, 2], [1, 0]])  # _CELL[pred, label]

_NOT_LINEAR_FRACTIONAL = {
    "mcc": "Matthews correlation",
    "matthews": "Matthews correlation",
    "matthewscorrcoef": "Matthews correlation",
    "gmean": "geometric mean of TPR and TNR",
    "hmean": "harmonic mean of TPR and TNR",
    "qmean": "quadratic mean of the error rates",
    "balancedaccuracy": "balanced accuracy (a sum of two ratios)",
    "auroc": "area under the ROC curve (not a function of one confusion matrix)",
    "auc": "area under the ROC curve (not a function of one confusion matrix)",
    "averageprecision": "average precision (not a function of one confusion matrix)",
    "cohenkappa": "Cohen's kappa (quadratic in the marginals)",
    "kappa": "Cohen's kappa (quadratic in the marginals)",
}


@dataclass(frozen=True)
class LinearFractionalMetric:
    """``M(C) = (a0 + a . C) / (b0 + b . C)``, ``C = (TP, FP, FN, TN)`` as rates.

    Checked on construction: the denominator is non-negative on every confusion matrix and positive on
    every one with at least one positive label (so ``M`` is defined whenever the data hold a positive),
    the metric is bounded, and its Dinkelbach subproblem is a threshold rule ``eta > tau(lambda)`` on the
    metric's whole range (``u + v > 0``, see the module docstring). ``zero_division``: the value given to
    ``0/0`` (no positive label and no positive prediction), 0 as in torchmetrics and scikit-learn.
    """

    a0: float
    a: tuple[float, float, float, float]
    b0: float
    b: tuple[float, float, float, float]
    name: str = "custom"
    zero_division: float = 0.0
    lo: float = field(init=False)
    hi: float = field(init=False)

    def __post_init__(self) -> None:
        a0 = finite_float(self.a0, "a0")
        b0 = finite_float(self.b0, "b0")
        a = _four(self.a, "a")
        b = _four(self.b, "b")
        zd = finite_float(self.zero_division, "zero_division")
        num = a0 + np.array(a)
        den = b0 + np.array(b)  # numerator and denominator of each pure confusion matrix (vertex)
        if np.any(den < 0):
            bad = [c for c, d in zip(CELLS, den) if d < 0]
            raise ValueError(
                f"b0, b: the denominator b0 + b.C turns negative on confusion matrices concentrated on {bad}"
            )
        # a confusion matrix with a positive label has mass on TP or FN: the denominator must be > 0 there
        for cell in ("TP", "FN"):
            if den[CELLS.index(cell)] <= 0:
                raise ValueError(
                    f"b0, b: the denominator b0 + b.C vanishes on data with positives (all mass on {cell}); "
                    "precision-like metrics are undefined when nothing is predicted positive"
                )
        for c, nu, de in zip(CELLS, num, den):
            if de == 0 and nu != 0:
                raise ValueError(
                    f"a0, a, b0, b: the metric is unbounded near confusion matrices concentrated on {c} "
                    f"(denominator 0, numerator {nu:g})"
                )
        values = [nu / de for nu, de in zip(num, den) if de > 0]
        lo, hi = float(min(values)), float(max(values))
        object.__setattr__(self, "a0", a0)
        object.__setattr__(self, "b0", b0)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "zero_division", zd)
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)
        for lam in (lo, hi):
            u, v = self.gains(lam)
            if not u + v > 0:
                raise ValueError(
                    f"metric {self.name!r}: not linear-fractional on the Dinkelbach path: the maximiser of "
                    f"A - lambda B is not a rule 'eta > tau' at lambda = {lam:g} (u + v = {u + v:g} <= 0)"
                )

    # -- values ----------------------------------------------------------------------------------
    @property
    def increments(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-instance numerator and denominator increments by cell (TP, FP, FN, TN), shapes (4,)."""
        return self.a0 + np.array(self.a), self.b0 + np.array(self.b)

    def value(self, tp, fp, fn, tn):
        """The metric from confusion counts (or rates); arrays broadcast. ``0/0`` -> ``zero_division``."""
        tp, fp, fn, tn = (np.asarray(v, dtype=float) for v in (tp, fp, fn, tn))
        total = tp + fp + fn + tn
        a, b = np.array(self.a), np.array(self.b)
        num = self.a0 * total + a[0] * tp + a[1] * fp + a[2] * fn + a[3] * tn
        den = self.b0 * total + b[0] * tp + b[1] * fp + b[2] * fn + b[3] * tn
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(den > 0, num / np.where(den > 0, den, 1.0), self.zero_division)
        return float(out) if out.ndim == 0 else out

    def score(self, y_true, y_pred) -> float:
        """The empirical metric of 0/1 predictions ``y_pred`` against labels ``y_true`` (shape (n,))."""
        y = as_labels(y_true, "y_true")
        p = as_labels(y_pred, "y_pred")
        if p.shape != y.shape:
            raise ValueError(f"y_pred: expected shape {y.shape} like y_true, got {p.shape}")
        return self.value(*confusion_counts(y, p))

    # -- the Dinkelbach subproblem ---------------------------------------------------------------
    def gains(self, lam):
        """``(u(lambda), v(lambda))``: gain of predicting 1 on a positive, of predicting 0 on a negative."""
        a, b = self.a, self.b
        u = (a[0] - a[2]) - lam * (b[0] - b[2])
        v = (a[3] - a[1]) - lam * (b[3] - b[1])
        return u, v

    def threshold(self, lam):
        """``tau(lambda)``: predicting 1 iff ``eta > tau`` maximises ``E[A - lambda B]`` pointwise.

        ``lambda`` is clipped to the metric's range ``[lo, hi]``; the result is clipped to ``[0, 1]``.
        """
        lam = np.clip(lam, self.lo, self.hi)
        u, v = self.gains(lam)
        return np.clip(v / (u + v), 0.0, 1.0)

    def threshold_coefficients(self) -> tuple[float, float, float, float]:
        """``(u0, u1, v0, v1)``: ``u = u0 - lambda u1``, ``v = v0 - lambda v1`` (vectorised trackers)."""
        a, b = self.a, self.b
        return (a[0] - a[2], b[0] - b[2], a[3] - a[1], b[3] - b[1])

    def __repr__(self) -> str:
        return (
            f"LinearFractionalMetric(name={self.name!r}, a0={self.a0:g}, a={self.a}, b0={self.b0:g}, "
            f"b={self.b})"
        )


def _four(v: object, name: str) -> tuple[float, float, float, float]:
    if isinstance(v, str) or not isinstance(v, Sequence | np.ndarray):
        raise TypeError(f"{name}: expected 4 coefficients for (TP, FP, FN, TN), got {type(v).__name__}")
    vals = list(v)
    if len(vals) != 4:
        raise ValueError(f"{name}: expected 4 coefficients for (TP, FP, FN, TN), got {len(vals)}")
    return tuple(finite_float(x, f"{name}[{i}]") for i, x in enumerate(vals))  # type: ignore[return-value]


def fbeta(beta: float = 1.0) -> LinearFractionalMetric:
    """F-beta = (1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP); beta > 0."""
    beta = positive_float(beta, "beta")
    b2 = beta * beta
    name = "f1" if beta == 1 else f"f{beta:g}"
    return LinearFractionalMetric(0.0, (1 + b2, 0.0, 0.0, 0.0), 0.0, (1 + b2, 1.0, b2, 0.0), name=name)


def _jaccard() -> LinearFractionalMetric:
    return LinearFractionalMetric(0.0, (1.0, 0.0, 0.0, 0.0), 0.0, (1.0, 1.0, 1.0, 0.0), name="jaccard")


def _accuracy() -> LinearFractionalMetric:
    return LinearFractionalMetric(0.0, (1.0, 0.0, 0.0, 1.0), 1.0, (0.0, 0.0, 0.0, 0.0), name="accuracy")


def _recall() -> LinearFractionalMetric:
    return LinearFractionalMetric(0.0, (1.0, 0.0, 0.0, 0.0), 0.0, (1.0, 0.0, 1.0, 0.0), name="recall")


# canonical name -> aliases (lower case, '_' and '-' removed); torchmetrics class and function names included
_ALIASES = {
    "f1": ("f1", "f1score", "binaryf1score", "binaryf1", "fmeasure", "fscore"),
    "fbeta": ("fbeta", "fbetascore", "binaryfbetascore", "binaryfbeta"),
    "jaccard": ("jaccard", "jaccardindex", "binaryjaccardindex", "iou", "jaccardscore"),
    "accuracy": ("accuracy", "binaryaccuracy", "accuracyscore"),
    "recall": ("recall", "binaryrecall", "recallscore", "tpr", "sensitivity"),
}
_PRECISION = ("precision", "binaryprecision", "precisionscore", "ppv")
# TN / (TN + FP): its denominator vanishes on data without negatives
_SPECIFICITY = ("specificity", "binaryspecificity", "tnr")


def metric_names() -> tuple[str, ...]:
    """Canonical names accepted by :func:`get_metric` (each with its torchmetrics-style aliases)."""
    return tuple(_ALIASES)


def _normalise(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "").replace(" ", "")


def get_metric(metric: object = "f1", *, beta: float | None = None) -> LinearFractionalMetric:
    """A :class:`LinearFractionalMetric` from a name, coefficients or an instance.

    ``metric``: a name (``"f1"``, ``"fbeta"`` with ``beta``, ``"f2"``, ``"jaccard"``, ``"accuracy"``,
    ``"recall"``; torchmetrics names such as ``"BinaryF1Score"``,
    ``"binary_fbeta_score"``, ``"BinaryJaccardIndex"`` are accepted), a tuple ``(a0, a, b0, b)`` with
    ``a``, ``b`` the coefficients of ``(TP, FP, FN, TN)``, or a :class:`LinearFractionalMetric`.
    Names of metrics that are not linear-fractional (MCC, G-mean, balanced accuracy, AUROC, ...) raise.
    """
    if isinstance(metric, LinearFractionalMetric):
        return metric
    if isinstance(metric, tuple | list) and len(metric) == 4:
        a0, a, b0, b = metric
        return LinearFractionalMetric(a0, a, b0, b)
    if not isinstance(metric, str):
        raise TypeError(
            "metric: expected a name, (a0, a, b0, b) or a LinearFractionalMetric, "
            f"got {type(metric).__name__}"
        )
    key = _normalise(metric)
    if key in _NOT_LINEAR_FRACTIONAL:
        raise ValueError(
            f"metric: {metric!r} ({_NOT_LINEAR_FRACTIONAL[key]}) is not linear-fractional, so it has no "
            "Dinkelbach path; for a concave utility of the confusion matrix use OnlineConcaveUtility"
        )
    if key in _SPECIFICITY:
        raise ValueError(
            f"metric: {metric!r}: the denominator TN + FP vanishes on data without negatives; "
            "not supported on the Dinkelbach path (its maximiser predicts nothing positive)"
        )
    if key in _PRECISION:
        raise ValueError(
            f"metric: {metric!r}: the denominator TP + FP vanishes when nothing is predicted positive "
            "(and its maximiser predicts almost nothing); not supported on the Dinkelbach path"
        )
    if key.startswith("f") and key[1:].replace(".", "", 1).isdigit():
        if beta is not None and float(key[1:]) != beta:
            raise ValueError(f"beta: {beta!r} contradicts metric {metric!r}")
        return fbeta(float(key[1:]))
    for canonical, aliases in _ALIASES.items():
        if key in aliases:
            if canonical == "fbeta":
                if beta is None:
                    raise ValueError(f"beta: metric {metric!r} needs beta > 0, got None")
                return fbeta(beta)
            if beta is not None and canonical != "f1":
                raise ValueError(f"beta: only F-measures take beta, not {metric!r}")
            if canonical == "f1":
                return fbeta(1.0 if beta is None else beta)
            return {
                "jaccard": _jaccard,
                "accuracy": _accuracy,
                "recall": _recall,
            }[canonical]()
    known = sorted({a for al in _ALIASES.values() for a in al[:2]})
    raise ValueError(f"metric: unknown name {metric!r}; expected one of {known} or (a0, a, b0, b)")


def as_labels(y: object, name: str) -> np.ndarray:
    """Labels in {0, 1} (ints, bools or floats equal to 0/1) as an int64 array of shape (n,), n >= 1."""
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-d array of labels, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty array of labels (an empty stream)")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name}: expected labels in {{0, 1}}, got dtype {arr.dtype}")
    bad = ~np.isin(arr, (0, 1))
    if bad.any():
        shown = np.unique(arr[bad])[:5].tolist()
        raise ValueError(f"{name}: expected labels in {{0, 1}}, found {shown}")
    return arr.astype(np.int64)


def as_probabilities(p: object, name: str, *, ndim: int = 1) -> np.ndarray:
    """Probabilities in [0, 1], finite, float64, non-empty, with ``ndim`` dimensions."""
    arr = np.asarray(p)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name}: expected probabilities, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d array, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty array (an empty stream)")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: expected finite probabilities, found NaN or inf")
    if arr.min() < 0 or arr.max() > 1:
        raise ValueError(
            f"{name}: expected probabilities in [0, 1], got min {arr.min():.4g}, max {arr.max():.4g}"
        )
    return arr


def confusion_counts(y_true: np.ndarray, y_pred: np.ndarray, axis: int = -1):
    """(TP, FP, FN, TN) counts of 0/1 arrays along ``axis`` (no validation; see :func:`as_labels`)."""
    y, p = np.asarray(y_true), np.asarray(y_pred)
    tp = np.sum((p == 1) & (y == 1), axis=axis)
    fp = np.sum((p == 1) & (y == 0), axis=axis)
    fn = np.sum((p == 0) & (y == 1), axis=axis)
    tn = np.sum((p == 0) & (y == 0), axis=axis)
    return tp, fp, fn, tn


def cell_index(y_pred: np.ndarray, y_true: np.ndarray) -> np.ndarray:
    """Cell of each (prediction, label) pair: 0 TP, 1 FP, 2 FN, 3 TN."""
    return _CELL[np.asarray(y_pred, dtype=np.int64), np.asarray(y_true, dtype=np.int64)]
