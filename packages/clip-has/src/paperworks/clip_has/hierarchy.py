"""Concept trees: parent arrays, networkx DiGraphs, generated balanced and unbalanced hierarchies.

A :class:`Hierarchy` is a rooted tree over ``n`` concepts numbered ``0 .. n-1``, stored as a parent
array (``parents[root] == -1``). It precomputes a depth-first pre-order (``tin``/``tout``: node ``d``
is in the subtree of ``c`` iff ``tin[c] <= tin[d] <= tout[c]``), so subtree and ancestor tests are
vectorised comparisons instead of graph walks.

Off-branch concepts (our reading, README Fidelity): for a concept ``c``, the concepts that are neither
``c``, its descendants nor its ancestors. With this reading the root has no off-branch concept, and
the concepts whose HAS margin is defined (:attr:`Hierarchy.evaluated`) are the non-leaf concepts that
have at least one off-branch concept.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from paperworks.core.validate import as_generator, positive_int

__all__ = ["Hierarchy", "as_hierarchy", "balanced_tree", "random_tree"]


class Hierarchy:
    """A rooted concept tree given by a parent array.

    Parameters
    ----------
    parents:
        int sequence of length ``n``; ``parents[c]`` is the parent of concept ``c`` and exactly one
        entry (the root) is ``-1``. Cycles, a second root and out-of-range parents raise ``ValueError``.
    names:
        optional concept names (length ``n``, distinct); default ``"0" .. "n-1"``.
    """

    def __init__(self, parents: Sequence[int] | np.ndarray, names: Sequence[Hashable] | None = None):
        p = np.asarray(parents)
        if p.ndim != 1 or p.size == 0:
            raise ValueError(f"parents: expected a non-empty 1-d int array, got shape {p.shape}")
        if not np.issubdtype(p.dtype, np.integer):
            if np.issubdtype(p.dtype, np.floating) and np.all(np.isfinite(p)) and np.all(p == np.round(p)):
                p = p.astype(np.int64)
            else:
                raise ValueError(f"parents: expected integers, got dtype {p.dtype}")
        p = p.astype(np.int64)
        n = p.size
        roots = np.flatnonzero(p == -1)
        if roots.size != 1:
            raise ValueError(f"parents: expected exactly one root (-1), got {roots.size}: not a tree")
        bad = np.flatnonzero((p < -1) | (p >= n))
        if bad.size:
            raise ValueError(f"parents: node {int(bad[0])} has parent {int(p[bad[0]])}, outside 0..{n - 1}")
        if np.any(p == np.arange(n)):
            raise ValueError(f"parents: node {int(np.flatnonzero(p == np.arange(n))[0])} is its own parent")
        self._parents = p
        self._parents.setflags(write=False)
        self.root = int(roots[0])
        children: list[list[int]] = [[] for _ in range(n)]
        for c, par in enumerate(p):
            if par >= 0:
                children[par].append(c)
        self.children: tuple[tuple[int, ...], ...] = tuple(tuple(ch) for ch in children)
        # iterative DFS pre-order from the root; nodes not reached lie on a cycle
        order: list[int] = []
        depth = np.full(n, -1, dtype=np.int64)
        depth[self.root] = 0
        stack = [self.root]
        while stack:
            c = stack.pop()
            order.append(c)
            for ch in reversed(children[c]):
                depth[ch] = depth[c] + 1
                stack.append(ch)
        if len(order) != n:
            missing = sorted(set(range(n)) - set(order))
            raise ValueError(f"parents: nodes {missing[:5]} are not reachable from the root: a cycle")
        self.order = np.asarray(order, dtype=np.int64)
        tin = np.empty(n, dtype=np.int64)
        tin[self.order] = np.arange(n)
        size = np.ones(n, dtype=np.int64)
        for c in reversed(order):  # children before parents
            if p[c] >= 0:
                size[p[c]] += size[c]
        self.tin = tin
        self.tout = tin + size - 1
        self.depth = depth
        self.subtree_size = size
        self.is_leaf = size == 1
        self.leaves = np.flatnonzero(self.is_leaf)
        for a in (self.order, self.tin, self.tout, self.depth, self.subtree_size, self.is_leaf, self.leaves):
            a.setflags(write=False)
        if names is None:
            self.names: tuple[Hashable, ...] = tuple(str(i) for i in range(n))
        else:
            names = tuple(names)
            if len(names) != n or len(set(names)) != n:
                raise ValueError(
                    f"names: expected {n} distinct names, got {len(names)} ({len(set(names))} distinct)"
                )
            self.names = names

    # ------------------------------------------------------------------ basic structure
    @property
    def parents(self) -> np.ndarray:
        """(n,) int64 parent array, ``-1`` at the root (read-only)."""
        return self._parents

    @property
    def n_nodes(self) -> int:
        return int(self._parents.size)

    @property
    def height(self) -> int:
        """Depth of the deepest leaf (root at depth 0)."""
        return int(self.depth.max())

    def __len__(self) -> int:
        return self.n_nodes

    def __repr__(self) -> str:
        return f"Hierarchy(n_nodes={self.n_nodes}, leaves={self.leaves.size}, height={self.height})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hierarchy) and np.array_equal(self._parents, other._parents)

    def __hash__(self) -> int:
        return hash(self._parents.tobytes())

    def ancestors(self, node: int, *, inclusive: bool = False) -> list[int]:
        """Ancestors of ``node`` from its parent up to the root (``node`` first if ``inclusive``)."""
        c = self._check_node(node)
        out = [c] if inclusive else []
        while self._parents[c] >= 0:
            c = int(self._parents[c])
            out.append(c)
        return out

    def descendants(self, node: int) -> np.ndarray:
        """Strict descendants of ``node`` (pre-order)."""
        c = self._check_node(node)
        return self.order[self.tin[c] + 1 : self.tout[c] + 1].copy()

    def descendant_mask(self) -> np.ndarray:
        """(n, n) bool: ``[c, d]`` is True when ``d`` is a strict descendant of ``c``."""
        tc, td = self.tin[:, None], self.tin[None, :]
        return (td > tc) & (td <= self.tout[:, None])

    def subtree_matrix(self) -> np.ndarray:
        """(n, n) float64: ``[c, l] = 1`` when ``l`` lies in the subtree of ``c`` (``c`` included)."""
        tc, tl = self.tin[:, None], self.tin[None, :]
        return ((tl >= tc) & (tl <= self.tout[:, None])).astype(np.float64)

    def off_branch_mask(self, off_branch: str = "disjoint") -> np.ndarray:
        """(n, n) bool: ``[c, o]`` True when ``o`` is off-branch for ``c``.

        ``"disjoint"`` (default): neither ``c``, a descendant nor an ancestor of ``c``;
        ``"complement"``: outside the subtree of ``c`` (ancestors count as off-branch).
        """
        desc = self.descendant_mask()
        off = ~desc & ~np.eye(self.n_nodes, dtype=bool)
        if off_branch == "disjoint":
            off &= ~desc.T
        elif off_branch != "complement":
            raise ValueError(f"off_branch: expected 'disjoint' or 'complement', got {off_branch!r}")
        return off

    def evaluated(self, off_branch: str = "disjoint") -> np.ndarray:
        """Concepts whose HAS margin is defined: non-leaf, with at least one off-branch concept."""
        # off-branch counts without the (n, n) masks: all but the subtree, less the ancestors (= depth)
        outside = self.n_nodes - self.subtree_size
        if off_branch == "disjoint":
            outside = outside - self.depth
        elif off_branch != "complement":
            raise ValueError(f"off_branch: expected 'disjoint' or 'complement', got {off_branch!r}")
        return np.flatnonzero(~self.is_leaf & (outside > 0))

    def _check_node(self, node: object) -> int:
        if (
            isinstance(node, bool)
            or not isinstance(node, int | np.integer)
            or not 0 <= int(node) < self.n_nodes
        ):
            raise ValueError(f"node: expected an int in 0..{self.n_nodes - 1}, got {node!r}")
        return int(node)

    # ------------------------------------------------------------------ networkx
    @classmethod
    def from_networkx(cls, graph: Any) -> Hierarchy:
        """A tree from a networkx ``DiGraph`` with edges parent -> child (node labels become ``names``).

        Raises ``ValueError`` for an undirected graph, a node with two parents, a cycle, several roots.
        """
        import networkx as nx

        if not isinstance(graph, nx.DiGraph) or isinstance(graph, nx.MultiDiGraph):
            raise ValueError(
                f"graph: expected a networkx DiGraph (parent -> child), got {type(graph).__name__}"
            )
        if graph.number_of_nodes() == 0:
            raise ValueError("graph: expected a non-empty tree, got an empty graph")
        two = [v for v, k in graph.in_degree() if k > 1]
        if two:
            raise ValueError(f"graph: node {two[0]!r} has {graph.in_degree(two[0])} parents: not a tree")
        if not nx.is_directed_acyclic_graph(graph):
            raise ValueError("graph: has a cycle: not a tree")
        names = list(graph.nodes)
        index = {v: i for i, v in enumerate(names)}
        parents = np.full(len(names), -1, dtype=np.int64)
        for u, v in graph.edges:
            parents[index[v]] = index[u]
        return cls(parents, names=names)

    def to_networkx(self) -> Any:
        """A networkx ``DiGraph`` with edges parent -> child, labelled by ``names``."""
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(self.names)
        g.add_edges_from((self.names[p], self.names[c]) for c, p in enumerate(self._parents) if p >= 0)
        return g


def as_hierarchy(tree: object, name: str = "tree") -> Hierarchy:
    """A :class:`Hierarchy` from a Hierarchy, a parent array or a networkx DiGraph."""
    if isinstance(tree, Hierarchy):
        return tree
    if type(tree).__module__.startswith("networkx"):
        return Hierarchy.from_networkx(tree)
    if isinstance(tree, np.ndarray | list | tuple):
        return Hierarchy(tree)
    raise ValueError(
        f"{name}: expected a Hierarchy, a parent array or a networkx DiGraph, got {type(tree).__name__}"
    )


def balanced_tree(depth: int, branching: int) -> Hierarchy:
    """The complete tree with ``branching`` children per non-leaf and leaves at ``depth`` (root: 0)."""
    positive_int(depth, "depth")
    positive_int(branching, "branching")
    parents = [-1]
    frontier = [0]
    for _ in range(depth):
        nxt = []
        for p in frontier:
            for _ in range(branching):
                parents.append(p)
                nxt.append(len(parents) - 1)
        frontier = nxt
    return Hierarchy(parents)


def random_tree(
    rng: object,
    *,
    depth: int = 3,
    branching: tuple[int, int] = (2, 4),
    leaf_prob: float = 0.0,
    max_nodes: int = 400,
) -> Hierarchy:
    """A random tree of height ``depth``: every non-leaf gets ``U{branching[0]..branching[1]}`` children.

    ``leaf_prob`` > 0 makes it unbalanced: each node at depth 2 .. depth-1 stops as a leaf with that
    probability (at least one path always reaches ``depth``). Trees above ``max_nodes`` are redrawn.
    """
    gen = as_generator(rng)
    positive_int(depth, "depth")
    lo, hi = branching
    if not 1 <= lo <= hi:
        raise ValueError(f"branching: expected 1 <= lo <= hi, got {branching}")
    if not 0.0 <= leaf_prob < 1.0:
        raise ValueError(f"leaf_prob: expected a number in [0, 1), got {leaf_prob}")
    for _ in range(1000):
        parents, depths = [-1], [0]
        frontier = [0]
        deepest_ok = False
        while frontier:
            nxt = []
            for p in frontier:
                d = depths[p]
                if d == depth:
                    deepest_ok = True
                    continue
                if d >= 2 and gen.random() < leaf_prob:
                    continue
                for _ in range(int(gen.integers(lo, hi + 1))):
                    parents.append(p)
                    depths.append(d + 1)
                    nxt.append(len(parents) - 1)
            frontier = nxt
        if deepest_ok and len(parents) <= max_nodes:
            return Hierarchy(parents)
    raise ValueError(f"max_nodes: no tree of depth {depth} with branching {branching} fits {max_nodes} nodes")
