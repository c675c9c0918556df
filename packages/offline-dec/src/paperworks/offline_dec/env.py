"""A :class:`~paperworks.offline_dec.mdp.TabularMDP` as a gymnasium environment (``Discrete`` spaces).

Episodes follow the discounted formulation: after each step the episode is truncated with probability
``1 - gamma`` (so returns are unbiased for ``J``), never terminated. Needs the ``gym`` extra.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from .mdp import TabularMDP

__all__ = ["TabularMDPEnv"]


class TabularMDPEnv(gym.Env):
    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(self, mdp: TabularMDP, discount_truncation: bool = True) -> None:
        if not isinstance(mdp, TabularMDP):
            raise TypeError(f"mdp: expected a TabularMDP, got {type(mdp).__name__}")
        self.mdp = mdp
        self.discount_truncation = bool(discount_truncation)
        self.observation_space = gym.spaces.Discrete(mdp.n_states)
        self.action_space = gym.spaces.Discrete(mdp.n_actions)
        self._state = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._state = int(self.np_random.choice(self.mdp.n_states, p=self.mdp.initial))
        return self._state, {}

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"action: expected an int in [0, {self.mdp.n_actions}), got {action!r}")
        s, a = self._state, int(action)
        reward = float(self.mdp.sample_rewards(np.array([s]), np.array([a]), self.np_random)[0])
        self._state = int(self.np_random.choice(self.mdp.n_states, p=self.mdp.transitions[s, a]))
        truncated = bool(self.discount_truncation and self.np_random.random() > self.mdp.gamma)
        return self._state, reward, False, truncated, {"mean_reward": float(self.mdp.rewards[s, a])}
