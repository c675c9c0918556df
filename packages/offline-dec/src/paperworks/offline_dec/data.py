"""Offline data sets as arrays, partially covering behaviour policies and single-policy concentrability.

Generative model: ``n`` i.i.d. transitions ``(s, a, r, s')`` with ``(s, a) ~ mu = d^{pi_b}`` (the behaviour's
normalised discounted occupancy), ``r`` in {-1, +1} with mean ``r(s, a)`` and ``s' ~ P(. | s, a)``. The latent
MDP and behaviour are known to the generator only; the learner sees the arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from paperworks.core.validate import as_generator, finite_array, fraction, positive_int

from .mdp import TabularMDP, check_policy

__all__ = [
    "OfflineDataset",
    "collect_dataset",
    "concentrability",
    "covering_behaviour",
    "partial_support_behaviour",
]


@dataclass(frozen=True, eq=False)
class OfflineDataset:
    """Transitions as arrays: ``states (n,)``, ``actions (n,)``, ``rewards (n,)``, ``next_states (n,)``."""

    states: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    next_states: np.ndarray
    n_states: int
    n_actions: int

    def __post_init__(self) -> None:
        S = positive_int(self.n_states, "n_states")
        A = positive_int(self.n_actions, "n_actions")
        s = finite_array(self.states, "states", ndim=1, dtype_kind="i", allow_empty=True)
        n = s.shape[0]
        if n == 0:
            raise ValueError("states: expected a non-empty dataset, got 0 transitions")
        a = finite_array(self.actions, "actions", shape=(n,), dtype_kind="i")
        r = finite_array(self.rewards, "rewards", shape=(n,))
        s2 = finite_array(self.next_states, "next_states", shape=(n,), dtype_kind="i")
        for name, arr, hi in (("states", s, S), ("actions", a, A), ("next_states", s2, S)):
            if arr.min() < 0 or arr.max() >= hi:
                raise ValueError(f"{name}: expected values in [0, {hi}), got [{arr.min()}, {arr.max()}]")
        if r.min() < -1 or r.max() > 1:
            raise ValueError(f"rewards: expected values in [-1, 1], got [{r.min():.4g}, {r.max():.4g}]")
        for k, v in (("states", s), ("actions", a), ("rewards", r), ("next_states", s2)):
            v = np.array(v)
            v.setflags(write=False)
            object.__setattr__(self, k, v)

    def __len__(self) -> int:
        return int(self.states.shape[0])

    def counts(self) -> np.ndarray:
        """``n(s, a)`` of shape ``(S, A)``."""
        return (
            np.bincount(self.states * self.n_actions + self.actions, minlength=self.n_states * self.n_actions)
            .reshape(self.n_states, self.n_actions)
            .astype(float)
        )

    def empirical_model(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(n (S, A), mean reward (S, A), P_hat (S, A, S))``; unseen pairs have zero rows."""
        S, A = self.n_states, self.n_actions
        n = self.counts()
        idx = self.states * A + self.actions
        rsum = np.bincount(idx, weights=self.rewards, minlength=S * A).reshape(S, A)
        trans = np.bincount(idx * S + self.next_states, minlength=S * A * S).reshape(S, A, S).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            r_hat = np.where(n > 0, rsum / np.maximum(n, 1), 0.0)
            P_hat = trans / np.maximum(n, 1)[:, :, None]
        return n, r_hat, P_hat

    # ---------------------------------------------------------------- field formats
    def to_minari_arrays(self) -> dict[str, np.ndarray]:
        """Flat D4RL/Minari-style transition arrays: ``observations, actions, rewards, next_observations,
        terminations, truncations`` (each transition is a one-step episode, truncated, never terminal)."""
        n = len(self)
        return {
            "observations": self.states.copy(),
            "actions": self.actions.copy(),
            "rewards": self.rewards.copy(),
            "next_observations": self.next_states.copy(),
            "terminations": np.zeros(n, dtype=bool),
            "truncations": np.ones(n, dtype=bool),
        }

    @classmethod
    def from_minari_arrays(cls, arrays: dict[str, Any], n_states: int, n_actions: int) -> OfflineDataset:
        missing = [k for k in ("observations", "actions", "rewards", "next_observations") if k not in arrays]
        if missing:
            raise ValueError(f"arrays: missing keys {missing}")
        return cls(
            np.asarray(arrays["observations"]),
            np.asarray(arrays["actions"]),
            np.asarray(arrays["rewards"], dtype=float),
            np.asarray(arrays["next_observations"]),
            n_states,
            n_actions,
        )

    def to_d3rlpy(self) -> Any:
        """A ``d3rlpy.dataset.MDPDataset`` with one-hot observations: each transition is an episode of two
        steps ``[s, s']`` ending in a timeout, so that d3rlpy's transition picker yields ``(s, a, r, s')``
        (the second, timed-out step has no transition of its own). Needs the ``peer`` extra."""
        from d3rlpy.constants import ActionSpace
        from d3rlpy.dataset import MDPDataset

        n, S = len(self), self.n_states
        obs = np.zeros((2 * n, S), dtype=np.float32)
        obs[np.arange(0, 2 * n, 2), self.states] = 1.0
        obs[np.arange(1, 2 * n, 2), self.next_states] = 1.0
        actions = np.zeros(2 * n, dtype=np.int64)
        actions[0::2] = self.actions
        rewards = np.zeros((2 * n, 1), dtype=np.float32)
        rewards[0::2, 0] = self.rewards
        terminals = np.zeros(2 * n, dtype=np.float32)
        timeouts = np.zeros(2 * n, dtype=np.float32)
        timeouts[1::2] = 1.0
        return MDPDataset(
            obs,
            actions,
            rewards,
            terminals,
            timeouts,
            action_space=ActionSpace.DISCRETE,
            action_size=self.n_actions,
        )


