"""Relation losses in SMNC's closure space and the structural cues they consume.

Diagonal self-reachability is penalised for cycle suppression; off-diagonal reachability carries
optional cues: *ancestry* (``i`` is an ancestor of ``j``: reachable), *backward exclusion* (``j`` is
not an ancestor of ``i``, implied by every ancestry cue) and *incomparability* or any other
*forbidden* ancestry (``i`` is not an ancestor of ``j``). A positive ancestry cue is a label on the
reachability logit ``l_ij``, never on the gate ``G_ij`` of a direct edge.

With ``rho = 1 - exp(-exp(l))`` the binary cross-entropy is ``-log rho`` for a positive label and
exactly ``exp(l)`` for a negative one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx
import numpy as np
import torch

from .closure import _check_square

__all__ = ["RelationCues", "cycle_loss", "relation_loss"]


def cycle_loss(logits: torch.Tensor) -> torch.Tensor:
    """Self-reachability loss ``mean_i exp(l_ii)`` (BCE of the label "i does not reach itself").

    Args:
        logits: ``(d, d)`` read-out closure logits (or ``(K+1, d, d)``, averaged over scales too).
    """
    _check_square(logits, "logits", (2, 3))
    return torch.exp(torch.diagonal(logits, dim1=-2, dim2=-1)).mean()


def relation_loss(logits: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
    """Masked off-diagonal reachability BCE.

    Args:
        logits: ``(d, d)`` read-out closure logits.
        positive: ``(d, d)`` bool mask of pairs labelled reachable (ancestry cues).
        negative: ``(d, d)`` bool mask of pairs labelled unreachable (backward exclusion, forbidden).

    Returns:
        scalar: mean of ``-log rho`` over positives plus mean of ``exp(l)`` over negatives (0 if empty).
    """
    _check_square(logits, "logits")
    for name, m in (("positive", positive), ("negative", negative)):
        if not isinstance(m, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor bool mask, got {type(m).__name__}")
        if m.shape != logits.shape or m.dtype != torch.bool:
            raise ValueError(
                f"{name}: expected a bool mask of shape {tuple(logits.shape)}, got {m.dtype} {tuple(m.shape)}"
            )
    zero = logits.new_zeros(())
    pos = zero
    if bool(positive.any()):
        rho = -torch.expm1(-torch.exp(logits[positive]))
        pos = -torch.log(rho.clamp_min(1e-12)).mean()
    neg = torch.exp(logits[negative]).mean() if bool(negative.any()) else zero
    return pos + neg


def _pairs(value: Iterable | np.ndarray | None, d: int, name: str) -> list[tuple[int, int]]:
    if value is None:
        return []
    arr = np.asarray(list(value) if not isinstance(value, np.ndarray) else value)
    if arr.size == 0:
        return []
    if arr.ndim == 2 and arr.shape == (d, d) and arr.dtype == bool:
        arr = np.argwhere(arr)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(
            f"{name}: expected a list of (i, j) index pairs or a (d, d) bool matrix, got shape {arr.shape}"
        )
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name}: expected integer node indices, got dtype {arr.dtype}")
    if arr.min() < 0 or arr.max() >= d:
        raise ValueError(
            f"{name}: node indices must lie in [0, {d - 1}], got range [{arr.min()}, {arr.max()}]"
        )
    if np.any(arr[:, 0] == arr[:, 1]):
        i = int(arr[arr[:, 0] == arr[:, 1]][0, 0])
        raise ValueError(f"{name}: a pair relates node {i} to itself; expected i != j")
    return sorted({(int(i), int(j)) for i, j in arr})


@dataclass(frozen=True)
class RelationCues:
    """Validated structural cues for ``d`` nodes.

    Args:
        d: number of nodes.
        ancestry: pairs ``(i, j)``: ``i`` is an ancestor of ``j`` (a directed path ``i -> ... -> j``).
        forbidden: pairs ``(i, j)``: ``i`` is not an ancestor of ``j`` (give both directions for
            incomparability).

    Raises ``ValueError`` before any fitting when the ancestry cues form a cycle or when a forbidden
    pair is implied by the (transitively closed) ancestry cues.
    """

    d: int
    ancestry: tuple[tuple[int, int], ...] = ()
    forbidden: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.d, bool) or not isinstance(self.d, int) or self.d < 1:
            raise ValueError(f"d: expected a positive int, got {self.d!r}")
        g = nx.DiGraph()
        g.add_nodes_from(range(self.d))
        g.add_edges_from(self.ancestry)
        if not nx.is_directed_acyclic_graph(g):
            cycle = [u for u, _ in nx.find_cycle(g)]
            raise ValueError(f"ancestry: the required ancestral relations form a cycle through nodes {cycle}")
        closure = nx.transitive_closure_dag(g)
        clash = [(i, j) for i, j in self.forbidden if closure.has_edge(i, j)]
        if clash:
            raise ValueError(
                f"forbidden: pairs {clash[:5]} are implied ancestral by the ancestry cues (contradiction)"
            )

    @classmethod
    def from_pairs(cls, d: int, ancestry=None, forbidden=None) -> RelationCues:
        """Validate raw pair lists / bool matrices (see class docstring)."""
        return cls(d, tuple(_pairs(ancestry, d, "ancestry")), tuple(_pairs(forbidden, d, "forbidden")))

    @property
    def empty(self) -> bool:
        return not self.ancestry and not self.forbidden

    def masks(self, device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
        """``(positive, negative)`` bool masks ``(d, d)``; negatives include backward exclusion ``(j, i)``."""
        pos = torch.zeros(self.d, self.d, dtype=torch.bool, device=device)
        neg = torch.zeros_like(pos)
        for i, j in self.ancestry:
            pos[i, j] = True
            neg[j, i] = True
        for i, j in self.forbidden:
            neg[i, j] = True
        return pos, neg
