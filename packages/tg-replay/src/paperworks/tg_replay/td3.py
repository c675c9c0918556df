"""TD3 (Fujimoto et al., 2018) in NumPy: the continuous-action learner of the reproduction.

Twin critics ``Q_1, Q_2(s, a)`` (MLPs on the concatenated state and action) regress on
``y = r + gamma (1 - done) min_j Q_j'(s', clip(mu'(s') + clip(eps, -c, c), -a_max, a_max))``,
``eps ~ N(0, sigma_target^2)`` (target policy smoothing); every ``policy_delay`` critic updates the
deterministic actor ``mu(s) = a_max tanh(f(s))`` ascends ``Q_1(s, mu(s))`` and all targets move by
Polyak averaging with rate ``tau``. Defaults follow the paper (and Stable-Baselines3's TD3):
``policy_delay = 2``, ``sigma_target = 0.2``, ``c = 0.5``, ``tau = 0.005``, Adam with ``lr = 1e-3``.
:class:`TD3Population` trains ``M`` agents side by side; the ``2M`` critics share one
:class:`~paperworks.tg_replay.nets.MLPStack`. All agents start from the same initial weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import (
    as_generator,
    finite_array,
    fraction,
    nonnegative_float,
    positive_float,
    positive_int,
)

from .nets import Adam, MLPStack

__all__ = ["TD3Config", "TD3Population"]


@dataclass(frozen=True)
class TD3Config:
    """Hyper-parameters of :class:`TD3Population` (Fujimoto et al., 2018, with a smaller network)."""

    hidden: int = 64
    lr: float = 1e-3
    gamma: float = 0.98
    tau: float = 0.005
    policy_delay: int = 2
    target_noise: float = 0.2
    noise_clip: float = 0.5
    adam_betas: tuple[float, float] = (0.9, 0.999)
    adam_eps: float = 1e-8

    def __post_init__(self) -> None:
        positive_int(self.hidden, "hidden")
        positive_float(self.lr, "lr")
        fraction(self.gamma, "gamma")
        fraction(self.tau, "tau", open_low=True)
        positive_int(self.policy_delay, "policy_delay")
        nonnegative_float(self.target_noise, "target_noise")
        nonnegative_float(self.noise_clip, "noise_clip")
        if len(self.adam_betas) != 2:
            raise ValueError(f"adam_betas: expected two numbers, got {self.adam_betas!r}")
        fraction(self.adam_betas[0], "adam_betas[0]", open_high=True)
        fraction(self.adam_betas[1], "adam_betas[1]", open_high=True)
        positive_float(self.adam_eps, "adam_eps")


class TD3Population:
    """``n_agents`` independent TD3 agents updated together.

    Shapes: observations ``(M, B, obs_dim)``, actions ``(M, B, act_dim)`` in ``[-max_action,
    max_action]``, rewards / dones / weights ``(M, B)``. ``act(obs, noise, rng)`` adds Gaussian
    exploration noise of standard deviation ``noise * max_action``, one draw per column shared by
    all agents; ``update`` returns the first critic's TD errors ``(M, B)``.
    """

    def __init__(
        self,
        n_agents: int,
        obs_dim: int,
        act_dim: int,
        max_action: float = 1.0,
        config: TD3Config | None = None,
        *,
        seed: int = 0,
        dtype: type = np.float32,
    ) -> None:
        self.n_agents = m = positive_int(n_agents, "n_agents")
        self.obs_dim = positive_int(obs_dim, "obs_dim")
        self.act_dim = positive_int(act_dim, "act_dim")
        self.max_action = positive_float(max_action, "max_action")
        if config is not None and not isinstance(config, TD3Config):
            raise TypeError(f"config: expected a TD3Config, got {type(config).__name__}")
        self.config = cfg = config or TD3Config()
        gen = as_generator(seed, "seed")
        h = cfg.hidden
        self.actor = MLPStack(
            m, (self.obs_dim, h, h, self.act_dim), seed=gen, out_activation="tanh", dtype=dtype
        )
        # critics 1 and 2 of agent k are models k and m + k; each family starts from one draw
        self.critic = MLPStack(
            2 * m, (self.obs_dim + self.act_dim, h, h, 1), seed=gen, tied_init=False, dtype=dtype
        )
        for p in self.critic.params:
            p[:m] = p[0]
            p[m:] = p[m]
        self.actor_target = self.actor.theta.copy()
        self.critic_target = self.critic.theta.copy()
        self.actor_opt = Adam(self.actor.size, cfg.lr, cfg.adam_betas, cfg.adam_eps, dtype=dtype)
        self.critic_opt = Adam(self.critic.size, cfg.lr, cfg.adam_betas, cfg.adam_eps, dtype=dtype)
        self.rng = np.random.default_rng(gen.integers(2**63))
        self.updates = 0

    def _obs(self, obs: object, name: str) -> np.ndarray:
        return finite_array(obs, name, shape=(self.n_agents, None, self.obs_dim))

    def policy(self, obs: object) -> np.ndarray:
        """Deterministic actions ``(M, B, act_dim)`` of observations ``(M, B, obs_dim)``."""
        return self._policy(self._obs(obs, "obs"))

    def _policy(self, x: np.ndarray) -> np.ndarray:
        return self.actor.forward(x)[0] * self.max_action

    def q_values(self, obs: object, action: object) -> tuple[np.ndarray, np.ndarray]:
        """Both critics' values ``(M, B)`` at observations ``(M, B, obs_dim)`` and actions ``(M, B, a)``."""
        x = self._obs(obs, "obs")
        a = finite_array(action, "action", shape=(self.n_agents, x.shape[1], self.act_dim))
        q = self.critic.forward(np.concatenate([np.concatenate([x, a], axis=2)] * 2))[0][..., 0]
        return q[: self.n_agents], q[self.n_agents :]

    def act(self, obs: object, noise: float, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Exploratory actions ``(M, B, act_dim)``: the policy plus ``N(0, (noise a_max)^2)``, clipped."""
        x = self._obs(obs, "obs")
        return self._act(x, nonnegative_float(noise, "noise"), as_generator(rng))

    def _act(self, x: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
        a = self._policy(x)
        if noise > 0:
            a = a + rng.normal(0.0, noise * self.max_action, (x.shape[1], self.act_dim)).astype(a.dtype)
        return np.clip(a, -self.max_action, self.max_action)

    def update(
        self,
        obs: object,
        action: object,
        reward: object,
        next_obs: object,
        done: object,
        weights: object | None = None,
    ) -> np.ndarray:
        """One critic step per agent (actor and targets every ``policy_delay``); TD errors ``(M, B)``."""
        x = self._obs(obs, "obs")
        b = x.shape[1]
        xn = finite_array(next_obs, "next_obs", shape=(self.n_agents, b, self.obs_dim))
        a = finite_array(action, "action", shape=(self.n_agents, b, self.act_dim))
        if np.abs(a).max() > self.max_action:
            raise ValueError(f"action: expected values in [-{self.max_action:g}, {self.max_action:g}]")
        r = finite_array(reward, "reward", shape=(self.n_agents, b))
        d = finite_array(done, "done", shape=(self.n_agents, b), dtype_kind=None)
        if not np.isin(d, (0, 1)).all():
            raise ValueError("done: expected 0/1 (or bool) flags")
        w = None
        if weights is not None:
            w = finite_array(weights, "weights", shape=(self.n_agents, b))
            if w.min() < 0:
                raise ValueError(f"weights: expected non-negative importance weights, got min {w.min():.4g}")
        return self._update(x, a, r, xn, d.astype(self.critic.dtype), w)

    def _update(
        self,
        x: np.ndarray,
        a: np.ndarray,
        r: np.ndarray,
        xn: np.ndarray,
        d: np.ndarray,
        w: np.ndarray | None,
    ) -> np.ndarray:
        cfg, m, b = self.config, self.n_agents, x.shape[1]
        dt = self.critic.dtype
        # target: smoothed target policy, clipped double Q
        an = self.actor.forward(xn, self.actor_target)[0] * self.max_action
        if cfg.target_noise > 0:
            # one draw per batch column, shared by all agents (common random numbers)
            eps = self.rng.normal(0.0, cfg.target_noise * self.max_action, an.shape[1:]).astype(dt)
            lim = cfg.noise_clip * self.max_action
            an = np.clip(an + np.clip(eps, -lim, lim), -self.max_action, self.max_action)
        xan = np.concatenate([xn, an], axis=2)
        qn = self.critic.forward(np.concatenate([xan, xan]), self.critic_target)[0][..., 0]
        y = r + cfg.gamma * (1.0 - d) * np.minimum(qn[:m], qn[m:])
        # critics: mean squared TD error of each critic
        xa = np.concatenate([x, a.astype(dt)], axis=2)
        q, cache = self.critic.forward(np.concatenate([xa, xa]), cache=True)
        td = q[..., 0] - np.concatenate([y, y])
        g = td * (2.0 / b)
        if w is not None:
            g = g * np.concatenate([w, w])
        self.critic.backward(cache, g[..., None].astype(dt))
        self.critic_opt.step(self.critic.theta, self.critic.grad)
        self.updates += 1
        if self.updates % cfg.policy_delay == 0:
            self._actor_step(x)
        return td[:m]

    def _actor_step(self, x: np.ndarray) -> None:
        cfg, m, b = self.config, self.n_agents, x.shape[1]
        mu, acache = self.actor.forward(x, cache=True)
        xa = np.concatenate([x, mu * self.max_action], axis=2)
        # only critic 1 drives the actor; the second half of the stack gets a zero output gradient
        _, ccache = self.critic.forward(np.concatenate([xa, xa]), cache=True)
        dq = np.zeros((2 * m, b, 1), dtype=self.critic.dtype)
        dq[:m] = -1.0 / b  # d(-mean Q1)/dQ1
        dx = self.critic.backward(ccache, dq, input_grad=True, param_grad=False)
        da = dx[:m, :, self.obs_dim :] * self.max_action
        self.actor.backward(acache, da)
        self.actor_opt.step(self.actor.theta, self.actor.grad)
        for online, target in (
            (self.actor.theta, self.actor_target),
            (self.critic.theta, self.critic_target),
        ):
            target += cfg.tau * (online - target)
