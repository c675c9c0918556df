"""A tabular multi-objective MDP as a gymnasium ``Env`` with vector rewards (mo-gymnasium convention).

``TabularMOEnv(mdp)``: ``observation_space = Discrete(S)``, ``action_space = Discrete(A)``,
``reward_space = Box(R.min, R.max, (M,))``; ``step`` returns the reward vector ``R[s, a]`` as a float32
array. Episodes end by *termination* with probability ``1 - gamma`` after each step when
``geometric=True`` (then the undiscounted episode return is an unbiased estimate of ``J``), and are cut
(*truncated*) after ``max_episode_steps``. Imports gymnasium (extra ``gym``).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from paperworks.core.validate import positive_int

from .mdp import TabularMOMDP

__all__ = ["TabularMOEnv"]


class TabularMOEnv(gym.Env):
    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 (gymnasium's class attribute)

    def __init__(self, mdp: TabularMOMDP, *, max_episode_steps: int = 100, geometric: bool = False) -> None:
        if not isinstance(mdp, TabularMOMDP):
            raise TypeError(f"mdp: expected a TabularMOMDP, got {type(mdp).__name__}")
        self.mdp = mdp
        self.max_episode_steps = positive_int(max_episode_steps, "max_episode_steps")
        self.geometric = bool(geometric)
        self.observation_space = gym.spaces.Discrete(mdp.n_states)
        self.action_space = gym.spaces.Discrete(mdp.n_actions)
        lo, hi = float(mdp.R.min()), float(mdp.R.max())
        self.reward_space = gym.spaces.Box(lo, hi, shape=(mdp.n_objectives,), dtype=np.float32)
        self.reward_dim = mdp.n_objectives
        self._s = 0
        self._t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._s = int(self.np_random.choice(self.mdp.n_states, p=self.mdp.rho))
        self._t = 0
        return self._s, {}

    def step(self, action: Any):
        a = int(action)
        if not self.action_space.contains(a):
            raise ValueError(f"action: expected an int in [0, {self.mdp.n_actions}), got {action!r}")
        r = self.mdp.R[self._s, a].astype(np.float32)
        self._s = int(self.np_random.choice(self.mdp.n_states, p=self.mdp.P[self._s, a]))
        self._t += 1
        terminated = bool(self.geometric and self.np_random.random() >= self.mdp.gamma)
        truncated = self._t >= self.max_episode_steps
        return self._s, r, terminated, truncated, {}
