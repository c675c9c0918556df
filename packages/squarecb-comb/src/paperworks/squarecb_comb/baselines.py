"""Baselines of the issue, all with the same ``act(context)`` / ``learn(context, action, rewards)``.

- :class:`EpsilonGreedyTopM`: with probability ``epsilon`` a uniform m-subset, else the oracle's top m.
- :class:`CombLinUCB`: top m arms by ``x^T theta + alpha sqrt(x^T V^{-1} x)`` (C2UCB, Qin, Chen
  and Zhu 2014, for a linear reward model shared by the arms).
- :class:`CombLinTS`: top m arms under ``theta ~ N(theta_hat, v^2 V^{-1})`` (linear Thompson
  sampling, Agrawal and Goyal 2013; its combinatorial form, Wen et al. 2015).
- :class:`PerArmSquareCB`: SquareCB's single-action inverse-gap weighting ``p`` over arms (Foster
  and Rakhlin 2020), then ``m`` distinct arms drawn successively in proportion to ``p``
  (Gumbel-top-m); the naive extension that SquareCB.Comb's convex program replaces.
"""

from __future__ import annotations

import numpy as np

from .agent import CombinatorialAgent, SquareCBCombConfig, gamma_schedule
from .oracles import LinearOracle, RegressionOracle

__all__ = ["CombLinTS", "CombLinUCB", "EpsilonGreedyTopM", "PerArmSquareCB", "inverse_gap_weighting"]


def _top_m(scores: np.ndarray, m: int) -> np.ndarray:
    if m >= scores.size:
        return np.arange(scores.size, dtype=np.int64)
    return np.sort(np.argpartition(-scores, m - 1)[:m]).astype(np.int64)


def inverse_gap_weighting(scores: np.ndarray, gamma: float) -> np.ndarray:
    """SquareCB's distribution over single arms (Foster and Rakhlin 2020, Alg. 1), shape ``(A,)``.

    ``p_a = 1 / (A + gamma (r_max - r_a))`` for ``a`` not the greedy arm, the rest on the greedy arm.
    """
    r = np.asarray(scores, dtype=float)
    best = int(np.argmax(r))
    p = 1.0 / (r.size + gamma * (r[best] - r))
    p[best] = 0.0
    p[best] = 1.0 - p.sum()
    return p


class _OracleAgent(CombinatorialAgent):
    def __init__(self, n_arms: int, m: int, oracle: RegressionOracle | None, seed: int | None) -> None:
        SquareCBCombConfig(n_arms, m)  # validates n_arms and m
        if oracle is not None and not isinstance(oracle, RegressionOracle):
            raise TypeError(f"oracle: expected a RegressionOracle, got {type(oracle).__name__}")
        self.n_arms, self.m = int(n_arms), int(m)
        self.oracle = oracle
        self.dim = None if oracle is None else oracle.dim
        self.rng = np.random.default_rng(seed)
        self.t_ = 0

    def _ensure_oracle(self, X: np.ndarray) -> RegressionOracle:
        if self.oracle is None:
            self.oracle = LinearOracle(X.shape[1])
            self.dim = X.shape[1]
        return self.oracle

    def learn(self, context: np.ndarray, action: np.ndarray, rewards: np.ndarray) -> None:
        """Semi-bandit feedback: ``rewards[j]`` is the reward of arm ``action[j]``."""
        X, a, y = self._check_feedback(context, action, rewards)
        if a.size:
            self._ensure_oracle(X).update(X[a], y)


class EpsilonGreedyTopM(_OracleAgent):
    """Epsilon-greedy over m-subsets (``epsilon`` default 0.05, vowpal wabbit's default)."""

    def __init__(
        self,
        n_arms: int,
        m: int,
        oracle: RegressionOracle | None = None,
        *,
        epsilon: float = 0.05,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, m, oracle, seed)
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon: expected a probability in [0, 1], got {epsilon!r}")
        self.epsilon = float(epsilon)

    def act(self, context: np.ndarray) -> np.ndarray:
        X = self._check_context(context)
        self.t_ += 1
        if self.rng.random() < self.epsilon:
            return np.sort(self.rng.choice(self.n_arms, self.m, replace=False)).astype(np.int64)
        return _top_m(self._ensure_oracle(X).predict(X), self.m)


class PerArmSquareCB(_OracleAgent):
    """Per-arm SquareCB with top-m selection, on the same rate ``gamma_t`` as SquareCB.Comb."""

    def __init__(
        self,
        n_arms: int,
        m: int,
        oracle: RegressionOracle | None = None,
        *,
        gamma_scale: float = 10.0,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, m, oracle, seed)
        SquareCBCombConfig(n_arms, m, gamma_scale)
        self.gamma_scale = float(gamma_scale)

    def act(self, context: np.ndarray) -> np.ndarray:
        X = self._check_context(context)
        self.t_ += 1
        gamma = float(gamma_schedule(self.t_, self.n_arms, self.m, self.gamma_scale))
        p = inverse_gap_weighting(self._ensure_oracle(X).predict(X), gamma)
        with np.errstate(divide="ignore"):
            keys = np.log(p) + self.rng.gumbel(size=self.n_arms)
        return _top_m(keys, self.m)


class _LinearAgent(CombinatorialAgent):
    def __init__(self, n_arms: int, m: int, dim: int, reg: float, seed: int | None) -> None:
        SquareCBCombConfig(n_arms, m)
        self.n_arms, self.m = int(n_arms), int(m)
        self.model = LinearOracle(dim, reg=reg)
        self.dim = self.model.dim
        self.rng = np.random.default_rng(seed)
        self.t_ = 0

    def learn(self, context: np.ndarray, action: np.ndarray, rewards: np.ndarray) -> None:
        """Semi-bandit feedback: ``rewards[j]`` is the reward of arm ``action[j]``."""
        X, a, y = self._check_feedback(context, action, rewards)
        if a.size:
            self.model.update(X[a], y)


class CombLinUCB(_LinearAgent):
    """Combinatorial LinUCB (C2UCB): top m by optimistic index, ``alpha`` default 1 (MABWiser's)."""

    def __init__(
        self, n_arms: int, m: int, dim: int, *, alpha: float = 1.0, reg: float = 1.0, seed: int | None = None
    ) -> None:
        super().__init__(n_arms, m, dim, reg, seed)
        if not (np.isfinite(alpha) and alpha >= 0):
            raise ValueError(f"alpha: expected a non-negative exploration width, got {alpha!r}")
        self.alpha = float(alpha)

    def act(self, context: np.ndarray) -> np.ndarray:
        X = self._check_context(context)
        self.t_ += 1
        ucb = X @ self.model.theta_ + self.alpha * np.sqrt(np.maximum(self.model.variances(X), 0.0))
        return _top_m(ucb, self.m)


class CombLinTS(_LinearAgent):
    """Combinatorial linear Thompson sampling: one posterior draw, then the top m; ``v`` default 1."""

    def __init__(
        self, n_arms: int, m: int, dim: int, *, v: float = 1.0, reg: float = 1.0, seed: int | None = None
    ) -> None:
        super().__init__(n_arms, m, dim, reg, seed)
        if not (np.isfinite(v) and v >= 0):
            raise ValueError(f"v: expected a non-negative posterior scale, got {v!r}")
        self.v = float(v)

    def act(self, context: np.ndarray) -> np.ndarray:
        X = self._check_context(context)
        self.t_ += 1
        L = np.linalg.cholesky(self.model.V_inv_ + 1e-12 * np.eye(self.dim))
        theta = self.model.theta_ + self.v * (L @ self.rng.standard_normal(self.dim))
        return _top_m(X @ theta, self.m)
