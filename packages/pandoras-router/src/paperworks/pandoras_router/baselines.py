"""Baseline routing policies, all returning a :class:`~.router.RoutingResult`.

Cheap-only routing, exhaustive estimation, random inspection subsets at a matched budget,
uncertainty-threshold inspection (fixed ``z`` or ``z`` tuned to a call budget), the oracle, and a
RouteLLM-style two-model threshold router (Ong et al. 2024: a classifier predicts whether the strong
model beats the weak one and routes to the strong model when that probability exceeds a threshold).

Every policy that reads the expensive estimator refines its beliefs with the same posterior as the
Router: eq. (1) of :mod:`.gaussian` for independent errors, the one-factor posterior (C3) of
:mod:`.correlated` when ``loading`` is given, so that policies differ only in what they inspect.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from paperworks.core.validate import as_generator, fraction, nonnegative_float, positive_float, positive_int

from ._validate import as_finite, as_nonneg, per_specialist
from .correlated import _posterior, check_loading
from .router import RoutingResult

__all__ = [
    "RouteLLMRouter",
    "cheap_only",
    "evaluate",
    "exhaustive",
    "oracle",
    "random_subset",
    "uncertainty_threshold",
    "uncertainty_z_for_budget",
]


def _result(
    value: np.ndarray, inspected: np.ndarray, cost: np.ndarray, specialists: Sequence[str] = ()
) -> RoutingResult:
    n, k = value.shape
    choice = np.argmax(value, axis=1)
    order = np.where(inspected, 0, -1)
    nan = np.full((n, k), np.nan)
    return RoutingResult(
        choice=choice,
        inspected=inspected,
        order=order,
        alternative=nan,
        value=value,
        upper=nan,
        lower=nan,
        cost=cost,
        estimation_cost=(cost * inspected).sum(axis=1),
        expected_value=value[np.arange(n), choice],
        specialists=tuple(specialists),
    )


def _beliefs(m, s, tau, cost, readings, loading):
    m = as_finite(m, "m", ndim=2)
    s = per_specialist(s, "s", m.shape, kind="positive")
    tau = per_specialist(tau, "tau", m.shape, kind="nonneg")
    cost = per_specialist(cost, "cost", m.shape, kind="nonneg")
    y = as_finite(readings, "readings", ndim=2)
    if y.shape != m.shape:
        raise ValueError(f"readings: expected shape {m.shape} (the shape of m), got {y.shape}")
    lam = np.zeros(m.shape) if loading is None else check_loading(loading, "loading", m.shape)
    return m, s, tau, cost, y, lam


def _refine(m, s, tau, y, lam, inspected):
    """Posterior means given the readings of ``inspected`` (one-factor model; independent at lam = 0)."""
    return _posterior(m, s * lam, s * s * (1 - lam * lam), tau * tau, y, inspected)


def cheap_only(m: np.ndarray, cost: np.ndarray | None = None) -> RoutingResult:
    """Route to the highest cheap estimate; no expensive call. ``m`` (n, K)."""
    m = as_finite(m, "m", ndim=2)
    c = np.zeros_like(m) if cost is None else per_specialist(cost, "cost", m.shape, kind="nonneg")
    return _result(m, np.zeros(m.shape, dtype=bool), c)


def exhaustive(m, s, tau, cost, readings, *, loading=None) -> RoutingResult:
    """Call the expensive estimator on every specialist; route to the best refined estimate.

    ``m`` (n, K); ``s`` (> 0), ``tau`` (>= 0), ``cost`` (>= 0), ``loading`` (None or ``|lambda| <
    1``): (K,) or (n, K); ``readings`` (n, K).
    """
    m, s, tau, cost, y, lam = _beliefs(m, s, tau, cost, readings, loading)
    inspected = np.ones(m.shape, dtype=bool)
    return _result(_refine(m, s, tau, y, lam, inspected), inspected, cost)


def oracle(true_value: np.ndarray) -> RoutingResult:
    """Route to the specialist of highest true value, free of estimation cost (an upper bound)."""
    v = as_finite(true_value, "true_value", ndim=2)
    return _result(v, np.zeros(v.shape, dtype=bool), np.zeros_like(v))


def random_subset(m, s, tau, cost, readings, counts, rng, *, loading=None) -> RoutingResult:
    """Inspect ``counts[i]`` specialists chosen uniformly at random for query ``i`` (matched budget).

    ``counts`` (n,) integers in [0, K]; ``rng``: a ``numpy.random.Generator`` or an int seed. The
    others keep their cheap (or, with correlated errors, factor-updated) belief; route to the best.
    """
    m, s, tau, cost, y, lam = _beliefs(m, s, tau, cost, readings, loading)
    n, k = m.shape
    c = np.asarray(counts)
    if c.dtype.kind not in "iu":
        raise TypeError(f"counts: expected integers (calls per query), got dtype {c.dtype}")
    if c.shape != (n,) or (c < 0).any() or (c > k).any():
        raise ValueError(f"counts: expected shape ({n},) with values in [0, {k}], got shape {c.shape}")
    gen = as_generator(rng, "rng")
    rank = np.argsort(np.argsort(gen.random(m.shape), axis=1), axis=1)
    inspected = rank < c[:, None]
    return _result(_refine(m, s, tau, y, lam, inspected), inspected, cost)


def _uncertain(m: np.ndarray, s: np.ndarray, z: float) -> np.ndarray:
    inspected = m + z * s >= m.max(axis=1, keepdims=True)
    inspected &= m.shape[1] > 1
    return inspected


def uncertainty_threshold(m, s, tau, cost, readings, z: float = 1.0, *, loading=None) -> RoutingResult:
    """Inspect every specialist that could plausibly be the best: ``m_k + z s_k >= max_j m_j``.

    ``s`` is the cheap-estimator std ((K,) or per query (n, K)); ``z`` >= 0. See
    :func:`uncertainty_z_for_budget` for the ``z`` that spends a given number of calls.
    """
    z = nonnegative_float(z, "z")
    m, s, tau, cost, y, lam = _beliefs(m, s, tau, cost, readings, loading)
    inspected = _uncertain(m, s, z)
    return _result(_refine(m, s, tau, y, lam, inspected), inspected, cost)


def uncertainty_z_for_budget(m: np.ndarray, s: np.ndarray, calls: float, *, z_max: float = 50.0) -> float:
    """The ``z`` at which :func:`uncertainty_threshold` makes ``calls`` expensive calls per query on average.

    Bisection on ``z`` in ``[0, z_max]`` (calls rise with ``z``; only the cheap beliefs are used, not
    any reading): returns the smallest ``z`` whose mean calls reach ``calls`` (``z_max`` if none does).
    ``m`` (n, K); ``s`` (K,) or (n, K), > 0; ``calls`` in [0, K].
    """
    m = as_finite(m, "m", ndim=2)
    s = per_specialist(s, "s", m.shape, kind="positive")
    calls = nonnegative_float(calls, "calls")
    if calls > m.shape[1]:
        raise ValueError(f"calls: expected at most K = {m.shape[1]} calls per query, got {calls}")
    z_max = positive_float(z_max, "z_max")
    lo, hi = 0.0, z_max
    if _uncertain(m, s, 0.0).sum(axis=1).mean() >= calls:
        return 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _uncertain(m, s, mid).sum(axis=1).mean() >= calls:
            hi = mid
        else:
            lo = mid
    return hi


class RouteLLMRouter(ClassifierMixin, BaseEstimator):
    """RouteLLM-style two-model threshold router: a scikit-learn binary classifier.

    ``fit(X, y)``: ``X`` (n, d) query features, ``y`` (n,) labels (1: the strong model beats the
    weak one) learns ``P(strong wins | x)`` by L2-regularised logistic regression (Newton/IRLS,
    penalty ``alpha``, intercept unpenalised). ``predict_proba(X)`` (n, 2) for ``classes_``;
    ``route(X, threshold)`` returns 1 (strong) where ``P(strong wins) > threshold``, else 0 (weak).
    Fitted attributes: ``coef_`` (d,), ``intercept_``, ``classes_``, ``n_features_in_``, ``n_iter_``.
    ``get_params`` / ``set_params`` / ``clone`` work (settings are checked in ``fit``).
    """

    def __init__(self, alpha: float = 1.0, max_iter: int = 30) -> None:
        self.alpha = alpha
        self.max_iter = max_iter

    def fit(self, X: object, y: object) -> RouteLLMRouter:
        alpha = nonnegative_float(self.alpha, "alpha")
        max_iter = positive_int(self.max_iter, "max_iter")
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite=False)
        X = as_finite(X, "X", ndim=2)
        check_classification_targets(y)
        classes, yi = np.unique(y, return_inverse=True)
        if classes.size > 2:
            raise ValueError(
                f"y: Only binary classification is supported (weak/strong), got {classes.size} classes"
            )
        self.classes_ = classes
        target = yi.astype(np.float64) if classes.size == 2 else np.zeros(X.shape[0])
        A = np.hstack([X, np.ones((X.shape[0], 1))])
        w = np.zeros(A.shape[1])
        reg = alpha * np.eye(A.shape[1])
        reg[-1, -1] = 0.0
        self.n_iter_ = 0
        for it in range(max_iter):
            p = 1.0 / (1.0 + np.exp(-np.clip(A @ w, -500, 500)))
            grad = A.T @ (p - target) + reg @ w
            hess = (A * (p * (1 - p))[:, None]).T @ A + reg + 1e-9 * np.eye(A.shape[1])
            step = np.linalg.solve(hess, grad)
            w -= step
            self.n_iter_ = it + 1
            if np.abs(step).max() < 1e-8:
                break
        self.coef_ = w[:-1]
        self.intercept_ = float(w[-1])
        return self

    def decision_function(self, X: object) -> np.ndarray:
        """Log-odds (n,) that the strong model wins."""
        check_is_fitted(self, "coef_")
        X = as_finite(validate_data(self, X, dtype=np.float64, reset=False, ensure_all_finite=False), "X")
        return X @ self.coef_ + self.intercept_

    def predict_proba(self, X: object) -> np.ndarray:
        """(n, n_classes) class probabilities (column 1: the strong model wins)."""
        p = 1.0 / (1.0 + np.exp(-np.clip(self.decision_function(X), -500, 500)))
        if self.classes_.size == 1:
            return np.ones((p.shape[0], 1))
        return np.stack([1.0 - p, p], axis=1)

    def predict(self, X: object) -> np.ndarray:
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def strong_probability(self, X: object) -> np.ndarray:
        """``P(strong model wins | x)`` (n,): column 1 of :meth:`predict_proba` (a constant when the
        training labels held one class only)."""
        proba = self.predict_proba(X)
        if self.classes_.size == 2:
            return proba[:, 1]
        return np.full(proba.shape[0], float(self.classes_[0] == 1))

    def route(self, X: object, threshold: float) -> np.ndarray:
        """1 (strong) where ``P(strong wins) > threshold``, else 0 (weak): (n,) int."""
        threshold = fraction(threshold, "threshold")
        return (self.strong_probability(X) > threshold).astype(np.int64)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


def evaluate(
    result: RoutingResult, true_value: np.ndarray, answer_price: np.ndarray, price_per_value: float
) -> dict[str, float]:
    """Mean per-query metrics of a routing result against the truth.

    ``true_value`` (n, K): realised value of each specialist; ``answer_price`` (n, K) >= 0 in money;
    ``price_per_value`` > 0: money per value unit (1 / lambda) to express estimation cost in money.
    A query sent to the outside option (``choice == -1``) earns the outside value
    (``result.outside``) and pays no answer price. Returns ``gross`` (value of the chosen option),
    ``net`` (gross minus estimation cost), ``calls`` (expensive calls per query), ``total_cost``
    (answer + estimation, in money) and ``declined`` (share sent to the outside option).
    """
    if not isinstance(result, RoutingResult):
        raise TypeError(f"result: expected a RoutingResult, got {type(result).__name__}")
    v = as_finite(true_value, "true_value", ndim=2)
    n, k = v.shape
    if result.choice.shape != (n,) or result.inspected.shape != (n, k):
        raise ValueError(
            f"true_value: expected shape {result.inspected.shape} (the routing result's), got {v.shape}"
        )
    price = as_nonneg(answer_price, "answer_price", ndim=2)
    if price.shape != v.shape:
        raise ValueError(
            f"answer_price: expected shape {v.shape} (the shape of true_value), got {price.shape}"
        )
    ppv = positive_float(price_per_value, "price_per_value")
    idx = np.arange(n)
    declined = result.choice < 0
    safe = np.where(declined, 0, result.choice)
    outside = np.asarray(result.outside, dtype=np.float64)
    if declined.any() and not np.isfinite(outside[declined]).all():
        raise ValueError("result: queries routed to the outside option (-1) but its value is not finite")
    gross = np.where(declined, outside, v[idx, safe])
    paid = np.where(declined, 0.0, price[idx, safe])
    return {
        "gross": float(gross.mean()),
        "net": float((gross - result.estimation_cost).mean()),
        "calls": float(result.n_inspections.mean()),
        "total_cost": float((paid + result.estimation_cost * ppv).mean()),
        "declined": float(declined.mean()),
    }
