"""Generated contextual combinatorial semi-bandit environments.

Generative model (latent: the reward function's parameters; observed each round: the arm features
and the rewards of the played arms):

- every round, arm ``i`` gets features ``x_{t,i} = (1, z_{t,i})`` with ``z_{t,i}`` uniform on the
  unit sphere of ``R^{d-1}`` (shape of the context: ``(A, d)``);
- the mean reward is ``mu_{t,i} = 0.5 + 0.45 * g(z_{t,i})`` with, by ``kind``:

  - ``"linear"``: ``g(z) = <theta, z>``, realisable by a linear model on ``x``;
  - ``"misspecified"``: ``g(z) = (1 - eps) <theta, z> + eps sin(pi sqrt(d-1) <theta2, z>)``
    (``eps`` the ``misspecification``);
  - ``"nonlinear"``: ``u`` a draw from a Gaussian process with the RBF kernel of length scale
    ``lengthscale`` on the sphere, realised with ``n_basis`` random Fourier features
    (``u(z) = sqrt(2/N) sum_j w_j cos(<omega_j, z> + c_j)``, ``omega_j ~ N(0, I / lengthscale^2)``,
    ``c_j ~ U[0, 2 pi)``, ``w_j ~ N(0, 1)``), and ``g = clip(u / (3 sd(u)), -1, 1)`` (``sd`` over the
    sphere, estimated once from 4096 draws), so that ``g`` has about the spread of the linear
    ``<theta, z>`` while a linear model on ``x`` explains only part of it (at the default length
    scale 0.7 and ``d = 10``, a least-squares linear fit of ``mu`` explains less than half of its
    variance on average; the tests check it over several seeds);

  ``theta, theta2`` are unit vectors, so ``mu`` lies in ``[0.05, 0.95]``;
- the reward of a played arm is ``Bernoulli(mu_{t,i})`` (a click), independent across arms.

The best action is the top-m arms by ``mu`` (all means are positive), and the regret of an action
``S`` is ``sum of the top-m mu - sum_{i in S} mu_i`` (pseudo-regret).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import (
    finite_array,
    fraction,
    int_in_range,
    nonnegative_int,
    one_of,
    positive_float,
    positive_int,
)

__all__ = ["KINDS", "EnvironmentConfig", "SemiBanditEnvironment", "check_action"]

KINDS = ("linear", "misspecified", "nonlinear")


@dataclass(frozen=True)
class EnvironmentConfig:
    """Size and kind of a generated environment (``lengthscale``, ``n_basis``: the ``"nonlinear"`` GP)."""

    n_arms: int
    m: int
    dim: int = 10
    kind: str = "linear"
    misspecification: float = 0.5
    lengthscale: float = 0.7
    n_basis: int = 1024

    def __post_init__(self) -> None:
        positive_int(self.n_arms, "n_arms")
        int_in_range(self.m, "m", 1, self.n_arms)
        int_in_range(self.dim, "dim", 2)
        one_of(self.kind, "kind", KINDS)
        fraction(self.misspecification, "misspecification")
        positive_float(self.lengthscale, "lengthscale")
        positive_int(self.n_basis, "n_basis")


def check_action(action: object, n_arms: int, m: int, name: str = "action") -> np.ndarray:
    """A validated action: a 1-D int64 array of at most ``m`` distinct arms in ``[0, n_arms)``."""
    try:
        arr = np.asarray(action)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}: expected a 1-d array of arm indices ({e})") from None
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-d array of arm indices, got shape {arr.shape}")
    if arr.size == 0:
        return np.empty(0, dtype=np.int64)
    a = finite_array(arr, name, ndim=1, dtype_kind="i")
    if a.size > m:
        raise ValueError(f"{name}: expected at most m={m} arms, got {a.size}")
    if a.min() < 0 or a.max() >= n_arms:
        raise ValueError(f"{name}: expected arm indices in [0, {n_arms}), got {a.tolist()}")
    if np.unique(a).size != a.size:
        raise ValueError(f"{name}: expected distinct arms, got {a.tolist()}")
    return a.astype(np.int64)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


class SemiBanditEnvironment:
    """Draws contexts and semi-bandit rewards; computes pseudo-regret. Seeded, vectorised over arms."""

    def __init__(self, config: EnvironmentConfig, seed: int = 0) -> None:
        if not isinstance(config, EnvironmentConfig):
            raise TypeError(f"config: expected an EnvironmentConfig, got {type(config).__name__}")
        self.config = config
        self.rng = np.random.default_rng(nonnegative_int(seed, "seed"))
        k = config.dim - 1
        self.theta = _unit(self.rng.standard_normal(k))
        self.theta2 = _unit(self.rng.standard_normal(k))
        if config.kind == "nonlinear":
            n = config.n_basis
            self.omega = self.rng.standard_normal((k, n)) / config.lengthscale
            self.phase = self.rng.uniform(0.0, 2 * np.pi, n)
            self.weights = self.rng.standard_normal(n) * np.sqrt(2.0 / n)
            self.u_scale = 3.0 * float(self._gp(_unit(self.rng.standard_normal((4096, k)))).std())

    def _gp(self, z: np.ndarray) -> np.ndarray:
        return np.cos(z @ self.omega + self.phase) @ self.weights

    def context(self) -> np.ndarray:
        """Arm features of a new round, shape ``(A, d)`` (first column the constant 1)."""
        c = self.config
        z = _unit(self.rng.standard_normal((c.n_arms, c.dim - 1)))
        return np.concatenate([np.ones((c.n_arms, 1)), z], axis=1)

    def mean_rewards(self, context: np.ndarray) -> np.ndarray:
        """``mu_t``, shape ``(A,)``, for a context of shape ``(A, d)``."""
        c = self.config
        X = finite_array(context, "context", shape=(c.n_arms, c.dim))
        z = X[:, 1:]
        if c.kind == "nonlinear":
            g = np.clip(self._gp(z) / self.u_scale, -1.0, 1.0)
        else:
            g = z @ self.theta
            if c.kind == "misspecified":
                eps = c.misspecification
                g = (1 - eps) * g + eps * np.sin(np.pi * np.sqrt(z.shape[1]) * (z @ self.theta2))
        return 0.5 + 0.45 * g

    def _check_mu(self, mu: object) -> np.ndarray:
        mu = finite_array(mu, "mu", shape=(self.config.n_arms,))
        if mu.min() < 0 or mu.max() > 1:
            raise ValueError(
                f"mu: expected mean rewards in [0, 1], got min {mu.min():.4g}, max {mu.max():.4g}"
            )
        return mu

    def rewards(self, mu: np.ndarray, action: np.ndarray) -> np.ndarray:
        """Bernoulli rewards of the played arms, shape ``(len(action),)``."""
        mu = self._check_mu(mu)
        a = check_action(action, self.config.n_arms, self.config.m)
        return (self.rng.random(a.size) < mu[a]).astype(float)

    def regret(self, mu: np.ndarray, action: np.ndarray) -> float:
        """Pseudo-regret of ``action`` against the best action of at most ``m`` arms."""
        mu = self._check_mu(mu)
        return self._pseudo_regret(mu, check_action(action, self.config.n_arms, self.config.m))

    def _pseudo_regret(self, mu: np.ndarray, a: np.ndarray) -> float:
        m = self.config.m
        best = np.partition(mu, mu.size - m)[mu.size - m :]
        return float(best[best > 0].sum() - mu[a].sum())
