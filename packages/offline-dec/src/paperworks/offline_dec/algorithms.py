"""Offline value-based learners on tabular or linear features: greedy FQI, LCB value iteration (pessimism
by an
elliptical bonus), offline soft Q-learning (entropy-regularised FQI with temperature ``tau`` and the same
bonus)
and tabular CQL (``alpha``).

Features ``phi (S, A, d)``; tabular is one-hot (``d = S A``). The regression step of fitted Q iteration is
ridge
least squares ``theta = Lambda^{-1} sum_i phi(s_i, a_i) y_i`` with ``Lambda = sum_i phi phi^T + ridge I``;
the bonus
is ``Gamma(s, a) = beta * v_span * ||phi(s, a)||_{Lambda^{-1}}`` (PEVI, Jin et al. 2021; tabular: VI-LCB of
Rashidinejad et al. 2021 with ``beta v_span / sqrt(n(s, a))``), ``v_span = (r_max - r_min) / (1 - gamma)``
for the
stated reward range [-1, 1]. Pessimistic learners clip to ``[v_min, v_max]``; uncovered directions have a huge
bonus and land on ``v_min``. Greedy FQI has no bonus and no clip: an unseen pair is predicted 0 (the ridge
answer), optimistic whenever true values are negative (costs) — the extrapolation error of the field.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import finite_array, fraction, nonnegative_float, positive_float, positive_int

from .data import OfflineDataset
from .mdp import _soft_max_value, greedy_policy, softmax_policy

__all__ = [
    "CQL",
    "FQI",
    "LCB",
    "SoftQ",
    "FitResult",
    "cql_penalty",
    "cql_penalty_grad",
    "one_hot_features",
]

R_MIN, R_MAX = -1.0, 1.0


def one_hot_features(n_states: int, n_actions: int) -> np.ndarray:
    """Tabular features ``(S, A, S A)``."""
    S, A = positive_int(n_states, "n_states"), positive_int(n_actions, "n_actions")
    return np.eye(S * A).reshape(S, A, S * A)


@dataclass(frozen=True, eq=False)
class FitResult:
    """``q (S, A)``: the learner's Q estimate; ``policy (S, A)``: its output ``pi(a | s)``; ``iterations``."""

    q: np.ndarray
    policy: np.ndarray
    iterations: int

    def __call__(self, s: int) -> np.ndarray:
        """``pi(s) -> action probabilities``."""
        return self.policy[s]


class _Regression:
    """Sufficient statistics of the ridge regressions of fitted Q iteration on one dataset."""

    def __init__(self, data: OfflineDataset, features: np.ndarray | None, ridge: float) -> None:
        S, A = data.n_states, data.n_actions
        if features is None:  # tabular fast path: Lambda is diagonal
            n, r_hat, P_hat = data.empirical_model()
            inv = 1.0 / (n + ridge)
            self.q_r = (n * r_hat * inv).reshape(S * A)
            self.G = (n[:, :, None] * P_hat * inv[:, :, None]).reshape(S * A, S)
            self.width = np.sqrt(inv).reshape(S * A)
            return
        phi = finite_array(features, "features", ndim=3)
        if phi.shape[:2] != (S, A):
            raise ValueError(f"features: expected shape ({S}, {A}, d), got {phi.shape}")
        F = phi.reshape(S * A, -1)
        X = F[data.states * A + data.actions]
        lam = X.T @ X + ridge * np.eye(F.shape[1])
        N = np.zeros((F.shape[1], S))
        np.add.at(N.T, data.next_states, X)
        inv = np.linalg.inv(lam)
        self.q_r = F @ (inv @ (X.T @ data.rewards))
        self.G = F @ (inv @ N)
        self.width = np.sqrt(np.maximum(np.einsum("kd,de,ke->k", F, inv, F), 0.0))


