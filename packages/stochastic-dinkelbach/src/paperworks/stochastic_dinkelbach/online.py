"""Online threshold learners: the stochastic Dinkelbach-root tracker and the concave-utility rule.

Protocol (the abstract's): at round ``t`` the learner sees ``x_t``, has a probability ``p_t`` from an
online estimator (learned on rounds ``< t``), predicts ``yhat_t`` irrevocably, then sees ``y_t``. The
estimator's updates use ``(x_t, y_t)`` only, so the threshold learners here take the stream of
``(p_t, y_t)`` and are independent of how ``p_t`` was produced.

:class:`DinkelbachTracker` (our reading of the paper's stochastic Dinkelbach-root method): keep a root
estimate ``lambda_t`` of ``G(lambda) = max_h E[A(h) - lambda B(h)] = 0``; predict
``yhat_t = 1[p_t > tau(lambda_t)]``, the maximiser of ``A - lambda_t B`` at the current root
(:meth:`~paperworks.stochastic_dinkelbach.LinearFractionalMetric.threshold`); then take a stochastic
root-finding step with the round's numerator and denominator increments ``a_t, b_t`` of that prediction:

    lambda_{t+1} = Proj_[lo, hi]( lambda_t + gamma_t (a_t - lambda_t b_t) )

``G'(lambda) = -B(h_lambda)`` (envelope theorem), so the Newton step is ``gamma_t = 1 / S_t`` with
``S_t = w0 + sum_{s <= t} b_s`` (``step="newton"``, the default: Dinkelbach's method is Newton's method on
``G``). It makes ``lambda_{t+1} = (w0 lambda_0 + sum a_s) / (w0 + sum b_s)``, the running metric of the
learner's own predictions shrunk to a prior ``lambda_0`` of weight ``w0``; with ``w0 = 0`` and F1 it is
exactly OFO (Busa-Fekete et al. 2015; :func:`ofo_tracker`). ``step="sqrt"`` takes the slower
stochastic-approximation step ``gamma_t = scale * sqrt(t) / S_t`` (capped so that ``gamma_t b_t <= 1``).
The online-to-batch classifier is ``(eta_n, tau(lambda_n))``.

:class:`OnlineConcaveUtility`: for a utility ``psi`` of the confusion matrix, predict by the gradient of
``psi`` at the running confusion matrix (the linearised, cost-sensitive rule of Kotlowski et al. 2024):
``yhat = 1`` iff ``p (G_TP - G_FN) > (1 - p) (G_TN - G_FP)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import finite_float, nonnegative_float, one_of, positive_float

from .metrics import LinearFractionalMetric, as_labels, as_probabilities, get_metric

__all__ = [
    "CONCAVE_UTILITIES",
    "ConcaveUtility",
    "DinkelbachTracker",
    "OnlineConcaveUtility",
    "StreamResult",
    "ofo_tracker",
    "run_trackers",
]

STEPS = ("newton", "sqrt")


@dataclass(frozen=True)
class StreamResult:
    """What a tracker did on a stream: predictions, the root before each round, final state.

    Shapes: ``predictions`` and ``lambdas`` (n,) or (R, n); ``numerator``, ``denominator`` (the realised
    metric's sums, no prior) and ``final_lambda`` () or (R,). ``metric_value`` = numerator / denominator.
    """

    predictions: np.ndarray
    lambdas: np.ndarray
    final_lambda: np.ndarray
    numerator: np.ndarray
    denominator: np.ndarray

    @property
    def metric_value(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.denominator > 0, self.numerator / np.maximum(self.denominator, 1e-300), 0.0)


class DinkelbachTracker:
    """Stochastic Dinkelbach-root threshold learner for one linear-fractional metric.

    Args:
        metric: a name, ``(a0, a, b0, b)`` or a :class:`LinearFractionalMetric` (see :func:`get_metric`).
        beta: for ``metric="fbeta"``.
        step: ``"newton"`` (``gamma_t = 1 / S_t``) or ``"sqrt"`` (``gamma_t = scale sqrt(t) / S_t``).
        step_scale: ``scale`` of the ``"sqrt"`` step (> 0).
        init: ``lambda_0``; default the middle of the metric's range.
        prior_weight: ``w0 >= 0``, the weight of ``lambda_0`` in denominator units (one F1 positive
            weighs 2, a false positive or negative 1).

    Use :meth:`predict_one` / :meth:`update_one` per instance (plain floats), or :meth:`run` on whole
    streams of shape (n,) or (R, n) (R independent streams, vectorised).
    """

    def __init__(
        self,
        metric: object = "f1",
        *,
        beta: float | None = None,
        step: str = "newton",
        step_scale: float = 1.0,
        init: float | None = None,
        prior_weight: float = 1.0,
    ) -> None:
        self.metric: LinearFractionalMetric = get_metric(metric, beta=beta)
        self.step = one_of(step, "step", STEPS)
        self.step_scale = positive_float(step_scale, "step_scale")
        m = self.metric
        lam0 = (m.lo + m.hi) / 2 if init is None else finite_float(init, "init")
        if not m.lo <= lam0 <= m.hi:
            raise ValueError(f"init: expected a value in the metric's range [{m.lo:g}, {m.hi:g}], got {lam0}")
        self.init = lam0
        self.prior_weight = nonnegative_float(prior_weight, "prior_weight")
        num, den = m.increments
        self._num = [float(v) for v in num]
        self._den = [float(v) for v in den]
        self._coef = tuple(float(c) for c in m.threshold_coefficients())
        self.reset()

    def reset(self) -> DinkelbachTracker:
        self.lambda_ = self.init
        self.t_ = 0
        self._S = self.prior_weight
        self.numerator_ = 0.0
        self.denominator_ = 0.0
        self.counts_ = [0, 0, 0, 0]  # TP, FP, FN, TN of the online predictions
        return self

    @property
    def threshold_(self) -> float:
        """``tau(lambda_t)``: the current threshold (and the online-to-batch one after the stream)."""
        u0, u1, v0, v1 = self._coef  # plain floats: this runs once per instance
        lam = self.lambda_
        u, v = u0 - lam * u1, v0 - lam * v1
        return min(max(v / (u + v), 0.0), 1.0)

    @property
    def score_(self) -> float:
        """The realised metric of the online predictions so far (``zero_division`` before any)."""
        return self.numerator_ / self.denominator_ if self.denominator_ > 0 else self.metric.zero_division

    def predict_one(self, p: float) -> int:
        """``1[p > tau(lambda_t)]`` (no state change)."""
        return int(p > self.threshold_)

    def update_one(self, y_pred: int, y_true: int) -> None:
        """One root-finding step with the increments of the round's (prediction, label)."""
        cell = (3, 2, 1, 0)[2 * int(y_pred) + int(y_true)]
        a, b = self._num[cell], self._den[cell]
        self.t_ += 1
        self.counts_[cell] += 1
        self.numerator_ += a
        self.denominator_ += b
        self._S += b
        if self._S <= 0:
            return
        gamma = 1.0 / self._S
        if self.step == "sqrt":
            gamma = self.step_scale * math.sqrt(self.t_) / self._S
            if b > 0:
                gamma = min(gamma, 1.0 / b)
        lam = self.lambda_ + gamma * (a - self.lambda_ * b)
        self.lambda_ = min(max(lam, self.metric.lo), self.metric.hi)

    def learn_one(self, p: float, y_true: int) -> int:
        """Predict for probability ``p``, then update with the label; returns the prediction."""
        y_pred = self.predict_one(p)
        self.update_one(y_pred, y_true)
        return y_pred

    def run(self, probs, labels) -> StreamResult:
        """Run fresh (from ``init``) over streams ``probs``, ``labels`` of shape (n,) or (R, n)."""
        p = np.asarray(probs)
        ndim = p.ndim
        if ndim not in (1, 2):
            raise ValueError(f"probs: expected shape (n,) or (R, n), got {p.shape}")
        p = as_probabilities(p, "probs", ndim=ndim)
        y = np.asarray(labels)
        if y.shape != p.shape:
            raise ValueError(f"labels: expected shape {p.shape} like probs, got {y.shape}")
        as_labels(y.reshape(-1), "labels")
        res = run_trackers([self], p.reshape(-1, p.shape[-1])[None], y.reshape(-1, p.shape[-1]))
        out = [np.asarray(v)[0] for v in res]
        if ndim == 1:
            out = [v[0] for v in out]
        return StreamResult(*out)


def ofo_tracker(beta: float = 1.0) -> DinkelbachTracker:
    """OFO (Busa-Fekete et al. 2015): threshold ``F_t / (1 + beta^2)`` at the running F-measure, from 0.

    The Newton-step tracker with ``init = 0`` and no prior weight (their ``a_0 = b_0 = 0``).
    """
    return DinkelbachTracker("fbeta", beta=beta, step="newton", init=0.0, prior_weight=0.0)


def run_trackers(trackers, probs: np.ndarray, labels: np.ndarray, sources=None):
    """Run K trackers on R streams at once, vectorised over (K, R); a loop over time only.

    ``probs``: (S, R, n) probability streams; tracker ``k`` reads ``probs[sources[k]]`` (default: S = 1,
    shared by every tracker, or S = K, one each); ``labels`` (R, n) in {0, 1} (not validated here).
    Returns ``(predictions (K, R, n) int8, lambdas (K, R, n), final_lambda (K, R),
    numerator (K, R), denominator (K, R))``.
    """
    K = len(trackers)
    p = np.asarray(probs, dtype=float)
    R, n = p.shape[1], p.shape[2]
    y = np.asarray(labels, dtype=np.int64)
    num = np.array([t.metric.increments[0] for t in trackers])  # (K, 4)
    den = np.array([t.metric.increments[1] for t in trackers])
    coef = np.array([t.metric.threshold_coefficients() for t in trackers])  # (K, 4)
    u0, u1, v0, v1 = (coef[:, i : i + 1] for i in range(4))
    lo = np.array([t.metric.lo for t in trackers])[:, None]
    hi = np.array([t.metric.hi for t in trackers])[:, None]
    sqrt_step = np.array([t.step == "sqrt" for t in trackers])[:, None]
    scale = np.array([t.step_scale for t in trackers])[:, None]
    lam = np.repeat(np.array([t.init for t in trackers])[:, None], R, axis=1)
    S = np.repeat(np.array([t.prior_weight for t in trackers])[:, None], R, axis=1)
    A = np.zeros((K, R))
    B = np.zeros((K, R))
    preds = np.empty((K, R, n), dtype=np.int8)
    lams = np.empty((K, R, n))
    rows = np.arange(K)[:, None]
    lookup = np.array([[3, 2], [1, 0]])
    if sources is None:
        sources = np.zeros(K, dtype=np.int64) if p.shape[0] == 1 else np.arange(K)
    sources = np.asarray(sources, dtype=np.int64)
    if sources.shape != (K,) or sources.min() < 0 or sources.max() >= p.shape[0]:
        raise ValueError(f"sources: expected {K} indices into the {p.shape[0]} probability streams")
    single = bool(np.all(sources == sources[0]))
    for t in range(n):
        lams[:, :, t] = lam
        uu = u0 - lam * u1
        vv = v0 - lam * v1
        tau = np.clip(vv / (uu + vv), 0.0, 1.0)
        pt = p[sources[0], :, t] if single else p[sources, :, t]
        pred = (pt > tau).astype(np.int64)
        preds[:, :, t] = pred
        cell = lookup[pred, y[:, t]]
        a = num[rows, cell]
        b = den[rows, cell]
        A += a
        B += b
        S += b
        with np.errstate(divide="ignore", invalid="ignore"):
            gamma = np.where(S > 0, 1.0 / np.where(S > 0, S, 1.0), 0.0)
            if sqrt_step.any():
                cap = np.where(b > 0, 1.0 / np.where(b > 0, b, 1), np.inf)
                g2 = np.minimum(scale * math.sqrt(t + 1) * gamma, cap)
                gamma = np.where(sqrt_step, g2, gamma)
        lam = np.clip(lam + gamma * (a - lam * b), lo, hi)
    return preds, lams, lam, A, B


# -- concave utilities (Kotlowski et al. 2024's online rule) ----------------------------------------


@dataclass(frozen=True)
class ConcaveUtility:
    """A utility of the confusion matrix through ``TPR = TP / (TP + FN)`` and ``TNR = TN / (TN + FP)``.

    ``kind``: ``"gmean"`` (sqrt(TPR TNR)), ``"hmean"`` (2 TPR TNR / (TPR + TNR)) or ``"qmean"``
    (1 - sqrt(((1 - TPR)^2 + (1 - TNR)^2) / 2)); each is concave in (TPR, TNR).
    """

    kind: str = "gmean"

    def __post_init__(self) -> None:
        one_of(self.kind, "kind", CONCAVE_UTILITIES)

    @property
    def name(self) -> str:
        return self.kind

    def _psi(self, r, s):
        if self.kind == "gmean":
            return np.sqrt(r * s)
        if self.kind == "hmean":
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(r + s > 0, 2 * r * s / np.where(r + s > 0, r + s, 1), 0.0)
        return 1 - np.sqrt(((1 - r) ** 2 + (1 - s) ** 2) / 2)

    def _dpsi(self, r: float, s: float) -> tuple[float, float]:
        if self.kind == "gmean":
            root = math.sqrt(max(r * s, 1e-12))
            return s / (2 * root), r / (2 * root)
        if self.kind == "hmean":
            d = max(r + s, 1e-12)
            return 2 * s * s / (d * d), 2 * r * r / (d * d)
        q = math.sqrt(max(((1 - r) ** 2 + (1 - s) ** 2) / 2, 1e-12))
        return (1 - r) / (2 * q), (1 - s) / (2 * q)

    def value(self, tp, fp, fn, tn):
        """The utility from counts or rates (arrays broadcast); 0 where TPR or TNR is undefined."""
        tp, fp, fn, tn = (np.asarray(v, dtype=float) for v in (tp, fp, fn, tn))
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.where(tp + fn > 0, tp / np.where(tp + fn > 0, tp + fn, 1), 0.0)
            s = np.where(tn + fp > 0, tn / np.where(tn + fp > 0, tn + fp, 1), 0.0)
        out = np.where((tp + fn > 0) & (tn + fp > 0), self._psi(r, s), 0.0)
        return float(out) if out.ndim == 0 else out

    def gradient(self, tp: float, fp: float, fn: float, tn: float) -> tuple[float, float, float, float]:
        """``d psi / d (TP, FP, FN, TN)`` at the given (positive) counts, by the chain rule."""
        P, N = tp + fn, tn + fp
        r, s = tp / P, tn / N
        dr, ds = self._dpsi(r, s)
        return dr * fn / P**2, -ds * tn / N**2, -dr * tp / P**2, ds * fp / N**2


CONCAVE_UTILITIES = ("gmean", "hmean", "qmean")


class OnlineConcaveUtility:
    """The linearised online rule for a concave utility (Kotlowski et al. 2024, binary case).

    Predict ``1`` iff ``p (G_TP - G_FN) > (1 - p) (G_TN - G_FP)`` with ``G`` the utility's gradient at
    the running confusion counts plus ``prior`` pseudo-counts in every cell (so that ``G`` is defined
    from the first round).
    """

    def __init__(self, utility: str | ConcaveUtility = "gmean", *, prior: float = 1.0) -> None:
        self.utility = utility if isinstance(utility, ConcaveUtility) else ConcaveUtility(utility)
        self.prior = positive_float(prior, "prior")
        self.reset()

    def reset(self) -> OnlineConcaveUtility:
        self.counts_ = [0.0, 0.0, 0.0, 0.0]
        self.t_ = 0
        return self

    def threshold(self) -> tuple[float, float]:
        """``(w1, w0)``: predict 1 iff ``p w1 > (1 - p) w0``."""
        c = [v + self.prior for v in self.counts_]
        g = self.utility.gradient(*c)
        return g[0] - g[2], g[3] - g[1]

    def predict_one(self, p: float) -> int:
        w1, w0 = self.threshold()
        return int(p * w1 > (1 - p) * w0)

    def update_one(self, y_pred: int, y_true: int) -> None:
        self.counts_[(3, 2, 1, 0)[2 * int(y_pred) + int(y_true)]] += 1
        self.t_ += 1

    def learn_one(self, p: float, y_true: int) -> int:
        y_pred = self.predict_one(p)
        self.update_one(y_pred, y_true)
        return y_pred

    @property
    def score_(self) -> float:
        return float(self.utility.value(*self.counts_))

    def run(self, probs, labels) -> np.ndarray:
        """Predictions on streams (n,) or (R, n), fresh from the prior (vectorised over R)."""
        p = np.asarray(probs)
        if p.ndim not in (1, 2):
            raise ValueError(f"probs: expected shape (n,) or (R, n), got {p.shape}")
        p = as_probabilities(p, "probs", ndim=p.ndim)
        y = np.asarray(labels)
        if y.shape != p.shape:
            raise ValueError(f"labels: expected shape {p.shape} like probs, got {y.shape}")
        as_labels(y.reshape(-1), "labels")
        out = run_concave(self.utility, p.reshape(-1, p.shape[-1]), y.reshape(-1, p.shape[-1]), self.prior)
        return out.reshape(p.shape)


def run_concave(utility: ConcaveUtility, p: np.ndarray, y: np.ndarray, prior: float) -> np.ndarray:
    """Vectorised :class:`OnlineConcaveUtility` over R streams (R, n); returns predictions (R, n) int8."""
    R, n = p.shape
    c = np.full((4, R), float(prior))
    preds = np.empty((R, n), dtype=np.int8)
    lookup = np.array([[3, 2], [1, 0]])
    cols = np.arange(R)
    for t in range(n):
        tp, fp, fn, tn = c
        P, N = tp + fn, tn + fp
        r, s = tp / P, tn / N
        if utility.kind == "gmean":
            root = np.sqrt(np.maximum(r * s, 1e-12))
            dr, ds = s / (2 * root), r / (2 * root)
        elif utility.kind == "hmean":
            d2 = np.maximum(r + s, 1e-12) ** 2
            dr, ds = 2 * s * s / d2, 2 * r * r / d2
        else:
            q = np.sqrt(np.maximum(((1 - r) ** 2 + (1 - s) ** 2) / 2, 1e-12))
            dr, ds = (1 - r) / (2 * q), (1 - s) / (2 * q)
        w1 = dr * fn / P**2 + dr * tp / P**2
        w0 = ds * fp / N**2 + ds * tn / N**2
        pred = (p[:, t] * w1 > (1 - p[:, t]) * w0).astype(np.int64)
        preds[:, t] = pred
        c[lookup[pred, y[:, t]], cols] += 1
    return preds