def collect_dataset(mdp: TabularMDP, behaviour: object, n: int, rng: object = None) -> OfflineDataset:
    """``n`` i.i.d. transitions with ``(s, a) ~ d^{behaviour}`` (vectorised inverse-CDF sampling)."""
    n = positive_int(n, "n")
    pi_b = check_policy(behaviour, mdp.n_states, mdp.n_actions, "behaviour")
    gen = as_generator(rng)
    mu = mdp.occupancy(pi_b).ravel()
    mu = mu / mu.sum()
    idx = np.minimum(np.searchsorted(np.cumsum(mu), gen.random(n), side="right"), mu.size - 1)
    s, a = np.divmod(idx, mdp.n_actions)
    cdf = np.cumsum(mdp.transitions[s, a], axis=1)
    s2 = np.minimum((cdf < gen.random(n)[:, None]).sum(axis=1), mdp.n_states - 1)
    r = mdp.sample_rewards(s, a, gen)
    return OfflineDataset(s, a, r, s2, mdp.n_states, mdp.n_actions)


def concentrability(mdp: TabularMDP, comparator: object, behaviour: object) -> float:
    """Single-policy concentrability ``C* = max_{s,a} d^{pi}(s, a) / d^{mu}(s, a)``; ``inf`` when the
    comparator
    puts mass where the behaviour never goes (zero coverage). Pairs with comparator mass below ``1e-12`` are
    ignored (round-off of the linear solves)."""
    d_pi = mdp.occupancy(comparator)
    d_mu = mdp.occupancy(behaviour)
    need = d_pi > 1e-12
    if np.any(need & (d_mu <= 0.0)):
        return float("inf")
    return float(np.max(d_pi[need] / d_mu[need]))


def partial_support_behaviour(
    comparator: object, n_extra: int = 1, noise: float = 0.2, rng: object = None
) -> np.ndarray:
    """``(1 - noise) pi + noise * uniform(K(s))`` where ``K(s)`` holds the comparator's actions and
    ``n_extra``
    other random actions: actions outside ``K(s)`` are never taken (partial coverage, C* finite)."""
    pi = np.asarray(comparator, dtype=float)
    S = pi.shape[0]
    noise = fraction(noise, "noise")
    gen = as_generator(rng)
    support = pi > 0
    for s in range(S):
        others = np.flatnonzero(~support[s])
        if others.size:
            support[s, gen.choice(others, size=min(n_extra, others.size), replace=False)] = True
    uni = support / support.sum(axis=1, keepdims=True)
    return (1 - noise) * pi + noise * uni


def covering_behaviour(comparator: object, base: object, weight: float = 0.5) -> np.ndarray:
    """``weight * comparator + (1 - weight) * base``: covers a full-support comparator (C* <= 1 / weight at
    the
    action level) while most of the mass follows ``base``."""
    w = fraction(weight, "weight", open_low=True)
    return w * np.asarray(comparator, dtype=float) + (1 - w) * np.asarray(base, dtype=float)
