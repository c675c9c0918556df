"""gymnasium integration: the real classic-control tasks and a multi-task wrapper (extra ``gym``).

- :func:`make_gym_task` builds gymnasium's own ``CartPoleEnv`` / ``PendulumEnv`` /
  ``Continuous_MountainCarEnv`` with a :class:`~paperworks.toppo.tasks.TaskSpec`'s physical
  parameters, wrapped to the family's shared interface (action ``Box(-1, 1, (1,))``, observation padded
  to :data:`~paperworks.toppo.tasks.OBS_DIM`, reward times ``reward_scale``, a time limit).
- :class:`MultiTaskEnv` is one gymnasium ``Env`` over several such tasks: each ``reset`` picks a task
  (round robin, or ``options={"task_id": k}``), the observation is ``[task observation, task one-hot]``
  and ``info["task_id"]`` names the task. All tasks must share observation and action spaces
  (``pad=True`` zero-pads 1-d Box observations of different lengths first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from paperworks.core.validate import int_in_range

from .tasks import OBS_DIM, TaskSpec

__all__ = ["FamilyInterface", "MultiTaskEnv", "make_gym_task"]


class FamilyInterface(gym.Wrapper):
    """Map one classic-control env onto the family's action/observation/reward interface."""

    def __init__(self, env: gym.Env, spec: TaskSpec):
        super().__init__(env)
        self.spec_ = spec
        self.action_space = spaces.Box(-1.0, 1.0, (1,), dtype=np.float32)
        high = np.full(OBS_DIM, np.inf, dtype=np.float32)
        self.observation_space = spaces.Box(-high, high, dtype=np.float32)

    def _pad(self, obs: np.ndarray) -> np.ndarray:
        out = np.zeros(OBS_DIM, dtype=np.float32)
        out[: obs.shape[0]] = obs
        return out

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        return self._pad(obs), info

    def step(self, action):
        a = float(np.clip(np.asarray(action, dtype=np.float32).reshape(-1)[0], -1.0, 1.0))
        kind = self.spec_.kind
        if kind == "cartpole":
            native: Any = int(a > 0)
        elif kind == "pendulum":
            native = np.array([self.spec_.param("max_torque") * a], dtype=np.float32)
        else:
            native = np.array([a], dtype=np.float32)
        obs, r, term, trunc, info = self.env.step(native)
        return self._pad(obs), float(r) * self.spec_.reward_scale, term, trunc, info


def make_gym_task(spec: TaskSpec) -> gym.Env:
    """The real gymnasium environment of ``spec`` (parameters set on the unwrapped env), wrapped."""
    from gymnasium.envs.classic_control import (
        CartPoleEnv,
        Continuous_MountainCarEnv,
        PendulumEnv,
    )

    if not isinstance(spec, TaskSpec):
        raise TypeError(f"spec: expected a TaskSpec, got {type(spec).__name__}")
    if spec.kind == "cartpole":
        env: gym.Env = CartPoleEnv()
        for k in ("gravity", "masscart", "masspole", "length", "force_mag"):
            setattr(env, k, spec.param(k))
        env.total_mass = env.masspole + env.masscart
        env.polemass_length = env.masspole * env.length
    elif spec.kind == "pendulum":
        env = PendulumEnv(g=spec.param("g"))
        env.m, env.l = spec.param("m"), spec.param("l")
        env.max_torque = spec.param("max_torque")
        env.action_space = spaces.Box(-env.max_torque, env.max_torque, (1,), dtype=np.float32)
    else:
        env = Continuous_MountainCarEnv()
        env.power = spec.param("power")
    env = gym.wrappers.TimeLimit(env, max_episode_steps=spec.max_steps)
    return FamilyInterface(env, spec)


class MultiTaskEnv(gym.Env):
    """One gymnasium ``Env`` over ``envs`` (one per task); observation ``[obs, one-hot(task)]``.

    ``reset(options={"task_id": k})`` selects task ``k`` (out of range: ``ValueError``); otherwise tasks
    are visited round robin (restarted by a ``seed``). ``info["task_id"]`` is returned by ``reset``
    and ``step``.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(self, envs: Sequence[gym.Env], *, pad: bool = False):
        if len(envs) == 0:
            raise ValueError("envs: expected at least one environment")
        obs_spaces = [e.observation_space for e in envs]
        act_spaces = [e.action_space for e in envs]
        if pad:
            for s in obs_spaces:
                if not isinstance(s, spaces.Box) or len(s.shape) != 1:
                    raise ValueError(f"envs: pad=True needs 1-d Box observation spaces, got {s}")
            self._dim = max(s.shape[0] for s in obs_spaces)
        else:
            first = obs_spaces[0]
            for k, s in enumerate(obs_spaces):
                if s != first:
                    raise ValueError(
                        f"envs: observation spaces differ across tasks (task 0: {first}, task {k}: {s}); "
                        "use pad=True for 1-d Box spaces of different lengths"
                    )
            if not isinstance(first, spaces.Box) or len(first.shape) != 1:
                raise ValueError(f"envs: expected 1-d Box observation spaces, got {first}")
            self._dim = first.shape[0]
        for k, s in enumerate(act_spaces):
            if s != act_spaces[0]:
                raise ValueError(
                    f"envs: action spaces differ across tasks (task 0: {act_spaces[0]}, task {k}: {s})"
                )
        self.envs = list(envs)
        self.n_tasks = len(envs)
        self.action_space = act_spaces[0]
        high = np.full(self._dim + self.n_tasks, np.inf, dtype=np.float32)
        self.observation_space = spaces.Box(-high, high, dtype=np.float32)
        self.task_id = 0
        self._next = 0

    def _wrap(self, obs: np.ndarray) -> np.ndarray:
        out = np.zeros(self._dim + self.n_tasks, dtype=np.float32)
        obs = np.asarray(obs, dtype=np.float32).reshape(-1)
        out[: obs.shape[0]] = obs
        out[self._dim + self.task_id] = 1.0
        return out

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:  # re-seeding restarts the round robin: same seed, same episode
            self._next = 0
        if options and "task_id" in options:
            self.task_id = int_in_range(options["task_id"], "task_id", 0, self.n_tasks - 1)
        else:
            self.task_id = self._next
            self._next = (self._next + 1) % self.n_tasks
        sub_seed = None if seed is None else int(self.np_random.integers(2**31))
        obs, info = self.envs[self.task_id].reset(seed=sub_seed)
        return self._wrap(obs), {**info, "task_id": self.task_id}

    def step(self, action):
        obs, r, term, trunc, info = self.envs[self.task_id].step(action)
        return self._wrap(obs), float(r), bool(term), bool(trunc), {**info, "task_id": self.task_id}

    def close(self) -> None:
        for e in self.envs:
            e.close()
