"""The decision-estimation objective on a finite Q* class (our reading of E2D.OR / GDE; the paper's exact
objective is not public).

Value estimation: each candidate ``f`` gets the excess TD loss ``E(f) = L(f, f) - min_{g in F} L(g, f)`` with
``L(g, f) = (1/n) sum_i (g(s_i, a_i) - r_i - gamma max_a f(s'_i, a))^2`` (the double-sampling-corrected
squared
Bellman error, consistent under Bellman completeness), and the version space is ``F_eps = {f : E(f) <= eps}``.
Decision: over the class's greedy policies ``pi_g``, the decision-estimation objective is
``dec(pi) = max_{f in F_eps} [f(d0, pi_f) - f(d0, pi)]`` (the regret of ``pi`` were ``f`` the true Q*), and
:func:`dec_policy` returns its minimiser. :func:`gde_policy` is the greedy value-centric rule: play the greedy
policy of the most pessimistic plausible ``f`` (smallest ``f(d0, pi_f)``), as in Chen and Jiang (2022).
"""

from __future__ import annotations

import numpy as np

from paperworks.core.validate import finite_array, fraction, nonnegative_float

from .data import OfflineDataset
from .mdp import greedy_policy

__all__ = ["dec_objective", "dec_policy", "excess_td_loss", "gde_policy", "version_space"]


def _stack(candidates: object, data: OfflineDataset) -> np.ndarray:
    F = finite_array(candidates, "candidates", ndim=3)
    if F.shape[1:] != (data.n_states, data.n_actions):
        raise ValueError(f"candidates: expected shape (k, {data.n_states}, {data.n_actions}), got {F.shape}")
    return F


def excess_td_loss(candidates: object, data: OfflineDataset, gamma: float) -> np.ndarray:
    """``E(f)`` for every candidate, shape ``(k,)``."""
    F = _stack(candidates, data)
    gamma = fraction(gamma, "gamma", open_high=True)
    pred = F[:, data.states, data.actions]  # (k, n): g(s_i, a_i)
    target = data.rewards[None, :] + gamma * F.max(axis=2)[:, data.next_states]  # (k, n): target of f
    loss = ((pred[:, None, :] - target[None, :, :]) ** 2).mean(axis=2)  # L[g, f]
    return np.diag(loss) - loss.min(axis=0)


def version_space(candidates: object, data: OfflineDataset, gamma: float, eps: float) -> np.ndarray:
    """Indices of the candidates with ``E(f) <= eps``."""
    eps = nonnegative_float(eps, "eps")
    return np.flatnonzero(excess_td_loss(candidates, data, gamma) <= eps + 1e-12)


def dec_objective(candidates: object, plausible: np.ndarray, initial: np.ndarray) -> np.ndarray:
    """``dec(pi_g)`` for every greedy policy of the class, shape ``(k,)``."""
    F = np.asarray(candidates, dtype=float)
    v = np.einsum("s,ks->k", initial, F.max(axis=2))  # f(d0, pi_f)
    greedy = F.argmax(axis=2)  # (k, S)
    # value of pi_g under f at d0: f(s, pi_g(s))
    val = np.einsum(
        "s,fks->fk", initial, np.take_along_axis(F[:, None, :, :], greedy[None, :, :, None], 3)[..., 0]
    )
    regret = v[:, None] - val  # [f, g]
    return regret[plausible].max(axis=0)


def dec_policy(
    candidates: object, data: OfflineDataset, gamma: float, eps: float, initial: object
) -> np.ndarray:
    F = _stack(candidates, data)
    d0 = finite_array(initial, "initial", shape=(data.n_states,))
    keep = version_space(F, data, gamma, eps)
    return greedy_policy(F[int(np.argmin(dec_objective(F, keep, d0)))])


def gde_policy(
    candidates: object, data: OfflineDataset, gamma: float, eps: float, initial: object
) -> np.ndarray:
    F = _stack(candidates, data)
    d0 = finite_array(initial, "initial", shape=(data.n_states,))
    keep = version_space(F, data, gamma, eps)
    v = F[keep].max(axis=2) @ d0
    return greedy_policy(F[keep[int(np.argmin(v))]])
