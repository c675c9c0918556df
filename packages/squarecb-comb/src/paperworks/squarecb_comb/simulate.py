"""The interaction loop: agents against a generated environment, with cumulative pseudo-regret.

Several agents run in lockstep on the same stream of contexts, and with common random numbers for
the rewards (arm ``i`` pays 1 when one shared uniform ``U_{t,i} < mu_{t,i}``), so that differences
between agents are not differences between draws of the environment.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .environment import SemiBanditEnvironment

__all__ = ["Agent", "SimulationResult", "simulate"]


class Agent(Protocol):
    def act(self, context: np.ndarray) -> np.ndarray: ...

    def learn(self, context: np.ndarray, action: np.ndarray, rewards: np.ndarray) -> None: ...


@dataclass(frozen=True)
class SimulationResult:
    """``cumulative_regret``: shape ``(T,)``; ``seconds_per_round``: mean wall time of act + learn."""

    cumulative_regret: np.ndarray
    seconds_per_round: float

    @property
    def final_regret(self) -> float:
        return float(self.cumulative_regret[-1])


def simulate(
    agents: Mapping[str, Agent], env: SemiBanditEnvironment, horizon: int
) -> dict[str, SimulationResult]:
    """Run ``horizon`` rounds of every agent on one context stream; only act + learn are timed."""
    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 1:
        raise ValueError(f"horizon: expected a positive int, got {horizon!r}")
    if not agents:
        raise ValueError("agents: expected at least one agent")
    names = list(agents)
    regret = np.empty((len(names), horizon))
    spent = np.zeros(len(names))
    clock = time.perf_counter
    for t in range(horizon):
        X = env.context()
        mu = env.mean_rewards(X)
        paid = (env.rng.random(mu.size) < mu).astype(float)
        for j, name in enumerate(names):
            agent = agents[name]
            t0 = clock()
            a = agent.act(X)
            t1 = clock()
            agent.learn(X, a, paid[a])
            spent[j] += t1 - t0 + clock() - t1
            regret[j, t] = env.regret(mu, a)
    cum = np.cumsum(regret, axis=1)
    return {n: SimulationResult(cum[j], spent[j] / horizon) for j, n in enumerate(names)}