def _common(gamma: float, iterations: int, tol: float) -> tuple[float, int, float]:
    return (
        fraction(gamma, "gamma", open_high=True),
        positive_int(iterations, "iterations"),
        positive_float(tol, "tol"),
    )


def _iterate(step, q0: np.ndarray, iterations: int, tol: float) -> tuple[np.ndarray, int]:
    q = q0
    for k in range(1, iterations + 1):
        new = step(q)
        if np.max(np.abs(new - q)) <= tol:
            return new, k
        q = new
    return q, iterations


@dataclass(frozen=True)
class FQI:
    """Greedy fitted Q iteration: ``Q <- ridge-regress(r + gamma max_a' Q(s', a'))``; output ``argmax Q``."""

    gamma: float = 0.9
    ridge: float = 1e-4
    iterations: int = 1000
    tol: float = 1e-8

    def fit(self, data: OfflineDataset, features: np.ndarray | None = None) -> FitResult:
        gamma, iters, tol = _common(self.gamma, self.iterations, self.tol)
        reg = _Regression(data, features, positive_float(self.ridge, "ridge"))
        S, A = data.n_states, data.n_actions

        def step(q):
            return (reg.q_r + gamma * reg.G @ q.reshape(S, A).max(axis=1)).reshape(S, A)

        q, k = _iterate(step, np.zeros((S, A)), iters, tol)
        return FitResult(q, greedy_policy(q), k)


@dataclass(frozen=True)
class LCB:
    """Pessimistic value iteration: ``Q <- clip(regress(r + gamma max Q') - Gamma, v_min, v_max)``; greedy."""

    gamma: float = 0.9
    beta: float = 0.1
    ridge: float = 1e-4
    iterations: int = 1000
    tol: float = 1e-8

    def fit(self, data: OfflineDataset, features: np.ndarray | None = None) -> FitResult:
        gamma, iters, tol = _common(self.gamma, self.iterations, self.tol)
        beta = nonnegative_float(self.beta, "beta")
        reg = _Regression(data, features, positive_float(self.ridge, "ridge"))
        S, A = data.n_states, data.n_actions
        v_min, v_max = R_MIN / (1 - gamma), R_MAX / (1 - gamma)
        bonus = beta * (v_max - v_min) * reg.width

        def step(q):
            raw = reg.q_r + gamma * reg.G @ q.reshape(S, A).max(axis=1) - bonus
            return np.clip(raw, v_min, v_max).reshape(S, A)

        q, k = _iterate(step, np.full((S, A), v_min), iters, tol)
        return FitResult(q, greedy_policy(q), k)


@dataclass(frozen=True)
class SoftQ:
    """Offline soft Q-learning: ``Q <- clip(regress(r + gamma tau log sum_a' exp(Q(s', a') / tau)) - Gamma)``;
    output ``pi ∝ exp(Q / tau)`` (the entropy-regularised objective of Uehara et al. 2023, temperature
    tau)."""

    tau: float = 0.2
    gamma: float = 0.9
    beta: float = 0.1
    ridge: float = 1e-4
    iterations: int = 1000
    tol: float = 1e-8

    def fit(self, data: OfflineDataset, features: np.ndarray | None = None) -> FitResult:
        gamma, iters, tol = _common(self.gamma, self.iterations, self.tol)
        tau = positive_float(self.tau, "tau")
        beta = nonnegative_float(self.beta, "beta")
        reg = _Regression(data, features, positive_float(self.ridge, "ridge"))
        S, A = data.n_states, data.n_actions
        v_min = R_MIN / (1 - gamma)
        v_max = (R_MAX + tau * np.log(A)) / (1 - gamma)
        bonus = beta * (R_MAX - R_MIN) / (1 - gamma) * reg.width

        def step(q):
            raw = reg.q_r + gamma * reg.G @ _soft_max_value(q.reshape(S, A), tau) - bonus
            return np.clip(raw, v_min, v_max).reshape(S, A)

        q, k = _iterate(step, np.full((S, A), v_min), iters, tol)
        return FitResult(q, softmax_policy(q, tau), k)


