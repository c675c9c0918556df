"""A gymnasium environment for the focal roaster (roaster_A) among scripted firms.

Each ``step`` plays one turn of the focal firm: a macro action (:mod:`paperworks.coffeebench.macros`,
``Discrete(N_ACTIONS)``) decoded into one tool call; the other five firms are played by their
agents (reference farmers and retailers, heuristic roaster_B by default) until the focal firm's
next turn. Observation: ``Box(OBS_SIZE)`` float32; reward: the change of the focal firm's net
income; ``terminated`` on its bankruptcy, ``truncated`` after the last day; ``info`` carries the
``action_mask``, the day and the net income.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .agents import Agent, reference_agents
from .config import EconomyConfig
from .macros import N_ACTIONS, OBS_SIZE, action_mask, decode, encode_observation
from .runner import Episode

__all__ = ["CoffeeBenchRoasterEnv"]


class CoffeeBenchRoasterEnv(gym.Env):
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"]}

    def __init__(
        self,
        config: EconomyConfig | None = None,
        *,
        days: int | None = None,
        focal: str = "roaster_A",
        others: Callable[[], Mapping[str, Agent]] | None = None,
        render_mode: str | None = None,
    ) -> None:
        cfg = config if config is not None else EconomyConfig()
        if not isinstance(cfg, EconomyConfig):
            raise TypeError(f"config: expected an EconomyConfig or None, got {type(cfg).__name__}")
        if days is not None:
            cfg = cfg.replace(days=days)
        if focal not in reference_agents():
            raise ValueError(f"focal: expected a firm id, got {focal!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode: expected None or 'ansi', got {render_mode!r}")
        self.config, self.focal, self.render_mode = cfg, focal, render_mode
        self._others = others if others is not None else reference_agents
        self.observation_space = spaces.Box(-100.0, 100.0, (OBS_SIZE,), np.float32)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.episode: Episode | None = None

    def _advance(self) -> None:
        ep = self.episode
        while (fid := ep.next_actor()) is not None and fid != self.focal:
            ep.apply(fid, self._agents[fid].act(ep.observation(fid)))

    def _info(self) -> dict[str, Any]:
        e = self.episode.economy
        return {
            "action_mask": action_mask(e, self.focal),
            "day": e.day,
            "net_income": e.firms[self.focal].net_income,
        }

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        s = int(self.np_random.integers(0, 2**31 - 1))
        agents = dict(self._others())
        agents.pop(self.focal, None)
        self._agents = agents
        self.episode = Episode(self.config, s, agents)
        self._advance()
        self._ni = 0.0
        return encode_observation(self.episode.economy, self.focal), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self.episode is None:
            raise RuntimeError("step: call reset first")
        if not self.action_space.contains(action):
            raise ValueError(f"action: expected an integer in [0, {N_ACTIONS}), got {action!r}")
        ep = self.episode
        e = ep.economy
        if ep.next_actor() == self.focal:
            ep.apply(self.focal, decode(e, self.focal, int(action)))
        self._advance()
        ni = e.firms[self.focal].net_income
        reward, self._ni = float(ni - self._ni), ni
        terminated = bool(e.firms[self.focal].bankrupt)
        truncated = ep.next_actor() is None and not terminated
        return encode_observation(e, self.focal), reward, terminated, truncated, self._info()

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.episode is None:
            return None
        e = self.episode.economy
        return f"day {e.day}: {self.focal} NI {e.firms[self.focal].net_income:.2f}"
