"""DQN (Mnih et al., 2015) in NumPy: the discrete-action learner of the reproduction.

The Q-network is an MLP ``obs_dim -> hidden -> hidden -> n_actions`` with ReLU, trained with the
Huber TD loss ``mean_i w_i huber(Q(s_i, a_i) - y_i)``, ``y = r + gamma (1 - done) max_a' Q_target(s',
a')``, against a target network moved every ``target_every`` updates (a copy with ``tau = 1``, else
Polyak averaging ``target <- target + tau (online - target)``), with Adam.
:class:`DQNPopulation` trains ``M`` such agents side by side (one per replay sampler in the
experiment) on one stack of networks (:class:`~paperworks.tg_replay.nets.MLPStack`); all start from
the same initial weights. :class:`NumpyDQN` is one agent with the same update. Importance weights
(for PER) multiply the per-sample loss.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import (
    as_generator,
    finite_array,
    fraction,
    positive_float,
    positive_int,
)

from .nets import Adam, MLPStack

__all__ = ["DQNConfig", "DQNPopulation", "NumpyDQN"]


@dataclass(frozen=True)
class DQNConfig:
    """Hyper-parameters of :class:`DQNPopulation` / :class:`NumpyDQN` (classic-control scale defaults)."""

    hidden: int = 64
    lr: float = 1e-3
    gamma: float = 0.99
    target_every: int = 100
    tau: float = 1.0
    adam_betas: tuple[float, float] = (0.9, 0.999)
    adam_eps: float = 1e-8
    huber_delta: float = 1.0

    def __post_init__(self) -> None:
        positive_int(self.hidden, "hidden")
        positive_float(self.lr, "lr")
        fraction(self.gamma, "gamma")
        positive_int(self.target_every, "target_every")
        fraction(self.tau, "tau", open_low=True)
        if len(self.adam_betas) != 2:
            raise ValueError(f"adam_betas: expected two numbers, got {self.adam_betas!r}")
        fraction(self.adam_betas[0], "adam_betas[0]", open_high=True)
        fraction(self.adam_betas[1], "adam_betas[1]", open_high=True)
        positive_float(self.adam_eps, "adam_eps")
        positive_float(self.huber_delta, "huber_delta")


def _epsilon(epsilon: object) -> float:
    return fraction(epsilon, "epsilon")


class DQNPopulation:
    """``n_agents`` independent DQN agents updated together.

    Shapes: observations ``(M, B, obs_dim)``, actions / rewards / dones / weights ``(M, B)``,
    Q-values ``(M, B, n_actions)``. ``act(obs, epsilon, rng)`` draws one exploration coin and one
    random action per column and shares them across agents (common random numbers); ``update``
    makes one Adam step per agent and returns the TD errors ``Q(s, a) - y``, ``(M, B)``.
    """

    def __init__(
        self,
        n_agents: int,
        obs_dim: int,
        n_actions: int,
        config: DQNConfig | None = None,
        *,
        seed: int = 0,
        dtype: type = np.float32,
    ) -> None:
        self.n_agents = positive_int(n_agents, "n_agents")
        self.obs_dim = positive_int(obs_dim, "obs_dim")
        self.n_actions = positive_int(n_actions, "n_actions")
        if config is not None and not isinstance(config, DQNConfig):
            raise TypeError(f"config: expected a DQNConfig, got {type(config).__name__}")
        self.config = cfg = config or DQNConfig()
        h = cfg.hidden
        self.net = MLPStack(
            self.n_agents, (self.obs_dim, h, h, self.n_actions), seed=seed, tied_init=True, dtype=dtype
        )
        self.target = self.net.theta.copy()
        self.adam = Adam(self.net.size, cfg.lr, cfg.adam_betas, cfg.adam_eps, dtype=dtype)
        self.updates = 0

    # -- checks at the public boundary
    def _obs(self, obs: object, name: str) -> np.ndarray:
        return finite_array(obs, name, shape=(self.n_agents, None, self.obs_dim))

    def _per_sample(self, x: object, name: str, b: int, kind: str = "f") -> np.ndarray:
        return finite_array(x, name, shape=(self.n_agents, b), dtype_kind=kind)

    def q_values(self, obs: object, *, target: bool = False) -> np.ndarray:
        """Q-values ``(M, B, n_actions)`` of observations ``(M, B, obs_dim)`` (online or target net)."""
        x = self._obs(obs, "obs")
        return self.net.forward(x, self.target if target else None)[0]

    def act(self, obs: object, epsilon: float, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Epsilon-greedy actions ``(M, B)`` for observations ``(M, B, obs_dim)``."""
        x = self._obs(obs, "obs")
        return self._act(x, _epsilon(epsilon), as_generator(rng))

    def _act(self, x: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
        greedy = self.net.forward(x)[0].argmax(axis=2)
        b = x.shape[1]
        explore = rng.random(b) < epsilon
        if not explore.any():
            return greedy
        random_action = rng.integers(0, self.n_actions, b)
        return np.where(explore, random_action, greedy)

    def greedy(self, x: np.ndarray) -> np.ndarray:
        """Greedy actions ``(M, B)`` (no checks: the evaluation loop)."""
        return self.net.forward(x)[0].argmax(axis=2)

    def update(
        self,
        obs: object,
        action: object,
        reward: object,
        next_obs: object,
        done: object,
        weights: object | None = None,
    ) -> np.ndarray:
        """One Adam step per agent on its batch; returns the TD errors ``(M, B)``.

        ``action``: ints in ``[0, n_actions)``; ``done``: 0/1 (termination, not time-limit
        truncation); ``weights``: non-negative importance weights (default 1).
        """
        x = self._obs(obs, "obs")
        b = x.shape[1]
        xn = finite_array(next_obs, "next_obs", shape=(self.n_agents, b, self.obs_dim))
        a = self._per_sample(action, "action", b, "i")
        if a.min() < 0 or a.max() >= self.n_actions:
            raise ValueError(
                f"action: expected ints in [0, {self.n_actions}), got [{int(a.min())}, {int(a.max())}]"
            )
        r = self._per_sample(reward, "reward", b)
        d = finite_array(done, "done", shape=(self.n_agents, b), dtype_kind=None)
        if not np.isin(d, (0, 1)).all():
            raise ValueError("done: expected 0/1 (or bool) flags")
        w = None
        if weights is not None:
            w = self._per_sample(weights, "weights", b)
            if w.min() < 0:
                raise ValueError(f"weights: expected non-negative importance weights, got min {w.min():.4g}")
        return self._update(x, a, r, xn, d.astype(self.net.dtype), w)

    def _update(
        self,
        x: np.ndarray,
        a: np.ndarray,
        r: np.ndarray,
        xn: np.ndarray,
        d: np.ndarray,
        w: np.ndarray | None,
    ) -> np.ndarray:
        cfg = self.config
        net = self.net
        q_next = net.forward(xn, self.target)[0].max(axis=2)
        y = r + cfg.gamma * (1.0 - d) * q_next
        q, cache = net.forward(x, cache=True)
        ai = a[..., None]
        td = np.take_along_axis(q, ai, axis=2)[..., 0] - y
        g = np.clip(td, -cfg.huber_delta, cfg.huber_delta) * (1.0 / x.shape[1])
        if w is not None:
            g = g * w
        dq = np.zeros_like(q)
        np.put_along_axis(dq, ai, g[..., None].astype(q.dtype), axis=2)
        net.backward(cache, dq)
        self.adam.step(net.theta, net.grad)
        self.updates += 1
        if self.updates % cfg.target_every == 0:
            if cfg.tau == 1.0:
                self.target[...] = net.theta
            else:
                self.target += cfg.tau * (net.theta - self.target)
        return td


class NumpyDQN:
    """One DQN agent (a :class:`DQNPopulation` of one, in float64): the 2-d API of a single learner.

    ``q_values(obs)``: ``(B, obs_dim) -> (B, n_actions)``; ``act(obs, epsilon, rng)``: epsilon-greedy
    actions ``(B,)``; ``update(obs, action, reward, next_obs, done, weights)``: one Adam step on the
    batch, returns the TD errors ``(B,)``.
    """

    def __init__(
        self, obs_dim: int, n_actions: int, config: DQNConfig | None = None, *, seed: int = 0
    ) -> None:
        self.population = DQNPopulation(1, obs_dim, n_actions, config, seed=seed, dtype=np.float64)
        self.config = self.population.config
        self.obs_dim, self.n_actions = self.population.obs_dim, self.population.n_actions

    @property
    def theta(self) -> np.ndarray:
        """The flat parameter vector (a view)."""
        return self.population.net.theta

    @property
    def grad(self) -> np.ndarray:
        """The gradient of the last update (a view, same layout as :attr:`theta`)."""
        return self.population.net.grad

    @property
    def target(self) -> np.ndarray:
        """The target network's flat parameters (a view)."""
        return self.population.target

    @property
    def updates(self) -> int:
        return self.population.updates

    def q_values(self, obs: object, *, target: bool = False) -> np.ndarray:
        x = finite_array(obs, "obs", shape=(None, self.obs_dim))
        return self.population.q_values(x[None], target=target)[0]

    def act(self, obs: object, epsilon: float, rng: np.random.Generator | int | None = None) -> np.ndarray:
        x = finite_array(obs, "obs", shape=(None, self.obs_dim))
        return self.population.act(x[None], epsilon, rng)[0]

    def update(
        self,
        obs: object,
        action: object,
        reward: object,
        next_obs: object,
        done: object,
        weights: object | None = None,
    ) -> np.ndarray:
        x = finite_array(obs, "obs", shape=(None, self.obs_dim))
        b = x.shape[0]

        def lift(v: object, name: str) -> np.ndarray:
            arr = np.asarray(v)
            if arr.shape != (b,):
                raise ValueError(f"{name}: expected shape ({b},) like obs, got {arr.shape}")
            return arr[None]

        w = None if weights is None else lift(weights, "weights")
        xn = finite_array(next_obs, "next_obs", shape=(b, self.obs_dim))
        return self.population.update(
            x[None], lift(action, "action"), lift(reward, "reward"), xn[None], lift(done, "done"), w
        )[0]
