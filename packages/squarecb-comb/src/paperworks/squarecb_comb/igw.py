"""Inverse-gap weighting: SquareCB's single-action rule and its closed-form m-subset extension.

SquareCB (Foster and Rakhlin, 2020, arXiv 2002.04926, Algorithm 1) plays, given predicted rewards
``r`` (shape ``(A,)``) and a learning rate ``gamma``, every arm ``a`` other than the greedy arm
``b = argmax r`` with probability

    p_a = 1 / (A + gamma (r_b - r_a)),                                                    (IGW)

and the greedy arm with the remaining mass ``1 - sum_{a != b} p_a``.

:func:`igw_marginals` carries (IGW) to inclusion marginals of actions of ``m`` arms (our reading,
no public text of the paper; see README, Fidelity). With ``G`` the ``m`` greedy arms (the top ``m``
of ``r``) and ``r_(m)`` the weakest of them, every other arm gets

    q_i = 1 / (A / m + gamma (r_(m) - r_i))          for i not in G,                    (IGW-m)

the gap being what swapping ``i`` in for the weakest greedy arm costs, and every greedy arm gets
``1 - (sum_{i not in G} q_i) / m``. The marginals sum to exactly ``m``, lie in ``[m/A, 1]`` on ``G``
and in ``(0, m/A]`` off it, are monotone in ``r``, and for ``m = 1`` they are (IGW) itself.

*At most m arms* (``null_arm=True``): an empty slot is a null arm of predicted reward 0, and (IGW-m)
runs over the ``A + m`` items (``A / m`` becomes ``(A + m) / m``), with the null arms treated as one
interchangeable pool. With ``k = min(m, #{i : r_i > 0})``, the greedy action is the top ``k`` arms
plus ``m - k`` empty slots; the weakest greedy slot is worth ``r_(m)`` when ``k = m`` and 0 otherwise;
every other arm gets ``1 / ((A + m) / m + gamma (r_ref - r_i))``; when ``k = m`` the ``m`` null arms
are off the greedy action too and get that weight at reward 0 (the chance of an empty slot), when
``k < m`` no null arm is (the unused ones are interchangeable with the greedy ones); every greedy arm
gets ``1 - (sum of the off-greedy weights, null ones included) / m``. The arms' marginals sum to at
most ``m``, stay monotone in ``r``, and the missing mass is the expected number of empty slots.
"""

from __future__ import annotations

import numpy as np

from paperworks.core.validate import finite_array, positive_float

from .program import check_program_args

__all__ = ["igw_marginals", "inverse_gap_weighting"]


def inverse_gap_weighting(scores: np.ndarray, gamma: float) -> np.ndarray:
    """SquareCB's distribution over single arms, equation (IGW); shape ``(A,)``, sums to 1.

    Args:
        scores: predicted rewards ``r``, shape ``(A,)`` (higher is better), finite.
        gamma: learning rate, a finite number ``> 0``.

    Ties for the greedy arm go to the lowest index (``argmax``).
    """
    r = finite_array(scores, "scores", ndim=1)
    gamma = positive_float(gamma, "gamma")
    best = int(np.argmax(r))
    p = 1.0 / (r.size + gamma * (r[best] - r))
    p[best] = 0.0
    p[best] = 1.0 - p.sum()
    return p


def igw_marginals(scores: np.ndarray, m: int, gamma: float, *, null_arm: bool = False) -> np.ndarray:
    """Inclusion marginals of (IGW-m), shape ``(A,)``; ``sum = m`` (``null_arm``: ``<= m``).

    Args:
        scores: predicted rewards ``r``, shape ``(A,)``, finite.
        m: cardinality bound, ``1 <= m <= A``.
        gamma: learning rate, a finite number ``> 0``.
        null_arm: add ``m`` null arms of predicted reward 0 (actions of *at most* ``m`` arms).

    ``O(A)`` (one ``argpartition``). For ``m = 1`` and ``null_arm=False`` equal to
    :func:`inverse_gap_weighting` (up to which of tied greedy arms is chosen).
    """
    r, m, gamma = check_program_args(scores, m, gamma)
    if not isinstance(null_arm, bool | np.bool_):
        raise TypeError(f"null_arm: expected a bool, got {type(null_arm).__name__}")
    A = r.size
    if not null_arm and m == A:
        return np.ones(A)
    k = min(m, int((r > 0).sum())) if null_arm else m
    in_g = np.zeros(A, dtype=bool)
    if k:
        in_g[np.argpartition(-r, k - 1)[:k]] = True
    r_ref = float(r[in_g].min()) if k == m else 0.0
    width = (A + m) / m if null_arm else A / m
    q = np.empty(A)
    q[~in_g] = 1.0 / (width + gamma * (r_ref - r[~in_g]))
    off = q[~in_g].sum()
    if null_arm and k == m:
        off += m / (width + gamma * r_ref)  # the m null arms, reward 0, off the greedy action
    q[in_g] = 1.0 - off / m
    return q
