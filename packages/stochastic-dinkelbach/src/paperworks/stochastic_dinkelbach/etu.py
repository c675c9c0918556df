"""Expected test utility (ETU) of F1 on a finite sample, and its exact optimum in O(n^2).

For a test sample with independent labels ``y_i ~ Bernoulli(p_i)``, the ETU-optimal prediction vector
maximises ``E[F1(y, h)]`` over all ``2^n`` vectors ``h``; it predicts the ``k`` instances of highest
``p_i`` for some ``k`` (Lewis 1995; Jansche 2007; Nan, Chai, Lee and Chieu, ICML 2012). With the
probabilities sorted decreasingly, ``T_S`` the positives among the top ``k`` and ``T_R`` among the rest,

    E_k = E[2 T_S / (k + T_S + T_R)] = sum_a P(T_S = a) 2 a Q_k(k + a),
    Q_k(s) = E[1 / (s + T_{k+1..n})],   Q_k(s) = p_{k+1} Q_{k+1}(s + 1) + (1 - p_{k+1}) Q_{k+1}(s),

with ``Q_n(s) = 1 / s``. The table ``Q`` (n + 1 rows, 2n + 2 shifts) and the prefix distributions of
``T_S`` are each built in O(n^2), so every ``E_k`` and the optimum come in O(n^2) (our derivation of the
standard dynamic programme). ``E_0 = zero_division * P(no positive)``.
"""

from __future__ import annotations

import numpy as np

from paperworks.core.validate import fraction

from .metrics import as_labels, as_probabilities

__all__ = ["etu_expected_f1", "etu_optimal_f1", "expected_f1"]


def etu_expected_f1(p, *, zero_division: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``(E, order)``: ``E[k]`` (k = 0..n) is the expected F1 of predicting the top-k of ``p``.

    ``p`` (n,): probabilities of independent labels; ``order``: the indices of ``p`` sorted decreasingly
    (the top-k set is ``order[:k]``).
    """
    p = as_probabilities(p, "p")
    zd = fraction(zero_division, "zero_division")
    order = np.argsort(-p, kind="stable")
    q = p[order]
    n = q.size
    width = 2 * n + 2  # shifts s = 0 .. 2n + 1 (s = 0 unused)
    Q = np.empty((n + 1, width))
    s = np.arange(width, dtype=float)
    Q[n] = np.where(s > 0, 1.0 / np.maximum(s, 1.0), 0.0)
    for k in range(n - 1, -1, -1):
        nxt = Q[k + 1]
        Q[k, :-1] = q[k] * nxt[1:] + (1 - q[k]) * nxt[:-1]
        Q[k, -1] = nxt[-1]  # never queried (s <= 2k < 2n + 1)
    E = np.empty(n + 1)
    E[0] = zd * float(np.prod(1 - q))
    dist = np.zeros(n + 1)
    dist[0] = 1.0  # distribution of T_S over the top-k
    a = np.arange(n + 1, dtype=float)
    for k in range(1, n + 1):
        pk = q[k - 1]
        dist[1 : k + 1] = dist[1 : k + 1] * (1 - pk) + dist[:k] * pk
        dist[0] *= 1 - pk
        E[k] = float(np.sum(dist[: k + 1] * 2 * a[: k + 1] * Q[k, k : 2 * k + 1]))
    return E, order


def etu_optimal_f1(p, *, zero_division: float = 0.0) -> tuple[np.ndarray, float, int]:
    """``(h, E[F1], k)``: the ETU-optimal predictions (n,) in {0, 1}, their expected F1 and ``k = sum h``."""
    E, order = etu_expected_f1(p, zero_division=zero_division)
    k = int(np.argmax(E))
    h = np.zeros(order.size, dtype=np.int64)
    h[order[:k]] = 1
    return h, float(E[k]), k


def expected_f1(p, h, *, zero_division: float = 0.0) -> float:
    """``E[F1(y, h)]`` for a fixed prediction vector ``h`` under independent ``y_i ~ Bernoulli(p_i)``.

    Computed directly from the two Poisson-binomial distributions (inside and outside ``h``), O(n^2).
    """
    p = as_probabilities(p, "p")
    h = as_labels(h, "h")
    if h.shape != p.shape:
        raise ValueError(f"h: expected shape {p.shape} like p, got {h.shape}")
    zd = fraction(zero_division, "zero_division")
    inside = _poisson_binomial(p[h == 1])
    outside = _poisson_binomial(p[h == 0])
    k = int(h.sum())
    a = np.arange(inside.size, dtype=float)[:, None]
    b = np.arange(outside.size, dtype=float)[None, :]
    den = k + a + b
    f = np.where(den > 0, 2 * a / np.where(den > 0, den, 1.0), zd)
    return float(inside @ f @ outside)


def _poisson_binomial(p: np.ndarray) -> np.ndarray:
    dist = np.zeros(p.size + 1)
    dist[0] = 1.0
    for i, pi in enumerate(p, 1):
        dist[1 : i + 1] = dist[1 : i + 1] * (1 - pi) + dist[:i] * pi
        dist[0] *= 1 - pi
    return dist
