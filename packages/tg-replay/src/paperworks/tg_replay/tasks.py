"""Classic-control tasks stepped for many copies at once: CartPole-v1, Acrobot-v1 and Pendulum-v1.

The reproduction trains several agents side by side, each on its own copies of a task. gymnasium
vectorises only CartPole natively; Acrobot and Pendulum would step one Python object per copy. So
this module steps ``N`` copies of each task as NumPy arrays, with gymnasium's dynamics, rewards,
terminations and time limits (``CartPole-v1``: Euler steps of the cart-pole equations, reward 1 per
step, 500 steps; ``Acrobot-v1``: one RK4 step of the book dynamics over ``dt = 0.2``, reward -1 per
step until the tip rises above the bar, 500 steps; ``Pendulum-v1``: the semi-implicit pendulum with
``g = 10``, reward ``-(angle^2 + 0.1 thdot^2 + 0.001 u^2)``, 200 steps). The tests step gymnasium's
own environments from the same states and compare.

Resets: copy ``i`` draws its initial states from its own generator ``default_rng([seed, stream_i])``
(gymnasium's uniform ranges), so two agents given the same streams start every ``k``-th episode
from the same state (common random numbers for paired comparisons). :meth:`VectorTask.step`
resets finished copies in the same call and returns both the transition's true next observation
and the observation to act on next.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from gymnasium import spaces

from paperworks.core.validate import finite_array, nonnegative_int, one_of, positive_int

__all__ = ["TASKS", "AcrobotTask", "CartPoleTask", "PendulumTask", "VectorTask", "make_task"]


class VectorTask(abc.ABC):
    """``num_envs`` copies of one task stepped together (subclasses give the dynamics).

    Attributes: ``env_id``, ``single_observation_space``, ``single_action_space`` (gymnasium
    spaces), ``max_steps`` (the time limit), ``return_range`` (``(worst, best)`` episode returns
    used to normalise scores to about [0, 1]).
    """

    env_id: ClassVar[str]
    max_steps: ClassVar[int]
    return_range: ClassVar[tuple[float, float]]
    state_dim: ClassVar[int]
    single_observation_space: spaces.Box
    single_action_space: spaces.Space

    def __init__(self, num_envs: int, seed: int = 0, *, streams: Sequence[int] | None = None) -> None:
        self.num_envs = positive_int(num_envs, "num_envs")
        self.seed = nonnegative_int(seed, "seed")
        if streams is None:
            streams = range(self.num_envs)
        s = finite_array(list(streams), "streams", shape=(self.num_envs,), dtype_kind="i")
        if s.min() < 0:
            raise ValueError(f"streams: expected non-negative ints, got min {int(s.min())}")
        self.streams = s.astype(np.int64)
        self._rngs = [np.random.default_rng([self.seed, int(k)]) for k in self.streams]
        self.state = np.zeros((self.num_envs, self.state_dim))
        self.t = np.zeros(self.num_envs, dtype=np.int64)
        self._started = False

    @property
    def obs_dim(self) -> int:
        return int(self.single_observation_space.shape[0])

    @property
    def discrete(self) -> bool:
        return isinstance(self.single_action_space, spaces.Discrete)

    def normalise(self, returns: np.ndarray) -> np.ndarray:
        """Episode returns mapped by ``(R - worst) / (best - worst)`` (0 = worst, 1 = best)."""
        lo, hi = self.return_range
        return (np.asarray(returns, dtype=float) - lo) / (hi - lo)

    # -- subclass hooks
    @abc.abstractmethod
    def _initial(self, rng: np.random.Generator) -> np.ndarray:
        """One copy's initial state, drawn from its generator."""

    @abc.abstractmethod
    def _obs(self, state: np.ndarray) -> np.ndarray:
        """Observations ``(n, obs_dim)`` float32 of states ``(n, state_dim)``."""

    @abc.abstractmethod
    def _advance(self, state: np.ndarray, action: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(next_state, reward, terminated)`` for every copy."""

    def _check_action(self, action: object) -> np.ndarray:
        space = self.single_action_space
        if isinstance(space, spaces.Discrete):
            a = finite_array(action, "action", shape=(self.num_envs,), dtype_kind="i")
            if a.min() < 0 or a.max() >= space.n:
                raise ValueError(
                    f"action: expected ints in [0, {space.n}), got [{int(a.min())}, {int(a.max())}]"
                )
            return a
        a = finite_array(action, "action", shape=(self.num_envs, *space.shape))
        return a

    # -- the gymnasium-like interface
    def reset(self) -> np.ndarray:
        """Reset every copy from its stream; returns observations ``(num_envs, obs_dim)`` float32."""
        for i, rng in enumerate(self._rngs):
            self.state[i] = self._initial(rng)
        self.t[:] = 0
        self._started = True
        return self._obs(self.state)

    def step(self, action: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Step every copy; finished copies are reset at once.

        Returns ``(next_obs, reward, terminated, truncated, obs)``: ``next_obs`` is the transition's
        true next observation (the final one when an episode ended), ``obs`` the observation to act
        on next (a fresh episode's first one where an episode ended); shapes ``(num_envs, obs_dim)``
        and ``(num_envs,)``.
        """
        if not self._started:
            raise RuntimeError(f"{self.env_id}: call reset() before step()")
        return self._step(self._check_action(action))

    def _step(self, a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`step` without the argument checks (the trainers' hot loop)."""
        state, reward, terminated = self._advance(self.state, a)
        self.state = state
        self.t += 1
        truncated = (self.t >= self.max_steps) & ~terminated
        next_obs = self._obs(state)
        done = terminated | truncated
        obs = next_obs
        if done.any():
            obs = next_obs.copy()
            for i in np.flatnonzero(done):
                self.state[i] = self._initial(self._rngs[i])
                self.t[i] = 0
            obs[done] = self._obs(self.state[done])
        return next_obs, reward.astype(np.float32), terminated, truncated, obs


class CartPoleTask(VectorTask):
    """gymnasium ``CartPole-v1``: push a cart left (0) or right (1) to keep the pole up; 500 steps."""

    env_id = "CartPole-v1"
    max_steps = 500
    return_range = (0.0, 500.0)
    state_dim = 4
    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    theta_threshold = 12 * 2 * math.pi / 360
    x_threshold = 2.4
    _high = np.array(
        [2 * 2.4, np.finfo(np.float32).max, 2 * theta_threshold, np.finfo(np.float32).max], dtype=np.float32
    )
    single_observation_space = spaces.Box(-_high, _high, dtype=np.float32)
    single_action_space = spaces.Discrete(2)

    def _initial(self, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(-0.05, 0.05, size=(4,))

    def _obs(self, state: np.ndarray) -> np.ndarray:
        return state.astype(np.float32)

    def _advance(self, state: np.ndarray, action: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x, x_dot, theta, theta_dot = state.T
        total_mass = self.masspole + self.masscart
        pml = self.masspole * self.length
        force = np.where(action == 1, self.force_mag, -self.force_mag)
        cos, sin = np.cos(theta), np.sin(theta)
        temp = (force + pml * np.square(theta_dot) * sin) / total_mass
        theta_acc = (self.gravity * sin - cos * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * np.square(cos) / total_mass)
        )
        x_acc = temp - pml * theta_acc * cos / total_mass
        new = np.stack(
            [
                x + self.tau * x_dot,
                x_dot + self.tau * x_acc,
                theta + self.tau * theta_dot,
                theta_dot + self.tau * theta_acc,
            ],
            axis=1,
        )
        terminated = (
            (new[:, 0] < -self.x_threshold)
            | (new[:, 0] > self.x_threshold)
            | (new[:, 2] < -self.theta_threshold)
            | (new[:, 2] > self.theta_threshold)
        )
        return new, np.ones(len(state)), terminated


class AcrobotTask(VectorTask):
    """gymnasium ``Acrobot-v1``: torque -1/0/+1 on the middle joint to swing the tip up; 500 steps."""

    env_id = "Acrobot-v1"
    max_steps = 500
    return_range = (-500.0, 0.0)
    state_dim = 4
    dt = 0.2
    m1 = m2 = l1 = 1.0
    lc1 = lc2 = 0.5
    moi = 1.0
    max_vel_1, max_vel_2 = 4 * math.pi, 9 * math.pi
    torques = np.array([-1.0, 0.0, 1.0])
    _high = np.array([1.0, 1.0, 1.0, 1.0, 4 * math.pi, 9 * math.pi], dtype=np.float32)
    single_observation_space = spaces.Box(-_high, _high, dtype=np.float32)
    single_action_space = spaces.Discrete(3)

    def _initial(self, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(-0.1, 0.1, size=(4,)).astype(np.float32).astype(np.float64)

    def _obs(self, state: np.ndarray) -> np.ndarray:
        t1, t2, d1, d2 = state.T
        return np.stack([np.cos(t1), np.sin(t1), np.cos(t2), np.sin(t2), d1, d2], axis=1).astype(np.float32)

    def _derivs(self, s: np.ndarray, torque: np.ndarray) -> np.ndarray:
        m1, m2, l1, lc1, lc2, i1, i2, g = (
            self.m1,
            self.m2,
            self.l1,
            self.lc1,
            self.lc2,
            self.moi,
            self.moi,
            9.8,
        )
        t1, t2, dt1, dt2 = s.T
        d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * np.cos(t2)) + i1 + i2
        d2 = m2 * (lc2**2 + l1 * lc2 * np.cos(t2)) + i2
        phi2 = m2 * lc2 * g * np.cos(t1 + t2 - math.pi / 2.0)
        phi1 = (
            -m2 * l1 * lc2 * dt2**2 * np.sin(t2)
            - 2 * m2 * l1 * lc2 * dt2 * dt1 * np.sin(t2)
            + (m1 * lc1 + m2 * l1) * g * np.cos(t1 - math.pi / 2)
            + phi2
        )
        dd2 = (torque + d2 / d1 * phi1 - m2 * l1 * lc2 * dt1**2 * np.sin(t2) - phi2) / (
            m2 * lc2**2 + i2 - d2**2 / d1
        )
        dd1 = -(d2 * dd2 + phi1) / d1
        return np.stack([dt1, dt2, dd1, dd2], axis=1)

    def _advance(self, state: np.ndarray, action: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        torque = self.torques[action]
        h, h2 = self.dt, self.dt / 2.0
        k1 = self._derivs(state, torque)
        k2 = self._derivs(state + h2 * k1, torque)
        k3 = self._derivs(state + h2 * k2, torque)
        k4 = self._derivs(state + h * k3, torque)
        new = state + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        for j in (0, 1):  # wrap the angles into [-pi, pi]
            col = new[:, j]
            while (col > math.pi).any() or (col < -math.pi).any():
                col[col > math.pi] -= 2 * math.pi
                col[col < -math.pi] += 2 * math.pi
        np.clip(new[:, 2], -self.max_vel_1, self.max_vel_1, out=new[:, 2])
        np.clip(new[:, 3], -self.max_vel_2, self.max_vel_2, out=new[:, 3])
        terminated = -np.cos(new[:, 0]) - np.cos(new[:, 1] + new[:, 0]) > 1.0
        reward = np.where(terminated, 0.0, -1.0)
        return new, reward, terminated


class PendulumTask(VectorTask):
    """gymnasium ``Pendulum-v1``: a continuous torque in [-2, 2] swings the pendulum up; 200 steps."""

    env_id = "Pendulum-v1"
    max_steps = 200
    return_range = (-1600.0, 0.0)
    state_dim = 2
    g, m, l, dt, max_speed, max_torque = 10.0, 1.0, 1.0, 0.05, 8.0, 2.0
    single_observation_space = spaces.Box(
        np.array([-1.0, -1.0, -8.0], np.float32), np.array([1.0, 1.0, 8.0], np.float32), dtype=np.float32
    )
    single_action_space = spaces.Box(-2.0, 2.0, (1,), dtype=np.float32)

    def _initial(self, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(low=[-math.pi, -1.0], high=[math.pi, 1.0])

    def _obs(self, state: np.ndarray) -> np.ndarray:
        th, thdot = state.T
        return np.stack([np.cos(th), np.sin(th), thdot], axis=1).astype(np.float32)

    def _advance(self, state: np.ndarray, action: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        th, thdot = state.T
        u = np.clip(action[:, 0].astype(np.float64), -self.max_torque, self.max_torque)
        angle = ((th + math.pi) % (2 * math.pi)) - math.pi
        costs = angle**2 + 0.1 * thdot**2 + 0.001 * (u**2)
        new_thdot = (
            thdot + (3 * self.g / (2 * self.l) * np.sin(th) + 3.0 / (self.m * self.l**2) * u) * self.dt
        )
        new_thdot = np.clip(new_thdot, -self.max_speed, self.max_speed)
        new_th = th + new_thdot * self.dt
        return np.stack([new_th, new_thdot], axis=1), -costs, np.zeros(len(state), dtype=bool)


TASKS: dict[str, type[VectorTask]] = {t.env_id: t for t in (CartPoleTask, AcrobotTask, PendulumTask)}


def make_task(
    env_id: str, num_envs: int, seed: int = 0, *, streams: Sequence[int] | None = None
) -> VectorTask:
    """``num_envs`` copies of ``env_id`` (one of :data:`TASKS`), each resetting from its own stream."""
    one_of(env_id, "env_id", TASKS)
    return TASKS[env_id](num_envs, seed, streams=streams)
