"""A tabular CMDP as a gymnasium environment with ``info["cost"]`` (the Safety-Gymnasium convention)."""

from __future__ import annotations

from typing import ClassVar

from paperworks.core.validate import positive_int

from .cmdp import TabularCMDP

__all__ = ["CMDPEnv"]

try:
    import gymnasium as gym
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError("paperworks.pdocrl.env needs gymnasium: pip install 'paperworks-pdocrl[gym]'") from e


class CMDPEnv(gym.Env):
    """Discrete observations (the state index) and actions; ``step`` returns the reward and puts the
    (K,) cost vector in ``info["cost"]`` (a float when K = 1). Episodes are truncated after
    ``max_steps`` (the discounted objective has no terminal states)."""

    metadata: ClassVar[dict] = {"render_modes": []}

    def __init__(self, cmdp: TabularCMDP, max_steps: int = 100) -> None:
        self.cmdp = cmdp
        self.max_steps = positive_int(max_steps, "max_steps")
        self.observation_space = gym.spaces.Discrete(cmdp.n_states)
        self.action_space = gym.spaces.Discrete(cmdp.n_actions)
        self._state = 0
        self._t = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._state = int(self.np_random.choice(self.cmdp.n_states, p=self.cmdp.initial))
        self._t = 0
        return self._state, {}

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"action: expected an int in [0, {self.cmdp.n_actions}), got {action!r}")
        s, a = self._state, int(action)
        reward = float(self.cmdp.reward[s, a])
        cost = self.cmdp.costs[:, s, a]
        self._state = int(self.np_random.choice(self.cmdp.n_states, p=self.cmdp.transitions[s, a]))
        self._t += 1
        info = {"cost": float(cost[0]) if cost.size == 1 else cost.copy()}
        return self._state, reward, False, self._t >= self.max_steps, info
