"""SquareCB.Comb: the agent, with the contextual-bandit interface ``act`` / ``learn``.

Each round ``t`` (our reading of the abstract, see README, Fidelity):

1. observe the context: the features of every arm, ``X_t`` of shape ``(A, d)``;
2. predict every arm's reward with the regression oracle, ``r_t = f_t(X_t)``, shape ``(A,)``;
3. compute the inclusion marginals ``q_t`` with learning rate
   ``gamma_t = gamma_scale * sqrt((A + m/2) * t / m)``, the anytime form of the rate that balances
   the two terms of the bound ``sum_t (A + m/2)/gamma_t + gamma * Reg_sq`` when ``Reg_sq`` grows
   like ``m`` (one squared loss per played arm). ``exploration="log_barrier"`` (default) solves the
   convex program (P) of :mod:`.program`; ``exploration="igw"`` uses the closed-form inverse-gap
   weighting (IGW-m) of :mod:`.igw`, which is SquareCB's own rule at ``m = 1``;
4. sample an action of at most ``m`` arms with inclusion probabilities ``q_t`` (:mod:`.sampling`);
5. observe each played arm's reward and give the played rows to the oracle (``learn``).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import finite_array, int_in_range, one_of, positive_float, positive_int

from .environment import check_action
from .igw import igw_marginals
from .oracles import LinearOracle, RegressionOracle
from .program import solve_marginals
from .sampling import sample_subset

__all__ = ["EXPLORATIONS", "CombinatorialAgent", "SquareCBComb", "SquareCBCombConfig", "gamma_schedule"]

EXPLORATIONS = ("log_barrier", "igw")


def gamma_schedule(t: int | np.ndarray, n_arms: int, m: int, gamma_scale: float = 10.0) -> np.ndarray:
    """Learning rate ``gamma_t = gamma_scale * sqrt((A + m/2) * t / m)`` for rounds ``t >= 1``.

    ``t``: an int or an array of rounds (finite, ``>= 1``); the result has ``t``'s shape.
    """
    n_arms = positive_int(n_arms, "n_arms")
    m = int_in_range(m, "m", 1, n_arms)
    gamma_scale = positive_float(gamma_scale, "gamma_scale")
    t = finite_array(t, "t", dtype_kind="f")
    if t.min() < 1:
        raise ValueError(f"t: expected rounds >= 1, got min {t.min():g}")
    return gamma_scale * np.sqrt((n_arms + m / 2.0) * t / m)


@dataclass(frozen=True)
class SquareCBCombConfig:
    """Hyper-parameters of SquareCB.Comb.

    Attributes:
        n_arms: number of base arms ``A``.
        m: cardinality bound of an action, ``1 <= m <= A``.
        gamma_scale: constant in front of the rate ``sqrt((A + m/2) t / m)``; the bound fixes the
            rate, not the constant (which carries the oracle's complexity ``log|F|``). Default 10,
            the default ``gamma_scale`` of vowpal wabbit's SquareCB; the experiment tunes it on a
            grid fixed in advance, on seeds of its own (see ``experiments.py``).
        gamma: a fixed learning rate instead of the schedule (e.g. the horizon-tuned
            ``sqrt((A + m/2) T / (m C))``); ``None`` uses the schedule.
        exploration: ``"log_barrier"`` (the convex program (P), default) or ``"igw"`` (closed-form
            inverse-gap weighting, SquareCB's at ``m = 1``).
        null_arm: with ``"igw"``, add ``m`` null arms of predicted reward 0, so that an action may
            hold fewer than ``m`` arms (the log-barrier program allows that by itself).
    """

    n_arms: int
    m: int
    gamma_scale: float = 10.0
    gamma: float | None = None
    exploration: str = "log_barrier"
    null_arm: bool = False

    def __post_init__(self) -> None:
        positive_int(self.n_arms, "n_arms")
        int_in_range(self.m, "m", 1, self.n_arms)
        positive_float(self.gamma_scale, "gamma_scale")
        if self.gamma is not None:
            positive_float(self.gamma, "gamma")
        one_of(self.exploration, "exploration", EXPLORATIONS)
        if not isinstance(self.null_arm, bool | np.bool_):
            raise TypeError(f"null_arm: expected a bool, got {type(self.null_arm).__name__}")
        if self.null_arm and self.exploration != "igw":
            raise ValueError(
                "null_arm: expected False with exploration='log_barrier' (its program already allows "
                "fewer than m arms); use exploration='igw'"
            )


class CombinatorialAgent(abc.ABC):
    """Base of every agent here: boundary checks, the regression oracle, seeded sampling, ``learn``.

    ``context``: arm features, shape ``(n_arms, d)``. ``action``: distinct arm indices, shape
    ``(k,)`` with ``k <= m``. ``rewards``: one reward per played arm, shape ``(k,)``. Subclasses
    implement :meth:`act`; ``learn`` gives the played rows to ``self.oracle`` (built on the first
    context's width by :meth:`_make_oracle` when none was given).

    Attributes:
        t_: rounds acted so far; oracle: the regression oracle (``None`` until the first context).
    """

    def __init__(self, n_arms: int, m: int, oracle: RegressionOracle | None = None, seed: int | None = None):
        self.n_arms = positive_int(n_arms, "n_arms")
        self.m = int_in_range(m, "m", 1, self.n_arms)
        if oracle is not None and not isinstance(oracle, RegressionOracle):
            raise TypeError(f"oracle: expected a RegressionOracle, got {type(oracle).__name__}")
        self.oracle = oracle
        self.dim: int | None = None if oracle is None else oracle.dim
        if seed is not None:
            int_in_range(seed, "seed", 0)
        self.rng = np.random.default_rng(seed)
        self.t_ = 0

    def _make_oracle(self, dim: int) -> RegressionOracle:
        return LinearOracle(dim)

    def _ensure_oracle(self, X: np.ndarray) -> RegressionOracle:
        if self.oracle is None:
            self.oracle = self._make_oracle(X.shape[1])
            self.dim = X.shape[1]
        return self.oracle

    def _check_context(self, context: np.ndarray) -> np.ndarray:
        X = finite_array(context, "context", ndim=2)
        if X.shape[0] != self.n_arms:
            raise ValueError(
                f"context: expected arm features of shape (n_arms={self.n_arms}, d), got {X.shape}"
            )
        if self.dim is not None and X.shape[1] != self.dim:
            raise ValueError(f"context: expected d={self.dim} features per arm, got {X.shape[1]}")
        return X

    def _check_feedback(
        self, context: np.ndarray, action: np.ndarray, rewards: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        X = self._check_context(context)
        a = check_action(action, self.n_arms, self.m)
        y = finite_array(rewards, "rewards", ndim=1, allow_empty=True)
        if y.shape != a.shape:
            raise ValueError(
                f"rewards: expected one reward per played arm, shape {a.shape}, got shape {y.shape}"
            )
        return X, a, y

    @abc.abstractmethod
    def act(self, context: np.ndarray) -> np.ndarray:
        """Choose an action for ``context``: sorted distinct arm indices, shape ``(k,)``, ``k <= m``."""

    def learn(self, context: np.ndarray, action: np.ndarray, rewards: np.ndarray) -> None:
        """Semi-bandit feedback: ``rewards[j]`` is the reward of arm ``action[j]`` (empty: a no-op)."""
        X, a, y = self._check_feedback(context, action, rewards)
        if a.size:
            self._ensure_oracle(X).update(X[a], y)


class SquareCBComb(CombinatorialAgent):
    """SquareCB.Comb agent.

    Args:
        n_arms: number of arms ``A``.
        m: cardinality bound.
        oracle: a :class:`~.oracles.RegressionOracle`; default a :class:`~.oracles.LinearOracle` built
            on the first context's width.
        gamma_scale, gamma, exploration, null_arm: see :class:`SquareCBCombConfig`.
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
        exploration: str = "log_barrier",
        null_arm: bool = False,
        seed: int | None = None,
    ) -> None:
        self.config = SquareCBCombConfig(n_arms, m, gamma_scale, gamma, exploration, null_arm)
        super().__init__(n_arms, m, oracle, seed)
        self.last_marginals_: np.ndarray | None = None
        self.last_gamma_: float | None = None

    def gamma_at(self, t: int) -> float:
        """Learning rate of round ``t`` (1-based)."""
        c = self.config
        if c.gamma is not None:
            return float(c.gamma)
        return float(gamma_schedule(positive_int(t, "t"), c.n_arms, c.m, c.gamma_scale))

    def _marginals(self, scores: np.ndarray, gamma: float) -> np.ndarray:
        if self.config.exploration == "igw":
            return igw_marginals(scores, self.m, gamma, null_arm=self.config.null_arm)
        return solve_marginals(scores, self.m, gamma).q

    def marginals(self, context: np.ndarray, t: int | None = None) -> np.ndarray:
        """Marginals ``q`` for this context, shape ``(A,)`` (no sampling, no state change)."""
        X = self._check_context(context)
        scores = self._ensure_oracle(X).predict(X)
        return self._marginals(scores, self.gamma_at(self.t_ + 1 if t is None else t))

    def act(self, context: np.ndarray) -> np.ndarray:
        """Sample an action: sorted distinct arm indices, shape ``(k,)``, ``k <= m``."""
        X = self._check_context(context)
        self.t_ += 1
        gamma = self.gamma_at(self.t_)
        q = self._marginals(self._ensure_oracle(X).predict(X), gamma)
        self.last_marginals_, self.last_gamma_ = q, gamma
        return sample_subset(q, self.rng)
