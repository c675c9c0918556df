"""Prioritized experience replay (Schaul et al., 2016) on a vectorised sum-tree, a comparison sampler.

PER samples storage *slots* (not ages) with ``P(i) = p_i / sum_j p_j``, ``p_i = (|delta_i| +
eps)^alpha``, and corrects the bias with importance weights ``w_i = (N P(i))^(-beta) / max_j w_j``.
New transitions enter with the largest priority seen so far. Updates and draws are vectorised
over the batch: each walks the ``log2(capacity)`` tree levels with one NumPy operation per level.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["PrioritizedSampler", "SumTree"]


class SumTree:
    """A binary sum-tree over ``capacity`` non-negative leaf values (array of ``2 * 2^k`` nodes)."""

    def __init__(self, capacity: int) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 1:
            raise ValueError(f"capacity: expected a positive int, got {capacity!r}")
        self.capacity = int(capacity)
        self._leaves = 1 << max(0, (self.capacity - 1).bit_length())
        self._depth = self._leaves.bit_length() - 1
        self.tree = np.zeros(2 * self._leaves)

    @property
    def total(self) -> float:
        return float(self.tree[1])

    def leaves(self) -> np.ndarray:
        """Leaf values, shape ``(capacity,)`` (a view)."""
        return self.tree[self._leaves : self._leaves + self.capacity]

    def set(self, index: np.ndarray, value: np.ndarray) -> None:
        """Set leaves ``index`` (shape ``(k,)``) to ``value`` (shape ``(k,)`` or scalar); last write wins."""
        idx = np.asarray(index, dtype=np.int64).ravel() + self._leaves
        self.tree[idx] = value
        nodes = np.unique(idx >> 1)
        while nodes.size and nodes[0] >= 1:
            self.tree[nodes] = self.tree[2 * nodes] + self.tree[2 * nodes + 1]
            if nodes[0] == 1:
                break
            nodes = np.unique(nodes >> 1)

    def find(self, values: np.ndarray) -> np.ndarray:
        """Leaf indices whose prefix-sum interval contains each of ``values`` (shape ``(B,)``)."""
        v = np.array(values, dtype=float)
        node = np.ones(v.shape, dtype=np.int64)
        for _ in range(self._depth):
            left = 2 * node
            left_sum = self.tree[left]
            go_right = v >= left_sum
            v = np.where(go_right, v - left_sum, v)
            node = np.where(go_right, left + 1, left)
        return node - self._leaves


class PrioritizedSampler:
    """Proportional PER over the slots of a ring buffer of ``capacity`` transitions.

    ``add(slots)`` gives new slots the maximum priority; ``sample(batch_size, rng=)`` returns slots
    (shape ``(B,)``) and normalised importance weights (shape ``(B,)``); ``update_priorities(slots,
    td_errors)`` sets ``p = (|td| + eps)^alpha``.
    """

    name = "per"

    def __init__(self, capacity: int, alpha: float = 0.6, beta: float = 0.4, eps: float = 1e-6) -> None:
        for name, v, lo in (("alpha", alpha, 0.0), ("beta", beta, 0.0), ("eps", eps, 0.0)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= lo):
                raise ValueError(f"{name}: expected a finite number >= {lo}, got {v!r}")
        if eps == 0:
            raise ValueError("eps: expected a positive number (zero priorities are never replayed)")
        self.tree = SumTree(capacity)
        self.capacity = self.tree.capacity
        self.alpha, self.beta, self.eps = float(alpha), float(beta), float(eps)
        self._max_priority = 1.0

    def __len__(self) -> int:
        return int(np.count_nonzero(self.tree.leaves()))

    def add(self, slots: np.ndarray) -> None:
        """Mark ``slots`` (shape ``(k,)``) as newly written, with the maximum priority so far."""
        s = np.asarray(slots, dtype=np.int64).ravel()
        if s.size and (s.min() < 0 or s.max() >= self.capacity):
            raise ValueError(f"slots: expected values in [0, {self.capacity}), got [{s.min()}, {s.max()}]")
        self.tree.set(s, self._max_priority)

    def update_priorities(self, slots: np.ndarray, td_errors: np.ndarray) -> None:
        """Set priorities ``(|td| + eps)^alpha`` of ``slots``; both shape ``(k,)``."""
        s = np.asarray(slots, dtype=np.int64).ravel()
        td = np.asarray(td_errors, dtype=float).ravel()
        if s.shape != td.shape:
            raise ValueError(f"td_errors: expected shape {s.shape} like slots, got {td.shape}")
        if not np.all(np.isfinite(td)):
            raise ValueError("td_errors: contains NaN or inf")
        pr = (np.abs(td) + self.eps) ** self.alpha
        self.tree.set(s, pr)
        self._max_priority = max(self._max_priority, float(pr.max(initial=0.0)))

    def pmf(self) -> np.ndarray:
        """Sampling probabilities of every slot, shape ``(capacity,)``."""
        total = self.tree.total
        if total <= 0:
            raise ValueError("PrioritizedSampler: cannot sample from an empty buffer; add transitions first")
        return self.tree.leaves() / total

    def sample(
        self, batch_size: int, *, rng: np.random.Generator | int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``batch_size`` slots with replacement; return ``(slots, weights)``, each shape ``(B,)``."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size: expected a positive int, got {batch_size!r}")
        total = self.tree.total
        if total <= 0:
            raise ValueError("PrioritizedSampler: cannot sample from an empty buffer; add transitions first")
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        # stratified draws, one per equal segment of the total mass (Schaul et al., App. B.2.1)
        u = (np.arange(batch_size) + gen.random(batch_size)) * (total / batch_size)
        slots = self.tree.find(np.minimum(u, np.nextafter(total, 0)))
        leaves = self.tree.leaves()
        pr = leaves[slots]
        # guard against float round-off landing on an empty leaf
        bad = pr <= 0
        if bad.any():
            slots[bad] = np.flatnonzero(leaves)[gen.integers(0, np.count_nonzero(leaves), bad.sum())]
            pr = leaves[slots]
        n = np.count_nonzero(leaves)
        w = (n * pr / total) ** (-self.beta)
        return slots, w / w.max()
