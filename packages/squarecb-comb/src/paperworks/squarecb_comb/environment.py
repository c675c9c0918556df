"""Generated contextual combinatorial semi-bandit environments.

Generative model (latent: ``theta``, ``theta2``; observed each round: the arm features and the
rewards of the played arms):

- every round, arm ``i`` gets features ``x_{t,i} = (1, z_{t,i})`` with ``z_{t,i}`` uniform on the
  unit sphere of ``R^{d-1}`` (shape of the context: ``(A, d)``);
- the mean reward is ``mu_{t,i} = 0.5 + 0.45 * g(z_{t,i})`` with
  ``g(z) = <theta, z>`` (``kind="linear"``: realisable by a linear oracle on ``x``), or
  ``g(z) = (1 - eps) <theta, z> + eps sin(pi sqrt(d-1) <theta2, z>)`` (``kind="misspecified"``;
  ``eps`` the ``misspecification``), ``theta, theta2`` unit vectors, so ``mu`` lies in
  ``[0.05, 0.95]``;
- the reward of a played arm is ``Bernoulli(mu_{t,i})`` (a click), independent across arms.

The best action is the top-m arms by ``mu`` (all means are positive), and the regret of an action
``S`` is ``sum of the top-m mu - sum_{i in S} mu_i`` (pseudo-regret).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["EnvironmentConfig", "SemiBanditEnvironment"]


@dataclass(frozen=True)
class EnvironmentConfig:
    """Size and kind of a generated environment."""

    n_arms: int
    m: int
    dim: int = 10
    kind: str = "linear"
    misspecification: float = 0.5

    def __post_init__(self) -> None:
        for name in ("n_arms", "m", "dim"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
                raise ValueError(f"{name}: expected a positive int, got {v!r}")
        if self.m > self.n_arms:
            raise ValueError(f"m: expected at most n_arms={self.n_arms}, got m={self.m}")
        if self.dim < 2:
            raise ValueError(f"dim: expected at least 2 (a bias and one feature), got {self.dim}")
        if self.kind not in ("linear", "misspecified"):
            raise ValueError(f"kind: expected 'linear' or 'misspecified', got {self.kind!r}")
        if not 0.0 <= self.misspecification <= 1.0:
            raise ValueError(f"misspecification: expected a weight in [0, 1], got {self.misspecification!r}")


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


class SemiBanditEnvironment:
    """Draws contexts and semi-bandit rewards; computes pseudo-regret. Seeded, vectorised over arms."""

    def __init__(self, config: EnvironmentConfig, seed: int = 0) -> None:
        self.config = config
        self.rng = np.random.default_rng(seed)
        k = config.dim - 1
        self.theta = _unit(self.rng.standard_normal(k))
        self.theta2 = _unit(self.rng.standard_normal(k))

    def context(self) -> np.ndarray:
        """Arm features of a new round, shape ``(A, d)`` (first column the constant 1)."""
        c = self.config
        z = _unit(self.rng.standard_normal((c.n_arms, c.dim - 1)))
        return np.concatenate([np.ones((c.n_arms, 1)), z], axis=1)

    def mean_rewards(self, context: np.ndarray) -> np.ndarray:
        """``mu_t``, shape ``(A,)``."""
        z = np.asarray(context, dtype=float)[:, 1:]
        g = z @ self.theta
        if self.config.kind == "misspecified":
            eps = self.config.misspecification
            g = (1 - eps) * g + eps * np.sin(np.pi * np.sqrt(z.shape[1]) * (z @ self.theta2))
        return 0.5 + 0.45 * g

    def rewards(self, mu: np.ndarray, action: np.ndarray) -> np.ndarray:
        """Bernoulli rewards of the played arms, shape ``(len(action),)``."""
        return (self.rng.random(len(action)) < mu[action]).astype(float)

    def regret(self, mu: np.ndarray, action: np.ndarray) -> float:
        """Pseudo-regret of ``action`` against the best action of at most ``m`` arms."""
        m = self.config.m
        best = np.partition(mu, mu.size - m)[mu.size - m :]
        return float(best[best > 0].sum() - mu[np.asarray(action, dtype=np.int64)].sum())
