"""Taxonomies: forests of labels, from parent arrays, edge lists, networkx DiGraphs or label paths.

Nodes are numbered so that every parent comes before its children (a topological order); ``levels``
groups them by depth for the batched recursions of :mod:`.projection` and :mod:`.tbp`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from paperworks.core.validate import as_generator, int_in_range

__all__ = ["CHEST_XRAY", "Taxonomy", "chest_xray_taxonomy", "random_taxonomy"]


@dataclass(frozen=True)
class Taxonomy:
    """A forest over ``n`` labels: ``parent[v]`` is v's parent (-1 for a root), parents before children.

    Use the constructors (:meth:`from_parents`, :meth:`from_edges`, :meth:`from_networkx`,
    :meth:`from_paths`): they check that the graph is a forest and renumber it topologically.
    """

    parent: np.ndarray
    names: tuple[str, ...]
    depth: np.ndarray = field(repr=False)
    levels: tuple[np.ndarray, ...] = field(repr=False)
    ancestor: np.ndarray = field(repr=False)  # (n, n) bool: ancestor[u, w] = u is a proper ancestor of w

    @property
    def n(self) -> int:
        return int(self.parent.size)

    @property
    def roots(self) -> np.ndarray:
        return np.flatnonzero(self.parent < 0)

    def children(self, v: int) -> np.ndarray:
        return np.flatnonzero(self.parent == v)

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise ValueError(f"node {name!r} is not in the taxonomy") from None

    @classmethod
    def from_parents(cls, parent: Sequence[int], names: Sequence[str] | None = None) -> Taxonomy:
        """From ``parent[v]`` (-1 for roots), in any order; renumbered topologically (names follow)."""
        p = np.asarray(parent)
        if p.ndim != 1 or p.size == 0 or p.dtype.kind not in "iu":
            raise ValueError(f"parent: expected a non-empty 1-d integer array, got {p!r}")
        n = p.size
        if ((p < -1) | (p >= n)).any():
            raise ValueError(f"parent: entries must be -1 or a node index in [0, {n})")
        if (p == np.arange(n)).any():
            raise ValueError(f"parent: node {int(np.flatnonzero(p == np.arange(n))[0])} is its own parent")
        names = tuple(str(s) for s in names) if names is not None else tuple(f"n{i}" for i in range(n))
        if len(names) != n or len(set(names)) != n:
            raise ValueError(
                f"names: expected {n} distinct names, got {len(names)} ({len(set(names))} distinct)"
            )
        # depth by walking up; a cycle never reaches a root
        depth = np.full(n, -1)
        for v in range(n):
            path, u = [], v
            while u >= 0 and depth[u] < 0:
                if u in path:
                    raise ValueError(f"parent: the graph has a cycle through node {names[u]!r}")
                path.append(u)
                u = p[u]
            base = -1 if u < 0 else depth[u]
            for k, w in enumerate(reversed(path)):
                depth[w] = base + 1 + k
        order = np.lexsort((np.arange(n), depth))
        new_of = np.empty(n, int)
        new_of[order] = np.arange(n)
        new_parent = np.where(p[order] >= 0, new_of[np.maximum(p[order], 0)], -1)
        new_depth = depth[order]
        levels = tuple(np.flatnonzero(new_depth == d) for d in range(int(new_depth.max()) + 1))
        anc = np.zeros((n, n), bool)
        for v in range(n):  # parents first: a node's ancestors are its parent and the parent's ancestors
            u = new_parent[v]
            if u >= 0:
                anc[:, v] = anc[:, u]
                anc[u, v] = True
        return cls(new_parent, tuple(names[i] for i in order), new_depth, levels, anc)

    @classmethod
    def from_edges(cls, edges: Iterable[tuple[str, str]], nodes: Iterable[str] = ()) -> Taxonomy:
        """From (parent, child) name pairs (plus isolated ``nodes``); a child with two parents is an error."""
        names: list[str] = list(dict.fromkeys(str(x) for x in nodes))
        parent_of: dict[str, str] = {}
        for a, b in edges:
            a, b = str(a), str(b)
            for x in (a, b):
                if x not in names:
                    names.append(x)
            if b in parent_of and parent_of[b] != a:
                raise ValueError(
                    f"edges: node {b!r} has two parents ({parent_of[b]!r} and {a!r}): not a tree"
                )
            parent_of[b] = a
        idx = {s: i for i, s in enumerate(names)}
        return cls.from_parents(np.array([idx[parent_of[s]] if s in parent_of else -1 for s in names]), names)

    @classmethod
    def from_networkx(cls, graph: object) -> Taxonomy:
        """From a networkx ``DiGraph`` with edges parent -> child."""
        import networkx as nx

        if not isinstance(graph, nx.DiGraph):
            raise TypeError(f"graph: expected a networkx DiGraph, got {type(graph).__name__}")
        return cls.from_edges(graph.edges(), graph.nodes())

    @classmethod
    def from_paths(cls, paths: Iterable[Sequence[str]], separator: str = "::") -> Taxonomy:
        """From label paths root-to-node (hiclass style: ``["lung", "opacity"]`` or ``"lung::opacity"``);
        a node's name is its full path, so equal leaf names under different parents stay distinct."""
        edges, nodes = [], []
        for path in paths:
            parts = path.split(separator) if isinstance(path, str) else [str(x) for x in path]
            parts = [x for x in parts if x != ""]
            full = [separator.join(parts[: k + 1]) for k in range(len(parts))]
            nodes.extend(full)
            edges.extend(itertools.pairwise(full))
        return cls.from_edges(edges, nodes)

    def check_labels(self, Y: np.ndarray, name: str = "Y") -> np.ndarray:
        """Binary labels (m, n) consistent with the taxonomy (a positive child has a positive parent).

        Inconsistent rows are reported, not fixed: the error names how many and the first one.
        """
        Y = np.asarray(Y)
        if Y.ndim != 2 or Y.shape[1] != self.n:
            raise ValueError(f"{name}: expected shape (m, {self.n}), got {Y.shape}")
        if not np.isin(Y, (0, 1)).all():
            raise ValueError(f"{name}: expected 0/1 labels")
        Y = Y.astype(np.int8)
        child = np.flatnonzero(self.parent >= 0)
        bad = (Y[:, child] == 1) & (Y[:, self.parent[child]] == 0)
        if bad.any():
            rows = np.flatnonzero(bad.any(1))
            r, c = int(rows[0]), int(child[np.flatnonzero(bad[rows[0]])[0]])
            raise ValueError(
                f"{name}: {rows.size} rows contradict the taxonomy (first: row {r}, {self.names[c]!r} = 1 "
                f"but its parent {self.names[self.parent[c]]!r} = 0); fix the labels or the taxonomy"
            )
        return Y


