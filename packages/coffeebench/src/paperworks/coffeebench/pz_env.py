"""A PettingZoo AEC environment: one agent per firm, one tool call (macro action) per step.

``agent_selection`` follows the paper's turn schedule (:class:`paperworks.coffeebench.runner.Episode`):
firms take turns within a business day until each has ended its day, then the day's mechanics run.
Actions: ``Discrete(N_ACTIONS)`` macros (:mod:`paperworks.coffeebench.macros`), with an
``action_mask`` in ``infos``; observations: ``Box(OBS_SIZE)`` float32. Reward: the change of each
firm's truth-ledger net income since the previous step (so an episode's rewards sum to its net
income). A bankrupt firm is terminated; every firm is truncated after the last day.

    from paperworks.coffeebench.pz_env import CoffeeBenchAEC
    from pettingzoo.test import api_test
    api_test(CoffeeBenchAEC(days=3), num_cycles=200)
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from .config import FIRMS, EconomyConfig
from .macros import N_ACTIONS, OBS_SIZE, action_mask, decode, encode_observation
from .runner import Episode

__all__ = ["CoffeeBenchAEC", "env"]


class CoffeeBenchAEC(AECEnv):
    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi"],
        "name": "coffeebench_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self, config: EconomyConfig | None = None, *, days: int | None = None, render_mode: str | None = None
    ) -> None:
        super().__init__()
        cfg = config if config is not None else EconomyConfig()
        if not isinstance(cfg, EconomyConfig):
            raise TypeError(f"config: expected an EconomyConfig or None, got {type(cfg).__name__}")
        if days is not None:
            cfg = cfg.replace(days=days)
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode: expected None or 'ansi', got {render_mode!r}")
        self.config, self.render_mode = cfg, render_mode
        self.possible_agents = list(FIRMS)
        self._obs_space = {a: spaces.Box(-100.0, 100.0, (OBS_SIZE,), np.float32) for a in FIRMS}
        self._act_space = {a: spaces.Discrete(N_ACTIONS) for a in FIRMS}
        self._seed = 0

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_space[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._seed = int(seed)
        self.episode = Episode(self.config, self._seed)
        self.agents = list(FIRMS)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._ni = {a: 0.0 for a in self.agents}
        self.agent_selection = self.episode.next_actor()
        self.infos = {a: {} for a in self.agents}
        self._refresh_infos()

    def _refresh_infos(self) -> None:
        e = self.episode.economy
        for a in self.agents:
            self.infos[a] = {
                "action_mask": action_mask(e, a),
                "day": e.day,
                "net_income": e.firms[a].net_income,
            }

    def observe(self, agent: str) -> np.ndarray:
        return encode_observation(self.episode.economy, agent)

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError("action: a live agent needs an action (an integer macro index)")
        e = self.episode.economy
        self.episode.apply(agent, decode(e, agent, int(action)))
        nxt = self.episode.next_actor()
        self._cumulative_rewards[agent] = 0.0
        for a in self.agents:
            ni = e.firms[a].net_income
            self.rewards[a] = float(ni - self._ni[a])
            self._ni[a] = ni
            self.terminations[a] = bool(e.firms[a].bankrupt)
            self.truncations[a] = nxt is None and not e.firms[a].bankrupt
        self._refresh_infos()
        live = [a for a in self.agents if not (self.terminations[a] or self.truncations[a])]
        self.agent_selection = nxt if nxt is not None and nxt in live else (live[0] if live else agent)
        self._accumulate_rewards()
        self._deads_step_first()

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        e = self.episode.economy
        return f"day {e.day}: " + ", ".join(f"{a} NI {e.firms[a].net_income:.2f}" for a in FIRMS)

    def close(self) -> None:
        pass


def env(**kwargs: Any) -> CoffeeBenchAEC:
    """PettingZoo-style constructor."""
    return CoffeeBenchAEC(**kwargs)
