"""Baseline routing policies, all returning a :class:`~.router.RoutingResult`.

Cheap-only routing, exhaustive estimation, random inspection subsets at a matched budget,
uncertainty-threshold inspection, the oracle, and a RouteLLM-style two-model threshold router
(Ong et al. 2024: a classifier predicts whether the strong model beats the weak one and routes to
the strong model when that probability exceeds a threshold).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._validate import as_finite
from .gaussian import posterior_mean
from .router import RoutingResult, per_specialist

__all__ = [
    "RouteLLMRouter",
    "cheap_only",
    "evaluate",
    "exhaustive",
    "oracle",
    "random_subset",
    "uncertainty_threshold",
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


def _refined(m, s, tau, cost, readings):
    m = as_finite(m, "m", ndim=2)
    if m.shape[1] == 0:
        raise ValueError("m: expected at least one specialist (K >= 1)")
    s = per_specialist(s, "s", m.shape, kind="positive")
    tau = per_specialist(tau, "tau", m.shape, kind="nonneg")
    cost = per_specialist(cost, "cost", m.shape, kind="nonneg")
    y = as_finite(readings, "readings", ndim=2)
    if y.shape != m.shape:
        raise ValueError(f"readings: expected shape {m.shape} (the shape of m), got {y.shape}")
    return m, cost, posterior_mean(m, s, tau, y)


def cheap_only(m: np.ndarray, cost: np.ndarray | None = None) -> RoutingResult:
    """Route to the highest cheap estimate; no expensive call. ``m`` (n, K)."""
    m = as_finite(m, "m", ndim=2)
    c = np.zeros_like(m) if cost is None else per_specialist(cost, "cost", m.shape, kind="nonneg")
    return _result(m, np.zeros(m.shape, dtype=bool), c)


def exhaustive(m, s, tau, cost, readings) -> RoutingResult:
    """Call the expensive estimator on every specialist; route to the best refined estimate."""
    m, cost, post = _refined(m, s, tau, cost, readings)
    return _result(post, np.ones(m.shape, dtype=bool), cost)


def oracle(true_value: np.ndarray) -> RoutingResult:
    """Route to the specialist of highest true value, free of estimation cost (an upper bound)."""
    v = as_finite(true_value, "true_value", ndim=2)
    return _result(v, np.zeros(v.shape, dtype=bool), np.zeros_like(v))


def random_subset(m, s, tau, cost, readings, counts: np.ndarray, rng: np.random.Generator) -> RoutingResult:
    """Inspect ``counts[i]`` specialists chosen uniformly at random for query ``i`` (matched budget).

    Uninspected specialists keep their cheap estimate; route to the best belief.
    """
    m, cost, post = _refined(m, s, tau, cost, readings)
    counts = np.asarray(counts)
    if counts.shape != (m.shape[0],) or (counts < 0).any() or (counts > m.shape[1]).any():
        raise ValueError(f"counts: expected shape ({m.shape[0]},) with values in [0, {m.shape[1]}]")
    rank = np.argsort(np.argsort(rng.random(m.shape), axis=1), axis=1)
    inspected = rank < counts[:, None]
    return _result(np.where(inspected, post, m), inspected, cost)


def uncertainty_threshold(m, s, tau, cost, readings, z: float = 1.0) -> RoutingResult:
    """Inspect every specialist that could plausibly be the best: ``m_k + z s_k >= max_j m_j``."""
    if not np.isfinite(z) or z < 0:
        raise ValueError(f"z: expected a finite non-negative number, got {z}")
    m, cost, post = _refined(m, s, tau, cost, readings)
    s_full = per_specialist(s, "s", m.shape, kind="positive")
    inspected = m + z * s_full >= m.max(axis=1, keepdims=True)
    inspected &= m.shape[1] > 1
    return _result(np.where(inspected, post, m), inspected, cost)


class RouteLLMRouter:
    """RouteLLM-style two-model threshold router (logistic classifier on query features).

    ``fit(X, strong_wins)`` learns ``P(strong model beats weak model | x)`` by L2-regularised
    logistic regression (Newton/IRLS); ``predict_proba(X)`` (n,); ``route(X, threshold)`` returns
    1 (strong) where the probability exceeds ``threshold``, else 0 (weak).
    Fitted attributes: ``coef_`` (d,), ``intercept_``, ``n_features_in_``.
    """

    def __init__(self, alpha: float = 1.0, max_iter: int = 30) -> None:
        if not np.isfinite(alpha) or alpha < 0:
            raise ValueError(f"alpha: expected a non-negative ridge penalty, got {alpha}")
        self.alpha = alpha
        self.max_iter = max_iter

    def fit(self, X: np.ndarray, strong_wins: np.ndarray) -> RouteLLMRouter:
        X = as_finite(X, "X", ndim=2)
        y = np.asarray(strong_wins, dtype=np.float64)
        if y.shape != (X.shape[0],) or not np.isin(y, (0.0, 1.0)).all():
            raise ValueError(f"strong_wins: expected {X.shape[0]} labels in {{0, 1}}, got shape {y.shape}")
        A = np.hstack([X, np.ones((X.shape[0], 1))])
        w = np.zeros(A.shape[1])
        reg = self.alpha * np.eye(A.shape[1])
        reg[-1, -1] = 0.0
        for _ in range(self.max_iter):
            p = 1.0 / (1.0 + np.exp(-(A @ w)))
            grad = A.T @ (p - y) + reg @ w
            hess = (A * (p * (1 - p))[:, None]).T @ A + reg + 1e-9 * np.eye(A.shape[1])
            step = np.linalg.solve(hess, grad)
            w -= step
            if np.abs(step).max() < 1e-8:
                break
        self.coef_ = w[:-1]
        self.intercept_ = float(w[-1])
        self.n_features_in_ = X.shape[1]
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        if not hasattr(self, "coef_"):
            raise RuntimeError("RouteLLMRouter: call fit before predict_proba")
        X = as_finite(X, "X", ndim=2)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X: expected {self.n_features_in_} features, got {X.shape[1]}")
        return 1.0 / (1.0 + np.exp(-(X @ self.coef_ + self.intercept_)))

    def route(self, X: np.ndarray, threshold: float) -> np.ndarray:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold: expected a probability in [0, 1], got {threshold}")
        return (self.predict_proba(X) > threshold).astype(np.int64)


def evaluate(
    result: RoutingResult, true_value: np.ndarray, answer_price: np.ndarray, price_per_value: float
) -> dict[str, float]:
    """Mean per-query metrics of a routing result against the truth.

    ``true_value`` (n, K): realised value of each specialist; ``answer_price`` (n, K) in money;
    ``price_per_value``: money per value unit (1 / lambda) to express estimation cost in money.
    Returns ``gross`` (value of the chosen specialist), ``net`` (gross minus estimation cost),
    ``calls`` (expensive calls per query) and ``total_cost`` (answer + estimation, in money).
    """
    v = as_finite(true_value, "true_value", ndim=2)
    n = v.shape[0]
    idx = np.arange(n)
    gross = v[idx, result.choice]
    price = np.asarray(answer_price)[idx, result.choice]
    return {
        "gross": float(gross.mean()),
        "net": float((gross - result.estimation_cost).mean()),
        "calls": float(result.n_inspections.mean()),
        "total_cost": float((price + result.estimation_cost * price_per_value).mean()),
    }
