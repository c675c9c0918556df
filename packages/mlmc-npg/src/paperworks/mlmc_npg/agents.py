"""An MLMC-NPG agent for gymnasium / mo-gymnasium environments with discrete observations.

The agent holds a tabular softmax policy over ``(state index, action)``; ``learn(env, budget)`` runs
``budget`` episodes of the environment, whose ``step`` returns a *vector* reward of length ``M`` (the
mo-gymnasium convention). Each iteration:

1. collect episodes with the current policy through a return sampler (each episode's discounted
   return vector is one unbiased estimate of ``J``), and estimate the scalarisation weights with the
   MLMC estimator (``estimator="mlmc"``) or the plug-in (``"plugin"``) from them;
2. fit the NPG direction by compatible function approximation: least squares of the scalarised,
   baselined returns-to-go ``w . G_t - b(s_t)`` on ``grad log pi(a_t | s_t)`` over every step of the
   iteration's episodes (:func:`compatible_npg_direction`);
3. ``theta += eta * u``.

Observation spaces: ``Discrete(n)``, or an integer ``Box``/``MultiDiscrete`` with finite bounds (a grid
position, as in deep-sea-treasure), flattened by :func:`state_index`. Nothing here imports gymnasium:
any object with gymnasium's ``reset``/``step`` signature and spaces works.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperworks.core.validate import (
    as_generator,
    fraction,
    nonnegative_float,
    one_of,
    positive_float,
    positive_int,
)

from .estimators import MLMCEstimator, plugin_weights
from .policy import compatible_npg_direction, log_policy_features, softmax_policy
from .scalarization import ConcaveScalarization

__all__ = ["MLMCNPGAgent", "state_index"]


def state_index(space: Any) -> tuple[int, Any]:
    """``(number of states, obs -> int)`` for a discrete or integer-box observation space."""
    n = getattr(space, "n", None)
    if n is not None and np.ndim(n) == 0:
        start = int(getattr(space, "start", 0))
        return int(n), lambda obs: int(np.asarray(obs).item()) - start
    nvec = getattr(space, "nvec", None)
    if nvec is not None:
        dims = tuple(int(k) for k in np.ravel(nvec))
        return int(np.prod(dims)), lambda obs: int(
            np.ravel_multi_index(tuple(np.ravel(obs).astype(int)), dims)
        )
    low, high = getattr(space, "low", None), getattr(space, "high", None)
    dtype = getattr(space, "dtype", None)
    if low is not None and np.issubdtype(np.dtype(dtype), np.integer) and np.all(np.isfinite(high)):
        lo = np.ravel(low).astype(int)
        dims = tuple(int(d) for d in np.ravel(high).astype(int) - lo + 1)
        return int(np.prod(dims)), lambda obs: int(
            np.ravel_multi_index(tuple(np.ravel(obs).astype(int) - lo), dims)
        )
    raise ValueError(
        f"env.observation_space: expected Discrete, MultiDiscrete or a bounded integer Box, got {space!r}"
    )


class MLMCNPGAgent:
    """Sample-based NPG with MLMC (or plug-in) scalarisation weights (see the module docstring).

    ``f``: the concave utility; ``gamma``: discount of the returns in (0, 1); ``batch``: expected
    episodes per iteration; ``max_level``: MLMC's ``L_max``; ``eta``: step size; ``ridge``: the least
    squares' ridge; ``max_steps``: episodes are cut after this many steps.
    """

    def __init__(
        self,
        f: ConcaveScalarization,
        *,
        gamma: float = 0.99,
        estimator: str = "mlmc",
        batch: int = 32,
        max_level: int = 4,
        eta: float = 0.1,
        ridge: float = 1e-3,
        max_steps: int = 200,
        seed: object = None,
    ) -> None:
        if not isinstance(f, ConcaveScalarization):
            raise TypeError(f"f: expected a ConcaveScalarization, got {type(f).__name__}")
        self.f = f
        self.gamma = fraction(gamma, "gamma", open_low=True, open_high=True)
        self.estimator = one_of(estimator, "estimator", ("mlmc", "plugin"))
        self.batch = positive_int(batch, "batch")
        self.max_level = positive_int(max_level, "max_level (L_max)")
        self.eta = positive_float(eta, "eta")
        self.ridge = nonnegative_float(ridge, "ridge")
        self.max_steps = positive_int(max_steps, "max_steps")
        self.rng = as_generator(seed, "seed")
        self.theta_: np.ndarray | None = None
        self.episodes_ = 0
        self.history_: list[dict[str, Any]] = []

    # -- policy ----------------------------------------------------------------------------------------
    @property
    def policy_(self) -> np.ndarray:
        """The current policy ``(S, A)``."""
        if self.theta_ is None:
            raise RuntimeError("policy_: the agent has not been fitted; call learn(env, budget) first")
        return softmax_policy(self.theta_)

    def act(self, obs: Any, greedy: bool = False) -> int:
        pi = self.policy_[self._index(obs)]
        return int(pi.argmax()) if greedy else int(self.rng.choice(pi.size, p=pi))

    # -- learning --------------------------------------------------------------------------------------
    def _setup(self, env: Any) -> None:
        n_states, self._index = state_index(env.observation_space)
        n_actions = getattr(env.action_space, "n", None)
        if n_actions is None:
            raise ValueError(f"env.action_space: expected a Discrete space, got {env.action_space!r}")
        shape = (n_states, int(n_actions))
        if self.theta_ is None or self.theta_.shape != shape:
            self.theta_ = np.zeros(shape)

    def _episode(self, env: Any, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One episode: states, actions (``(T,)``) and discounted returns-to-go (``(T, M)``)."""
        obs, _ = env.reset(seed=int(self.rng.integers(2**31)))
        states, actions, rewards = [], [], []
        for _ in range(self.max_steps):
            s = self._index(obs)
            a = int(self.rng.choice(pi.shape[1], p=pi[s]))
            obs, r, terminated, truncated, _ = env.step(a)
            r = np.atleast_1d(np.asarray(r, dtype=float))
            if r.shape != (self.f.n_objectives,):
                raise ValueError(
                    f"env: reward dimension {r.size} does not match the utility's M = {self.f.n_objectives}"
                )
            states.append(s)
            actions.append(a)
            rewards.append(r)
            if terminated or truncated:
                break
        R = np.array(rewards)
        G = np.zeros_like(R)
        acc = np.zeros(R.shape[1])
        for t in range(len(R) - 1, -1, -1):
            acc = R[t] + self.gamma * acc
            G[t] = acc
        return np.array(states), np.array(actions), G

    def learn(self, env: Any, budget: int) -> MLMCNPGAgent:
        """Run about ``budget`` episodes of ``env`` (whole iterations: it may overshoot by one batch)."""
        budget = positive_int(budget, "budget")
        self._setup(env)
        start = self.episodes_
        mlmc = MLMCEstimator(self.f, self.max_level) if self.estimator == "mlmc" else None
        while self.episodes_ - start < budget:
            pi = self.policy_
            steps: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

            def sampler(
                n: int, gen: np.random.Generator, pi: np.ndarray = pi, steps: list = steps
            ) -> np.ndarray:
                out = []
                for _ in range(n):
                    ep = self._episode(env, pi)
                    steps.append(ep)
                    out.append(ep[2][0])
                return np.array(out)

            if mlmc is not None:
                est = mlmc(sampler, self.rng, calls=max(1, round(self.batch / mlmc.expected_cost)))
                w = est.weights.mean(axis=0)
            else:
                est = plugin_weights(self.f, sampler, self.batch, self.rng)
                w = est.weights
            self.episodes_ += est.rollouts
            s = np.concatenate([e[0] for e in steps])
            a = np.concatenate([e[1] for e in steps])
            y = np.concatenate([e[2] for e in steps]) @ w
            base = np.zeros(pi.shape[0])
            np.add.at(base, s, y)
            counts = np.bincount(s, minlength=pi.shape[0])
            base = base / np.maximum(counts, 1)
            u = compatible_npg_direction(log_policy_features(pi, s, a), y - base[s], self.ridge)
            self.theta_ = self.theta_ + self.eta * u.reshape(pi.shape)
            J_hat = np.array([e[2][0] for e in steps]).mean(axis=0)
            self.history_.append({"episodes": self.episodes_, "J_hat": J_hat, "weights": w})
        return self

    # -- persistence -----------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Logits, counters and the generator state (a round trip through :meth:`load_state_dict`)."""
        return {
            "theta": None if self.theta_ is None else self.theta_.copy(),
            "episodes": self.episodes_,
            "rng": self.rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict[str, Any]) -> MLMCNPGAgent:
        theta = state["theta"]
        self.theta_ = None if theta is None else np.array(theta, dtype=float)
        self.episodes_ = int(state["episodes"])
        self.rng.bit_generator.state = state["rng"]
        return self