# -------------------------------------------------------------------------------------------- CQL


def _lse(q: np.ndarray) -> np.ndarray:
    m = q.max(axis=-1, keepdims=True)
    return (m + np.log(np.exp(q - m).sum(axis=-1, keepdims=True)))[..., 0]


def cql_penalty(q: np.ndarray, data: OfflineDataset, alpha: float) -> float:
    """CQL(H)'s regulariser ``alpha * (1/n) sum_i [log sum_a exp Q(s_i, a) - Q(s_i, a_i)]`` (Kumar et al.
    2020)."""
    q = np.asarray(q, dtype=float)
    return float(alpha * np.mean(_lse(q[data.states]) - q[data.states, data.actions]))


def cql_penalty_grad(q: np.ndarray, data: OfflineDataset, alpha: float) -> np.ndarray:
    """Its gradient in closed form: ``alpha / n * (n(s) softmax(Q(s, .)) - n(s, .))``, shape ``(S, A)``."""
    q = np.asarray(q, dtype=float)
    n = data.counts()
    pi = softmax_policy(q, 1.0)
    return alpha / len(data) * (n.sum(axis=1, keepdims=True) * pi - n)


@dataclass(frozen=True)
class CQL:
    """Tabular CQL: each iteration minimises, over ``Q``, the TD loss to the target
    ``r + gamma max Q_k(s')`` plus :func:`cql_penalty` (per-sample means, as in d3rlpy's DiscreteCQL).

    The inner problem is convex per state and solved by batched Newton steps on the seen actions; an unseen
    action of a visited state lands on the lower box bound ``v_min`` (the penalty is increasing in it); an
    unvisited state keeps 0 (no loss term)."""

    alpha: float = 1.0
    gamma: float = 0.9
    iterations: int = 1000
    newton_steps: int = 30
    tol: float = 1e-8

    def fit(self, data: OfflineDataset, features: np.ndarray | None = None) -> FitResult:
        if features is not None:
            raise ValueError("features: CQL is tabular here (pass features=None)")
        gamma, iters, tol = _common(self.gamma, self.iterations, self.tol)
        alpha = nonnegative_float(self.alpha, "alpha")
        steps = positive_int(self.newton_steps, "newton_steps")
        n, r_hat, P_hat = data.empirical_model()
        S, A = data.n_states, data.n_actions
        v_min, v_max = R_MIN / (1 - gamma), R_MAX / (1 - gamma)
        n_s = n.sum(axis=1, keepdims=True)
        visited = n_s[:, 0] > 0
        w = np.where(visited[:, None], n / np.maximum(n_s, 1), 0.0)
        seen = w > 0
        unseen_visited = (~seen) & visited[:, None]
        eye = np.eye(A)

        def inner(q, y):
            q = np.where(unseen_visited, v_min, q)
            for _ in range(steps):
                pi = softmax_policy(q, 1.0)
                g = 2 * w * (q - y) + alpha * (pi - w)
                H = 2 * w[:, :, None] * eye + alpha * (pi[:, :, None] * eye - pi[:, :, None] * pi[:, None, :])
                g = np.where(seen, g, 0.0)
                mask = seen[:, :, None] & seen[:, None, :]
                H = np.where(mask, H, eye)
                delta = np.linalg.solve(H, g[:, :, None])[..., 0]
                delta = np.clip(delta, -(v_max - v_min), v_max - v_min)
                q = q - delta
                if np.max(np.abs(delta)) < 1e-12:
                    break
            return np.where(visited[:, None], q, 0.0)

        def step(q):
            y = r_hat + gamma * P_hat @ q.max(axis=1)
            return inner(q, y)

        q, k = _iterate(step, np.zeros((S, A)), iters, tol)
        return FitResult(q, greedy_policy(q), k)
