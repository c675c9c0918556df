"""A small DQN (Mnih et al., 2015) in NumPy, the off-policy learner of the reproduction.

The Q-network is an MLP ``obs_dim -> hidden -> hidden -> n_actions`` with ReLU, trained with the
Huber TD loss against a periodically copied target network and Adam. Backpropagation is written
out by hand over a flat parameter vector, so one update is a dozen NumPy calls: at laptop scale
(2 shared CPU cores) this is several times faster than a framework's per-operation overhead, and
it keeps the package's experiment free of a deep-learning dependency. Importance weights (for PER)
multiply the per-sample loss.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DQNConfig", "NumpyDQN"]


@dataclass(frozen=True)
class DQNConfig:
    """Hyper-parameters of :class:`NumpyDQN` (CartPole-scale defaults)."""

    hidden: int = 64
    lr: float = 1e-3
    gamma: float = 0.99
    target_every: int = 100
    adam_betas: tuple[float, float] = (0.9, 0.999)
    adam_eps: float = 1e-8
    huber_delta: float = 1.0

    def __post_init__(self) -> None:
        if self.hidden < 1:
            raise ValueError(f"hidden: expected a positive int, got {self.hidden}")
        if not self.lr > 0:
            raise ValueError(f"lr: expected > 0, got {self.lr}")
        if not 0 <= self.gamma <= 1:
            raise ValueError(f"gamma: expected a discount in [0, 1], got {self.gamma}")
        if self.target_every < 1:
            raise ValueError(f"target_every: expected a positive int, got {self.target_every}")
        if self.huber_delta <= 0:
            raise ValueError(f"huber_delta: expected > 0, got {self.huber_delta}")


class NumpyDQN:
    """Q-learning with an MLP and a target network.

    ``q_values(obs)``: ``(B, obs_dim) -> (B, n_actions)``; ``act(obs, epsilon, rng)``: epsilon-greedy
    actions ``(B,)``; ``update(obs, action, reward, next_obs, done, weights)``: one Adam step on the
    batch, returns the TD errors ``(B,)``.
    """

    def __init__(
        self, obs_dim: int, n_actions: int, config: DQNConfig | None = None, *, seed: int = 0
    ) -> None:
        if obs_dim < 1 or n_actions < 1:
            raise ValueError(f"obs_dim, n_actions: expected positive ints, got {obs_dim}, {n_actions}")
        self.config = cfg = config or DQNConfig()
        self.obs_dim, self.n_actions = int(obs_dim), int(n_actions)
        h = cfg.hidden
        shapes = [(obs_dim, h), (h,), (h, h), (h,), (h, n_actions), (n_actions,)]
        sizes = [int(np.prod(s)) for s in shapes]
        self.theta = np.zeros(sum(sizes), dtype=np.float64)
        self.grad = np.zeros_like(self.theta)
        self._views = []
        self._gviews = []
        off = 0
        for s, n in zip(shapes, sizes, strict=True):
            self._views.append(self.theta[off : off + n].reshape(s))
            self._gviews.append(self.grad[off : off + n].reshape(s))
            off += n
        rng = np.random.default_rng(seed)
        for w in self._views[0::2]:
            w[...] = rng.normal(0.0, np.sqrt(2.0 / w.shape[0]), size=w.shape)
        self._views[4] *= 0.1
        self.target = self.theta.copy()
        self._m = np.zeros_like(self.theta)
        self._v = np.zeros_like(self.theta)
        self.updates = 0

    def _unpack(self, flat: np.ndarray) -> list[np.ndarray]:
        out, off = [], 0
        for v in self._views:
            out.append(flat[off : off + v.size].reshape(v.shape))
            off += v.size
        return out

    def _forward(self, params: list[np.ndarray], x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        w1, b1, w2, b2, w3, b3 = params
        h1 = np.maximum(x @ w1 + b1, 0.0)
        h2 = np.maximum(h1 @ w2 + b2, 0.0)
        return h1, h2, h2 @ w3 + b3

    def q_values(self, obs: np.ndarray) -> np.ndarray:
        """Online Q-values, ``(B, obs_dim) -> (B, n_actions)``."""
        return self._forward(self._views, np.asarray(obs, dtype=np.float64))[2]

    def act(self, obs: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
        """Epsilon-greedy actions for a batch of observations, shape ``(B,)``."""
        greedy = self.q_values(obs).argmax(axis=1)
        explore = rng.random(greedy.shape[0]) < epsilon
        return np.where(explore, rng.integers(0, self.n_actions, greedy.shape[0]), greedy)

    def update(
        self,
        obs: np.ndarray,
        action: np.ndarray,
        reward: np.ndarray,
        next_obs: np.ndarray,
        done: np.ndarray,
        weights: np.ndarray | None = None,
    ) -> np.ndarray:
        """One gradient step on the Huber TD loss ``mean_i w_i huber(Q(s,a) - y)``; returns ``Q - y``."""
        cfg = self.config
        x = np.asarray(obs, dtype=np.float64)
        b = x.shape[0]
        q_next = self._forward(self._unpack(self.target), np.asarray(next_obs, dtype=np.float64))[2]
        y = reward + cfg.gamma * (1.0 - done) * q_next.max(axis=1)
        w2, w3 = self._views[2], self._views[4]
        h1, h2, q = self._forward(self._views, x)
        rows = np.arange(b)
        td = q[rows, action] - y
        dq = np.zeros_like(q)
        g = np.clip(td, -cfg.huber_delta, cfg.huber_delta) / b
        if weights is not None:
            g = g * weights
        dq[rows, action] = g
        gw1, gb1, gw2, gb2, gw3, gb3 = self._gviews
        np.matmul(h2.T, dq, out=gw3)
        gb3[...] = dq.sum(axis=0)
        dh2 = (dq @ w3.T) * (h2 > 0)
        np.matmul(h1.T, dh2, out=gw2)
        gb2[...] = dh2.sum(axis=0)
        dh1 = (dh2 @ w2.T) * (h1 > 0)
        np.matmul(x.T, dh1, out=gw1)
        gb1[...] = dh1.sum(axis=0)
        self._adam()
        self.updates += 1
        if self.updates % cfg.target_every == 0:
            self.target[...] = self.theta
        return td

    def _adam(self) -> None:
        cfg = self.config
        b1, b2 = cfg.adam_betas
        t = self.updates + 1
        self._m *= b1
        self._m += (1 - b1) * self.grad
        self._v *= b2
        self._v += (1 - b2) * self.grad * self.grad
        step = cfg.lr * np.sqrt(1 - b2**t) / (1 - b1**t)
        self.theta -= step * self._m / (np.sqrt(self._v) + cfg.adam_eps)
