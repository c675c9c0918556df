"""A lower-bound construction (ours; the paper's is not public) and direct checks of its properties.

Two MDPs ``M_plus, M_minus`` on states {0: start, 1: probe, 2: end (absorbing, reward 0)} and actions {0, 1}:

- in state 0, action 0 ends (moves to 2) with mean reward ``r0 = gamma / 2``; action 1 moves to the probe with
  reward 0;
- in the probe, either action ends with mean reward ``1/2 + delta`` (``M_plus``) or ``1/2 - delta``
(``M_minus``).

So ``Q*(0, 1) = gamma (1/2 ± delta)`` and ``Q*(0, 0) = gamma / 2``: the optimal action in state 0 is 1 in
``M_plus`` and 0 in ``M_minus``, each with gap ``Delta = gamma * delta``. The behaviour takes action 1 in
state 0
with probability ``leak``. With ``leak = 0`` the probe is never visited and the two data laws are identical
(KL = 0): the comparator of ``M_minus`` is covered (C* finite) and that of ``M_plus`` has C* = inf, as it must
(identical laws with both comparators covered would force a shared optimal policy). With ``leak > 0`` both are
covered and the per-sample KL is ``mu(probe) kl(1/2 + delta || 1/2 - delta)`` of the ±1 rewards (statistical).

The class: linear in 4 features ``phi(0, 0) = e1, phi(0, 1) = e2, phi(1, .) = e3, phi(2, .) = e4`` (d = 4 <
S A = 6).
Both MDPs are linear MDPs in ``phi`` (``P`` and ``r`` lie in its span), hence the class is Bellman complete
and
holds both ``Q*``: :func:`span_residual`, :func:`realisability_residual`, :func:`completeness_residual`
check that
directly. Any algorithm's output is a function of the data, so with identical laws its worst-of-the-two
suboptimality is ``max(p, 1 - p) Delta >= Delta / 2`` with ``p = pi(1 | 0)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import as_generator, fraction, positive_float, positive_int

from .data import OfflineDataset
from .mdp import TabularMDP, greedy_policy

__all__ = [
    "LowerBoundPair",
    "completeness_residual",
    "data_log_likelihood",
    "lower_bound_pair",
    "realisability_residual",
    "span_residual",
]


@dataclass(frozen=True, eq=False)
class LowerBoundPair:
    """The two MDPs, the shared behaviour and features, and ``delta_gap = Delta``."""

    plus: TabularMDP
    minus: TabularMDP
    behaviour: np.ndarray
    features: np.ndarray
    delta_gap: float
    leak: float

    @property
    def mdps(self) -> tuple[TabularMDP, TabularMDP]:
        return self.plus, self.minus

    def data_kl_per_sample(self) -> float:
        """``KL(law_plus || law_minus)`` of one transition (exact, from the data laws)."""
        mu_p = self.plus.occupancy(self.behaviour)
        mu_m = self.minus.occupancy(self.behaviour)
        if not np.allclose(mu_p, mu_m):  # the occupancies agree: the MDPs differ only in probe rewards
            raise AssertionError("occupancies differ")
        kl = 0.0
        for s in range(self.plus.n_states):
            for a in range(self.plus.n_actions):
                if mu_p[s, a] <= 0:
                    continue
                p = (1 + self.plus.rewards[s, a]) / 2
                q = (1 + self.minus.rewards[s, a]) / 2
                kl += mu_p[s, a] * _bernoulli_kl(p, q)  # transitions are identical
        return float(kl)

    def worst_suboptimality(self, policy: np.ndarray) -> float:
        """``max_i (J_i* - J_i(pi))`` over the two MDPs."""
        return max(m.optimal_value() - m.value(policy) for m in self.mdps)


def _bernoulli_kl(p: float, q: float) -> float:
    out = 0.0
    for x, y in ((p, q), (1 - p, 1 - q)):
        if x > 0:
            out += x * np.log(x / y)
    return out


def lower_bound_pair(gamma: float = 0.9, delta: float = 0.5, leak: float = 0.0) -> LowerBoundPair:
    """The construction above; ``delta`` in (0, 1/2], ``leak`` in [0, 1)."""
    gamma = fraction(gamma, "gamma", open_low=True, open_high=True)
    delta = positive_float(delta, "delta")
    if delta > 0.5:
        raise ValueError(f"delta: expected a number in (0, 0.5], got {delta}")
    leak = fraction(leak, "leak", open_high=True)
    P = np.zeros((3, 2, 3))
    P[0, 0, 2] = 1.0
    P[0, 1, 1] = 1.0
    P[1, :, 2] = 1.0
    P[2, :, 2] = 1.0
    d0 = np.array([1.0, 0.0, 0.0])

    def make(sign: float) -> TabularMDP:
        r = np.zeros((3, 2))
        r[0, 0] = gamma / 2
        r[1, :] = 0.5 + sign * delta
        return TabularMDP(P, r, d0, gamma)

    behaviour = np.array([[1 - leak, leak], [0.5, 0.5], [0.5, 0.5]])
    phi = np.zeros((3, 2, 4))
    phi[0, 0, 0] = 1.0
    phi[0, 1, 1] = 1.0
    phi[1, :, 2] = 1.0
    phi[2, :, 3] = 1.0
    return LowerBoundPair(make(+1.0), make(-1.0), behaviour, phi, gamma * delta, leak)


def _project_residual(F: np.ndarray, y: np.ndarray) -> float:
    coef, *_ = np.linalg.lstsq(F, y, rcond=None)
    return float(np.max(np.abs(F @ coef - y)))


def span_residual(mdp: TabularMDP, features: np.ndarray) -> float:
    """Max residual of projecting ``r`` and every column ``P(s' | ., .)`` onto span(phi): 0 for a linear
    MDP."""
    F = np.asarray(features, dtype=float).reshape(mdp.n_states * mdp.n_actions, -1)
    cols = [mdp.rewards.ravel()] + [mdp.transitions[:, :, t].ravel() for t in range(mdp.n_states)]
    return max(_project_residual(F, c) for c in cols)


def realisability_residual(mdp: TabularMDP, features: np.ndarray) -> float:
    """``min_theta max |phi theta - Q*|`` (least squares): 0 when Q* is in the class."""
    F = np.asarray(features, dtype=float).reshape(mdp.n_states * mdp.n_actions, -1)
    return _project_residual(F, mdp.optimal_q().ravel())


def completeness_residual(mdp: TabularMDP, features: np.ndarray, n_draws: int = 64, rng: object = 0) -> float:
    """Max over random ``theta`` (and the basis vectors) of the residual of ``T(phi theta)`` off span(phi):
    0 when the class is Bellman complete."""
    F = np.asarray(features, dtype=float).reshape(mdp.n_states * mdp.n_actions, -1)
    gen = as_generator(rng)
    d = F.shape[1]
    thetas = np.concatenate([np.eye(d), gen.normal(size=(positive_int(n_draws, "n_draws"), d)) * 5])
    worst = 0.0
    for th in thetas:
        f = (F @ th).reshape(mdp.n_states, mdp.n_actions)
        worst = max(worst, _project_residual(F, mdp.bellman_optimality(f).ravel()))
    return worst


def data_log_likelihood(mdp: TabularMDP, behaviour: np.ndarray, data: OfflineDataset) -> float:
    """``log P(data | mdp, behaviour)`` of i.i.d. transitions: occupancy x reward x transition terms."""
    mu = mdp.occupancy(behaviour)
    s, a, s2 = data.states, data.actions, data.next_states
    p_plus = (1 + mdp.rewards[s, a]) / 2
    p_r = np.where(data.rewards > 0, p_plus, 1 - p_plus)
    with np.errstate(divide="ignore"):
        return float(np.sum(np.log(mu[s, a]) + np.log(p_r) + np.log(mdp.transitions[s, a, s2])))


def optimal_actions(pair: LowerBoundPair) -> tuple[int, int]:
    """The optimal action in state 0 of ``plus`` and of ``minus``."""
    return tuple(int(np.argmax(greedy_policy(m.optimal_q())[0])) for m in pair.mdps)  # type: ignore[return-value]
