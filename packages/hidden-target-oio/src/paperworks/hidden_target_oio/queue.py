"""The distance-to-feasible-set queue of the hidden target, as an inspectable trace.

With ``r_t = ||z_t - y_t|| = dist(z_t, F_t)`` (Euclidean: the norm of the projection, "norm alignment"),
arrivals ``a_t = ||z_{t+1} - z_t||`` (target movement) and service ``s_t = min_i d_{t,i}`` (the demand
every product saw), the queue inequality holds pathwise on any convex ``Y`` inside ``[0, inf)^n``::

    r_{t+1} <= (r_t + a_t - s_t)_+

Proof (ours, following the abstract's reduction): ``y_t`` and ``z_{t+1}`` lie in ``Y``, so does
``w = y_t + λ (z_{t+1} - y_t)`` for ``λ = min(1, s_t / ||z_{t+1} - y_t||)``; every coordinate of ``w``
is at least ``y_{t,i} - s_t >= y_{t,i} - d_{t,i}`` and at least 0, so ``w >= x_{t+1} = (y_t - d_t)_+``
and ``w in F_{t+1}``. Hence ``r_{t+1} <= ||z_{t+1} - w|| = (||z_{t+1} - y_t|| - s_t)_+ <=
(r_t + a_t - s_t)_+``. The scalar Lindley recursion ``Q_{t+1} = (Q_t + a_t - s_t)_+``, ``Q_1 = r_1``,
then dominates ``r_t`` on every round (the map is monotone).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["QueueTrace", "lindley"]


def lindley(r1: np.ndarray, arrivals: np.ndarray, service: np.ndarray) -> np.ndarray:
    """``Q_{t+1} = (Q_t + a_t - s_t)_+`` from ``Q_1 = r1``; arrays (T, R) -> Q (T, R)."""
    a = np.asarray(arrivals, dtype=float)
    s = np.asarray(service, dtype=float)
    Q = np.empty_like(a)
    q = np.asarray(r1, dtype=float).copy()
    for t in range(a.shape[0]):
        Q[t] = q
        q = np.maximum(q + a[t] - s[t], 0.0)
    return Q


@dataclass(frozen=True)
class QueueTrace:
    """Per round ``t`` and row: ``distance`` ``r_t``, ``arrival`` ``a_t``, ``service`` ``s_t``, all (T, R)."""

    distance: np.ndarray
    arrival: np.ndarray
    service: np.ndarray

    @property
    def bound(self) -> np.ndarray:
        """``(r_t + a_t - s_t)_+`` for t = 1..T-1, the bound on ``r_{t+1}`` (T-1, R)."""
        return np.maximum(self.distance[:-1] + self.arrival[:-1] - self.service[:-1], 0.0)

    def slack(self) -> np.ndarray:
        """``bound - r_{t+1}`` (T-1, R): non-negative wherever the queue inequality holds."""
        return self.bound - self.distance[1:]

    def violations(self, tol: float = 1e-7) -> int:
        """Rounds (over all rows) where ``r_{t+1} > (r_t + a_t - s_t)_+ + tol * (1 + r_t + a_t)``."""
        scale = 1.0 + self.distance[:-1] + self.arrival[:-1]
        return int((self.slack() < -tol * scale).sum())

    def lindley(self) -> np.ndarray:
        """The dominating scalar queue ``Q_t`` (T, R)."""
        return lindley(self.distance[0], self.arrival, self.service)
