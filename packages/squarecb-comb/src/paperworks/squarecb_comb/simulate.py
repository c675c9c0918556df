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

from paperworks.core.validate import positive_int

from .environment import SemiBanditEnvironment, check_action

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
    horizon = positive_int(horizon, "horizon")
    if not isinstance(env, SemiBanditEnvironment):
        raise TypeError(f"env: expected a SemiBanditEnvironment, got {type(env).__name__}")
    if not isinstance(agents, Mapping) or not agents:
        raise ValueError("agents: expected a non-empty mapping of name to agent")
    for name, agent in agents.items():
        if not (callable(getattr(agent, "act", None)) and callable(getattr(agent, "learn", None))):
            raise TypeError(f"agents: {name!r} has no act/learn methods ({type(agent).__name__})")
    A, m = env.config.n_arms, env.config.m
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
            a = check_action(a, A, m, name=f"action of agent {name!r}")
            agent.learn(X, a, paid[a])
            spent[j] += t1 - t0 + clock() - t1
            regret[j, t] = env._pseudo_regret(mu, a)
    cum = np.cumsum(regret, axis=1)
    return {n: SimulationResult(cum[j], spent[j] / horizon) for j, n in enumerate(names)}
