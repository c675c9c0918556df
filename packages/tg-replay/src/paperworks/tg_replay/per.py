"""Prioritized experience replay (Schaul et al., 2016) on a vectorised sum-tree, a comparison sampler.

PER samples storage *slots* (not ages) with ``P(i) = p_i / sum_j p_j``, ``p_i = (|delta_i| +
eps)^alpha``, and corrects the bias with importance weights ``w_i = (N P(i))^(-beta) / max_j w_j``.
New transitions enter with the largest priority seen so far. Updates and draws are vectorised
over the batch: each walks the ``log2(capacity)`` tree levels with one NumPy operation per level.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from paperworks.core.validate import (
    as_generator,
    finite_array,
    nonnegative_float,
    positive_float,
    positive_int,
)

__all__ = ["PrioritizedSampler", "SumTree"]


def _slots(x: object, name: str, capacity: int, *, allow_empty: bool = True) -> np.ndarray:
    """A 1-d int array of slot indices in ``[0, capacity)`` (scalars become length 1)."""
    s = finite_array(x, name, dtype_kind="i", allow_empty=allow_empty)
    if s.ndim > 1:
        raise ValueError(f"{name}: expected a 1-d array of slot indices, got shape {s.shape}")
    s = s.reshape(-1).astype(np.int64, copy=False)
    if s.size and (s.min() < 0 or s.max() >= capacity):
        raise ValueError(f"{name}: expected slot indices in [0, {capacity}), got [{s.min()}, {s.max()}]")
    return s


class SumTree:
    """A binary sum-tree over ``capacity`` non-negative leaf values (array of ``2 * 2^k`` nodes)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = positive_int(capacity, "capacity")
        self._leaves = 1 << max(0, (self.capacity - 1).bit_length())
        self._depth = self._leaves.bit_length() - 1
        self.tree = np.zeros(2 * self._leaves)

    @property
    def total(self) -> float:
        return float(self.tree[1])

    def leaves(self) -> np.ndarray:
        """Leaf values, shape ``(capacity,)`` (a read-only view)."""
        view = self.tree[self._leaves : self._leaves + self.capacity]
        view.flags.writeable = False
        return view

    def set(self, index: object, value: object) -> None:
        """Set leaves ``index`` (ints in ``[0, capacity)``, shape ``(k,)``) to ``value`` (finite, >= 0;
        shape ``(k,)`` or a scalar); a repeated index takes its last value. Nothing is written on bad input.
        """
        idx = _slots(index, "index", self.capacity)
        val = finite_array(value, "value", allow_empty=True)
        if val.ndim == 0:
            val = np.full(idx.shape, float(val))
        elif val.shape != idx.shape:
            raise ValueError(f"value: expected a scalar or shape {idx.shape} like index, got {val.shape}")
        if val.size and val.min() < 0:
            raise ValueError(f"value: expected non-negative priorities, got min {val.min():.4g}")
        if not idx.size:
            return
        idx = idx + self._leaves
        self.tree[idx] = val
        nodes = np.unique(idx >> 1)
        while nodes.size and nodes[0] >= 1:
            self.tree[nodes] = self.tree[2 * nodes] + self.tree[2 * nodes + 1]
            if nodes[0] == 1:
                break
            nodes = np.unique(nodes >> 1)

    def find(self, values: object) -> np.ndarray:
        """Leaf indices whose prefix-sum interval ``[S_(i-1), S_i)`` contains each value (shape ``(B,)``).

        ``values`` must lie in ``[0, total)``; the tree must hold some mass.
        """
        v = finite_array(values, "values", ndim=1)
        total = self.total
        if total <= 0:
            raise ValueError("values: the tree is empty (total 0); set some priorities first")
        if v.min() < 0 or v.max() >= total:
            raise ValueError(
                f"values: expected values in [0, total={total:.6g}), got [{v.min():.6g}, {v.max():.6g}]"
            )
        v = v.astype(float, copy=True)
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
        self.tree = SumTree(capacity)
        self.capacity = self.tree.capacity
        self.alpha = nonnegative_float(alpha, "alpha")
        self.beta = nonnegative_float(beta, "beta")
        self.eps = positive_float(eps, "eps")
        self._max_priority = 1.0

    def __len__(self) -> int:
        return int(np.count_nonzero(self.tree.leaves()))

    def add(self, slots: object) -> None:
        """Mark ``slots`` (ints in ``[0, capacity)``, shape ``(k,)``) as new, at the max priority."""
        self.tree.set(_slots(slots, "slots", self.capacity), self._max_priority)

    def update_priorities(self, slots: object, td_errors: object) -> None:
        """Set priorities ``(|td| + eps)^alpha`` of ``slots`` (ints in ``[0, capacity)``), shape ``(k,)``.

        Checked before anything is written: a slot outside the buffer, a length mismatch or a
        non-finite TD error raises and leaves the tree as it was.
        """
        s = _slots(slots, "slots", self.capacity)
        td = finite_array(td_errors, "td_errors", allow_empty=True).reshape(-1)
        if s.shape != td.shape:
            raise ValueError(f"td_errors: expected shape {s.shape} like slots, got {td.shape}")
        pr = (np.abs(td) + self.eps) ** self.alpha
        self.tree.set(s, pr)
        self._max_priority = max(self._max_priority, float(pr.max(initial=0.0)))

    def state_dict(self) -> dict[str, Any]:
        """Capacity, exponents, the leaf priorities and the running maximum priority."""
        return {
            "capacity": self.capacity,
            "alpha": self.alpha,
            "beta": self.beta,
            "eps": self.eps,
            "max_priority": self._max_priority,
            "priorities": self.tree.leaves().copy(),
        }

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict` (of a sampler with the same capacity)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"state_dict: expected a mapping, got {type(state_dict).__name__}")
        missing = {"capacity", "alpha", "beta", "eps", "max_priority", "priorities"} - set(state_dict)
        if missing:
            raise ValueError(f"state_dict: missing keys {sorted(missing)}")
        if state_dict["capacity"] != self.capacity:
            raise ValueError(
                f"state_dict: capacity {state_dict['capacity']} != this sampler's {self.capacity}"
            )
        pr = finite_array(state_dict["priorities"], "state_dict['priorities']", shape=(self.capacity,))
        if pr.min() < 0:
            raise ValueError("state_dict['priorities']: expected non-negative priorities")
        alpha = nonnegative_float(state_dict["alpha"], "state_dict['alpha']")
        beta = nonnegative_float(state_dict["beta"], "state_dict['beta']")
        eps = positive_float(state_dict["eps"], "state_dict['eps']")
        max_pr = positive_float(state_dict["max_priority"], "state_dict['max_priority']")
        self.tree.tree[:] = 0.0
        self.tree.set(np.arange(self.capacity), pr)
        self.alpha, self.beta, self.eps, self._max_priority = alpha, beta, eps, max_pr

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
        batch_size = positive_int(batch_size, "batch_size")
        total = self.tree.total
        if total <= 0:
            raise ValueError("PrioritizedSampler: cannot sample from an empty buffer; add transitions first")
        gen = as_generator(rng)
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
