"""Sampling a combinatorial action whose inclusion probabilities are given marginals.

Any vector ``q`` in the "at most m arms" polytope ``{q in [0,1]^A : sum q <= m}`` is the marginal
vector of a distribution over subsets of at most ``m`` arms. Systematic (Madow) sampling realises one
in ``O(A)``: lay the arms, in a fresh random order, as consecutive intervals of lengths ``q_i`` on
``[0, sum q)``, draw ``u ~ U[0, 1)`` and select the arms whose interval contains one of the points
``u, u + 1, u + 2, ...``. An interval of length ``q_i <= 1`` holds at most one point, and holds one
with probability exactly ``q_i``; the number of points is ``floor(sum q)`` or ``ceil(sum q) <= m``.
The semi-bandit regret depends on the distribution only through ``q`` (rewards are additive over
arms), so this choice among the distributions with marginals ``q`` loses nothing.
"""

from __future__ import annotations

import numpy as np

from paperworks.core.validate import as_generator, finite_array

__all__ = ["sample_subset"]


def sample_subset(
    q: np.ndarray, rng: np.random.Generator | int | None = None, *, shuffle: bool = True
) -> np.ndarray:
    """Draw a subset of arms with ``P(i in S) = q_i``.

    Args:
        q: marginals, shape ``(A,)``, each in ``[0, 1]``.
        rng: a NumPy generator, an int seed, or ``None`` (a fresh generator).
        shuffle: randomise the order of the intervals (default) so that pairs of arms are not tied by
            their index order; the marginals are exact either way.

    Returns:
        sorted ``int64`` array of distinct arm indices, of length ``floor(sum q)`` or ``ceil(sum q)``.
    """
    q = finite_array(q, "q", ndim=1)
    if q.min() < 0.0 or q.max() > 1.0 + 1e-12:
        raise ValueError(f"q: expected marginals in [0, 1], got min {q.min():.4g}, max {q.max():.4g}")
    rng = as_generator(rng, "rng")
    if not isinstance(shuffle, bool | np.bool_):
        raise TypeError(f"shuffle: expected a bool, got {type(shuffle).__name__}")
    order = rng.permutation(q.size) if shuffle else np.arange(q.size)
    c = np.cumsum(q[order])
    total = c[-1]
    if abs(total - round(total)) < 1e-9:  # an integer total up to rounding: never one arm too many
        total = float(round(total))
    u = rng.random()
    if u >= total:
        return np.empty(0, dtype=np.int64)
    points = u + np.arange(int(np.floor(total - u)) + 1)
    points = points[points < total]
    pos = np.searchsorted(c, points, side="right")
    pos = pos[pos < q.size]
    return np.unique(order[pos]).astype(np.int64)
