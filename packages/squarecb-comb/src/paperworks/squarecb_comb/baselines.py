"""Baselines, all :class:`~.agent.CombinatorialAgent` subclasses with ``act`` / ``learn``.

- :class:`EpsilonGreedyTopM`: with probability ``epsilon`` a uniform m-subset, else the oracle's top m.
- :class:`PerSlotIGW`: vowpal wabbit's conditional contextual bandit (CCB) reduction with SquareCB
  exploration: the ``m`` slots are filled one after the other, each slot a single-action SquareCB
  decision (inverse-gap weighting, :func:`~.igw.inverse_gap_weighting`) over the arms the earlier
  slots left, with vowpal wabbit's rate ``gamma = gamma_scale * n^(1/2)``, ``n`` the number of slot
  decisions so far (each slot is one SquareCB example there). One shared oracle learns from every
  slot's reward (the rewards here do not depend on the slot).
- :class:`CombLinUCB`: top m arms by ``phi^T theta + alpha sqrt(phi^T V^{-1} phi)`` (C2UCB, Qin, Chen
  and Zhu 2014, for a linear reward model shared by the arms).
- :class:`CombLinTS`: top m arms under ``theta ~ N(theta_hat, v^2 V^{-1})`` (linear Thompson
  sampling, Agrawal and Goyal 2013; its combinatorial form, Wen et al. 2015).

UCB and Thompson sampling need a ridge model's ``V^{-1}``: their oracle is a
:class:`~.oracles.LinearOracle` on the raw features (default) or a
:class:`~.oracles.RandomFeaturesOracle`, whose ridge model on random Fourier features then gives a
kernel (RBF) UCB / Thompson sampling with ``phi`` the random features.
"""

from __future__ import annotations

import numpy as np

from paperworks.core.validate import fraction, nonnegative_float, positive_float

from .agent import CombinatorialAgent
from .igw import inverse_gap_weighting
from .oracles import LinearOracle, RandomFeaturesOracle, RegressionOracle

__all__ = ["CombLinTS", "CombLinUCB", "EpsilonGreedyTopM", "PerSlotIGW"]


def _top_m(scores: np.ndarray, m: int) -> np.ndarray:
    if m >= scores.size:
        return np.arange(scores.size, dtype=np.int64)
    return np.sort(np.argpartition(-scores, m - 1)[:m]).astype(np.int64)


class EpsilonGreedyTopM(CombinatorialAgent):
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
        self.epsilon = fraction(epsilon, "epsilon")

    def act(self, context: np.ndarray) -> np.ndarray:
        X = self._check_context(context)
        self.t_ += 1
        if self.rng.random() < self.epsilon:
            return np.sort(self.rng.choice(self.n_arms, self.m, replace=False)).astype(np.int64)
        return _top_m(self._ensure_oracle(X).predict(X), self.m)


class PerSlotIGW(CombinatorialAgent):
    """Slot-by-slot SquareCB (vowpal wabbit's CCB with ``--squarecb``); ``gamma_scale`` default 10.

    ``gamma_exponent`` (default 0.5, vowpal wabbit's) is the power of the slot-decision count.
    Attributes: ``n_decisions_`` (slot decisions so far), ``last_gamma_``.
    """

    def __init__(
        self,
        n_arms: int,
        m: int,
        oracle: RegressionOracle | None = None,
        *,
        gamma_scale: float = 10.0,
        gamma_exponent: float = 0.5,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, m, oracle, seed)
        self.gamma_scale = positive_float(gamma_scale, "gamma_scale")
        self.gamma_exponent = nonnegative_float(gamma_exponent, "gamma_exponent")
        self.n_decisions_ = 0
        self.last_gamma_: float | None = None

    def act(self, context: np.ndarray) -> np.ndarray:
        X = self._check_context(context)
        self.t_ += 1
        r = self._ensure_oracle(X).predict(X)
        left = np.arange(self.n_arms)
        chosen = []
        for _ in range(self.m):
            self.n_decisions_ += 1
            self.last_gamma_ = self.gamma_scale * self.n_decisions_**self.gamma_exponent
            p = inverse_gap_weighting(r[left], self.last_gamma_)
            j = min(
                int(np.searchsorted(np.cumsum(p), self.rng.random() * p.sum(), side="right")), left.size - 1
            )
            chosen.append(left[j])
            left = np.delete(left, j)
        return np.sort(np.array(chosen, dtype=np.int64))


class _RidgeAgent(CombinatorialAgent):
    """Shared by UCB and Thompson sampling: the ridge model (raw or random features) of the oracle."""

    def __init__(self, n_arms: int, m: int, oracle: RegressionOracle | None, seed: int | None) -> None:
        if oracle is not None and not isinstance(oracle, LinearOracle | RandomFeaturesOracle):
            raise TypeError(
                f"oracle: expected a LinearOracle or a RandomFeaturesOracle (a ridge model), got "
                f"{type(oracle).__name__}"
            )
        super().__init__(n_arms, m, oracle, seed)

    def _ridge(self, X: np.ndarray) -> tuple[np.ndarray, LinearOracle]:
        oracle = self._ensure_oracle(X)
        if isinstance(oracle, RandomFeaturesOracle):
            return oracle.features(X), oracle.linear_
        return X, oracle  # type: ignore[return-value]


class CombLinUCB(_RidgeAgent):
    """Combinatorial LinUCB (C2UCB): top m by optimistic index, ``alpha`` default 1 (MABWiser's)."""

    def __init__(
        self,
        n_arms: int,
        m: int,
        oracle: LinearOracle | RandomFeaturesOracle | None = None,
        *,
        alpha: float = 1.0,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, m, oracle, seed)
        self.alpha = nonnegative_float(alpha, "alpha")

    def act(self, context: np.ndarray) -> np.ndarray:
        X = self._check_context(context)
        self.t_ += 1
        phi, lin = self._ridge(X)
        ucb = phi @ lin.theta_ + self.alpha * np.sqrt(np.maximum(lin.variances(phi), 0.0))
        return _top_m(ucb, self.m)


class CombLinTS(_RidgeAgent):
    """Combinatorial linear Thompson sampling: one posterior draw, then the top m; ``v`` default 1."""

    def __init__(
        self,
        n_arms: int,
        m: int,
        oracle: LinearOracle | RandomFeaturesOracle | None = None,
        *,
        v: float = 1.0,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, m, oracle, seed)
        self.v = nonnegative_float(v, "v")

    def act(self, context: np.ndarray) -> np.ndarray:
        X = self._check_context(context)
        self.t_ += 1
        phi, lin = self._ridge(X)
        L = np.linalg.cholesky(lin.V_inv_ + 1e-12 * np.eye(lin.dim))
        theta = lin.theta_ + self.v * (L @ self.rng.standard_normal(lin.dim))
        return _top_m(phi @ theta, self.m)