def random_taxonomy(depth: int, branching: tuple[int, int], rng: object = None, n_roots: int = 1) -> Taxonomy:
    """A random tree (forest of ``n_roots``) of ``depth`` levels below the roots, each node with a number of
    children uniform in ``branching``; leaves may stop early (probability 0.25 per node below depth 1)."""
    depth = int_in_range(depth, "depth", 1)
    lo, hi = (int_in_range(b, "branching", 1) for b in branching)
    if hi < lo:
        raise ValueError(f"branching: expected (lo, hi) with lo <= hi, got {branching!r}")
    rng = as_generator(rng)
    parent = [-1] * int_in_range(n_roots, "n_roots", 1)
    frontier = list(range(len(parent)))
    for d in range(depth):
        nxt = []
        for v in frontier:
            if d >= 1 and rng.random() < 0.25:
                continue
            for _ in range(int(rng.integers(lo, hi + 1))):
                parent.append(v)
                nxt.append(len(parent) - 1)
        frontier = nxt
    return Taxonomy.from_parents(np.array(parent))


# chest X-ray findings, in the hierarchy of Pham et al. (2021) over the CheXpert labels
CHEST_XRAY = (
    ("finding", "lung opacity"),
    ("lung opacity", "consolidation"),
    ("consolidation", "pneumonia"),
    ("lung opacity", "atelectasis"),
    ("lung opacity", "edema"),
    ("lung opacity", "lung lesion"),
    ("finding", "enlarged cardiomediastinum"),
    ("enlarged cardiomediastinum", "cardiomegaly"),
    ("finding", "pleural"),
    ("pleural", "pleural effusion"),
    ("pleural", "pleural other"),
    ("finding", "pneumothorax"),
    ("finding", "fracture"),
    ("finding", "support devices"),
)


def chest_xray_taxonomy() -> Taxonomy:
    """15 nodes: ``finding`` over CheXpert's findings grouped as in Pham et al. (2021)."""
    return Taxonomy.from_edges(CHEST_XRAY)
