"""SquareCB.Comb: the agent, with the contextual-bandit interface ``act`` / ``learn``.

Each round ``t`` (our reading of the abstract, see README, Fidelity):

1. observe the context: the features of every arm, ``X_t`` of shape ``(A, d)``;
2. predict every arm's reward with the regression oracle, ``r_t = f_t(X_t)``, shape ``(A,)``;
3. solve the log-barrier program (P) of :mod:`.program` for the marginals ``q_t`` with learning
   rate ``gamma_t = gamma_scale * sqrt((A + m/2) * t / m)``, the anytime form of the rate that
   balances the two terms of the bound ``sum_t (A + m/2)/gamma_t + gamma * Reg_sq`` when
   ``Reg_sq`` grows like ``m`` (one squared loss per played arm);
4. sample an action of at most ``m`` arms with inclusion probabilities ``q_t`` (:mod:`.sampling`);
5. observe each played arm's reward and give the played rows to the oracle (``learn``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .oracles import LinearOracle, RegressionOracle
from .program import solve_marginals
from .sampling import sample_subset

__all__ = ["CombinatorialAgent", "SquareCBComb", "SquareCBCombConfig", "gamma_schedule"]


def _check_int(value: object, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ValueError(f"{name}: expected an int >= {low}, got {value!r}")
    return int(value)


def gamma_schedule(t: int | np.ndarray, n_arms: int, m: int, gamma_scale: float = 10.0) -> np.ndarray:
    """Learning rate ``gamma_t = gamma_scale * sqrt((A + m/2) * t / m)`` (rounds ``t >= 1``)."""
    t = np.asarray(t, dtype=float)
    return gamma_scale * np.sqrt((n_arms + m / 2.0) * t / m)


@dataclass(frozen=True)
class SquareCBCombConfig:
    """Hyper-parameters of SquareCB.Comb.

    Attributes:
        n_arms: number of base arms ``A``.
        m: cardinality bound of an action, ``1 <= m <= A``.
        gamma_scale: constant in front of the rate ``sqrt((A + m/2) t / m)``; the bound fixes the
            rate, not the constant (which carries the oracle's complexity ``log|F|``). Default 10,
            the default ``gamma_scale`` of vowpal wabbit's SquareCB.
        gamma: a fixed learning rate instead of the schedule (e.g. the horizon-tuned
            ``sqrt((A + m/2) T / (m C))``); ``None`` uses the schedule.
    """

    n_arms: int
    m: int
    gamma_scale: float = 10.0
    gamma: float | None = None

    def __post_init__(self) -> None:
        _check_int(self.n_arms, "n_arms", 1)
        _check_int(self.m, "m", 1)
        if self.m > self.n_arms:
            raise ValueError(f"m: expected at most n_arms={self.n_arms} arms per action, got m={self.m}")
        if not (np.isfinite(self.gamma_scale) and self.gamma_scale > 0):
            raise ValueError(f"gamma_scale: expected a positive finite number, got {self.gamma_scale!r}")
        if self.gamma is not None and not (np.isfinite(self.gamma) and self.gamma > 0):
            raise ValueError(f"gamma: expected None or a positive finite number, got {self.gamma!r}")


class CombinatorialAgent:
    """Shared boundary checks of the combinatorial semi-bandit agents (``act`` / ``learn``).

    ``context``: arm features, shape ``(n_arms, d)``. ``action``: distinct arm indices, shape
    ``(k,)`` with ``k <= m``. ``rewards``: one reward per played arm, shape ``(k,)``.
    """

    n_arms: int
    m: int
    dim: int | None = None

    def _check_context(self, context: np.ndarray) -> np.ndarray:
        X = np.asarray(context)
        if X.dtype.kind not in "fiub":
            raise ValueError(f"context: expected a numeric array, got dtype {X.dtype}")
        X = X.astype(float, copy=False)
        if X.ndim != 2 or X.shape[0] != self.n_arms:
            raise ValueError(
                f"context: expected arm features of shape (n_arms={self.n_arms}, d), got {X.shape}"
            )
        if self.dim is not None and X.shape[1] != self.dim:
            raise ValueError(f"context: expected d={self.dim} features per arm, got {X.shape[1]}")
        if not np.all(np.isfinite(X)):
            raise ValueError("context: expected finite features, got NaN or inf")
        return X

    def _check_feedback(
        self, context: np.ndarray, action: np.ndarray, rewards: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        X = self._check_context(context)
        a = np.asarray(action)
        if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
            raise ValueError(f"action: expected a 1-D array of integer arm indices, got {a.dtype} {a.shape}")
        if a.size > self.m:
            raise ValueError(f"action: expected at most m={self.m} arms, got {a.size}")
        if a.size and (a.min() < 0 or a.max() >= self.n_arms):
            raise ValueError(f"action: arm indices must lie in [0, {self.n_arms}), got {a.tolist()}")
        if np.unique(a).size != a.size:
            raise ValueError(f"action: expected distinct arms, got {a.tolist()}")
        y = np.asarray(rewards, dtype=float)
        if y.shape != a.shape:
            raise ValueError(
                f"rewards: expected one reward per played arm, shape {a.shape}, got shape {y.shape}"
            )
        if not np.all(np.isfinite(y)):
            raise ValueError("rewards: expected finite rewards, got NaN or inf")
        return X, a.astype(np.int64), y


class SquareCBComb(CombinatorialAgent):
    """SquareCB.Comb agent.

    Args:
        n_arms: number of arms ``A``.
        m: cardinality bound.
        oracle: a :class:`~.oracles.RegressionOracle`; default a :class:`~.oracles.LinearOracle` built
            on the first context's width.
        gamma_scale, gamma: see :class:`SquareCBCombConfig`.
        seed: seed of the sampling generator.

    Attributes:
        t_: rounds acted so far; last_marginals_: ``q_t`` of the last ``act`` (shape ``(A,)``);
        last_gamma_: ``gamma_t`` of the last ``act``.
    """

    def __init__(
        self,
        n_arms: int,
        m: int,
        oracle: RegressionOracle | None = None,
        *,
        gamma_scale: float = 10.0,
        gamma: float | None = None,
        seed: int | None = None,
    ) -> None:
        self.config = SquareCBCombConfig(n_arms, m, gamma_scale, gamma)
        self.n_arms, self.m = int(n_arms), int(m)
        if oracle is not None and not isinstance(oracle, RegressionOracle):
            raise TypeError(f"oracle: expected a RegressionOracle, got {type(oracle).__name__}")
        self.oracle = oracle
        self.dim = None if oracle is None else oracle.dim
        self.rng = np.random.default_rng(seed)
        self.t_ = 0
        self.last_marginals_: np.ndarray | None = None
        self.last_gamma_: float | None = None

    def _ensure_oracle(self, X: np.ndarray) -> RegressionOracle:
        if self.oracle is None:
            self.oracle = LinearOracle(X.shape[1])
            self.dim = X.shape[1]
        return self.oracle

    def gamma_at(self, t: int) -> float:
        """Learning rate of round ``t`` (1-based)."""
        c = self.config
        return (
            float(c.gamma) if c.gamma is not None else float(gamma_schedule(t, c.n_arms, c.m, c.gamma_scale))
        )

    def marginals(self, context: np.ndarray, t: int | None = None) -> np.ndarray:
        """Solution ``q`` of (P) for this context, shape ``(A,)`` (no sampling, no state change)."""
        X = self._check_context(context)
        scores = self._ensure_oracle(X).predict(X)
        return solve_marginals(scores, self.m, self.gamma_at(self.t_ + 1 if t is None else t)).q

    def act(self, context: np.ndarray) -> np.ndarray:
        """Sample an action: sorted distinct arm indices, shape ``(k,)``, ``k <= m``."""
        X = self._check_context(context)
        self.t_ += 1
        gamma = self.gamma_at(self.t_)
        q = solve_marginals(self._ensure_oracle(X).predict(X), self.m, gamma).q
        self.last_marginals_, self.last_gamma_ = q, gamma
        return sample_subset(q, self.rng)

    def learn(self, context: np.ndarray, action: np.ndarray, rewards: np.ndarray) -> None:
        """Semi-bandit feedback: ``rewards[j]`` is the reward of arm ``action[j]``.

        An empty action (which ``act`` returns when every arm is predicted far below zero) is a no-op.
        """
        X, a, y = self._check_feedback(context, action, rewards)
        if a.size:
            self._ensure_oracle(X).update(X[a], y)
