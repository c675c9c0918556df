"""DS dimension and bandit DS dimension of a finite class, by exact search, with the witness structure.

Definitions (the DS dimension as in Daniely and Shalev-Shwartz 2014; the pseudo-box as we read the
abstract of arXiv 2605.25678, see the README's Fidelity section):

- For points ``S = (x_1, ..., x_d)`` and patterns ``B`` in ``H|_S``, two patterns are *i-neighbours* when
  they differ at coordinate ``i`` only.
- ``B`` is a *pseudo-box* with neighbour counts ``(k_1, ..., k_d)`` (all ``k_i >= 1``) when every pattern of
  ``B`` has at least ``k_i`` distinct i-neighbours in ``B``, for every ``i``. With every ``k_i = 1`` it is a
  *pseudo-cube*.
- ``DS(H)`` is the largest ``d`` with a pseudo-cube in some ``H|_S``, ``|S| = d``; the *bandit DS
  dimension* is the largest ``k_1 + ... + k_d`` over pseudo-boxes. So ``DS <= bandit DS <= (K - 1) DS``.

Search. The i-neighbours of a pattern ``b`` in ``B`` are the other members of its *i-fibre* (the patterns
of ``B`` that agree with ``b`` off coordinate ``i``), so ``B`` is a ``k``-box iff every i-fibre has at least
``k_i + 1`` members. The union of two ``k``-boxes is a ``k``-box, so ``H|_S`` holds a unique largest one,
found by peeling (repeatedly drop patterns in too-small fibres); a ``k``-box exists iff it is non-empty.
Feasibility is downward closed in ``k`` (lowering a count keeps a box; projecting a box off a coordinate
keeps the other counts), so a depth-first branch and bound over the points (each given a count from its
largest possible value, the number of its labels minus one, down to 0 = "not in S") finds the optimum:
a branch is cut when the counts so far plus the largest possible counts of the points left cannot beat
the best found, and the peeling of a child starts from the lift of its parent's box. Each peeling is
one search *node*; ``max_nodes`` bounds the work (:class:`SearchLimitError`, never a silent hang).

:func:`brute_force_dimensions` is an independent reference for tiny classes: it enumerates every subset
of every projection and counts neighbours pairwise.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from paperworks.core.validate import int_in_range

from ._arrays import group_ids, largest_group, unique_sorted
from ._validate import check_class

__all__ = [
    "DEFAULT_MAX_NODES",
    "MAX_SEARCH_SPACE",
    "Dimension",
    "PseudoBox",
    "SearchLimitError",
    "bandit_ds_dimension",
    "brute_force_dimensions",
    "ds_dimension",
    "neighbour_counts",
    "search_space_size",
]

DEFAULT_MAX_NODES = 200_000  # peelings per search
MAX_SEARCH_SPACE = 10**12  # prod over points of (labels at the point): the count vectors a search could visit
MAX_PATTERNS = 8_000_000  # |H| rows searched
_LOCAL_BOUND_ROWS = 200_000  # node-level bound from the consistent rows up to this many rows
_BINCOUNT_LIMIT = 1 << 25  # fibre sizes by bincount while the code range stays under this


class SearchLimitError(ValueError):
    """The requested search exceeds a stated limit (points, labels, patterns or search nodes)."""


@dataclass(frozen=True, eq=False)
class PseudoBox:
    """A witness: points ``S`` (domain indices), neighbour counts ``k_i >= 1`` and patterns ``B`` in ``H|_S``.

    ``patterns``: shape ``(|B|, |S|)``, column ``i`` is the label at ``points[i]``. ``counts[i]`` is the
    smallest number of i-neighbours of a pattern of ``B`` (so it is a pseudo-cube when every count >= 1).
    """

    points: tuple[int, ...]
    counts: tuple[int, ...]
    patterns: np.ndarray = field(repr=False)

    @property
    def dimension(self) -> int:
        """``k_1 + ... + k_d`` (the bandit DS value of this box)."""
        return int(sum(self.counts))

    @property
    def n_patterns(self) -> int:
        return int(self.patterns.shape[0])

    def check(self, hypotheses: object) -> None:
        """Raise ``ValueError`` unless this is a valid box of ``hypotheses``: its patterns are distinct
        restrictions of hypotheses to ``points`` and every pattern has ``counts[i]`` i-neighbours."""
        h, _ = check_class(hypotheses)
        pts = list(self.points)
        if len(set(pts)) != len(pts) or any(not 0 <= p < h.shape[1] for p in pts):
            raise ValueError(f"witness: points {self.points} are not distinct points of the domain")
        b = np.asarray(self.patterns)
        if b.ndim != 2 or b.shape[1] != len(pts) or b.shape[0] == 0:
            raise ValueError(f"witness: patterns of shape {b.shape} for {len(pts)} points")
        if b.dtype.kind not in "iu" or (b.size and b.min() < 0):
            raise ValueError("witness: patterns must be non-negative integer labels")
        if len(np.unique(b, axis=0)) != len(b):
            raise ValueError("witness: repeated patterns")
        base = max(int(h.max()), int(b.max()) if b.size else 0, 1) + 1
        weights = base ** np.arange(len(pts), dtype=np.int64) if float(base) ** len(pts) < 2.0**62 else None
        if weights is not None:
            inside = np.isin(b @ weights, h[:, pts] @ weights)
        else:
            proj = np.unique(h[:, pts], axis=0)
            inside = (b[:, None, :] == proj[None, :, :]).all(axis=2).any(axis=1)
        if not inside.all():
            raise ValueError(
                f"witness: {int((~inside).sum())} pattern(s) are not in H restricted to the points"
            )
        if len(pts):
            got = neighbour_counts(b).min(axis=0)
            if np.any(got < np.asarray(self.counts)) or np.any(np.asarray(self.counts) < 1):
                raise ValueError(f"witness: neighbour counts {tuple(got)} do not meet {self.counts}")


@dataclass(frozen=True, eq=False)
class Dimension:
    """A dimension's value, its witness and the number of search nodes (peelings) it took."""

    value: int
    witness: PseudoBox
    nodes: int

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value


def neighbour_counts(patterns: object) -> np.ndarray:
    """For distinct patterns ``B`` of shape ``(m, d)``: ``out[b, i]`` = the number of i-neighbours of ``b``
    in ``B`` (patterns of ``B`` that differ from ``b`` at coordinate ``i`` only).

    Small ``B``: pairwise, ``O(m^2 d)``; from ``m > 512``: the size of ``b``'s i-fibre minus one (the
    patterns that agree with ``b`` off coordinate ``i``), ``O(m d log m)`` and the same numbers.
    """
    b = np.asarray(patterns)
    if b.ndim != 2:
        raise ValueError(f"patterns: expected a 2-d array, got shape {b.shape}")
    m, d = b.shape
    if m <= 512:
        diff = b[:, None, :] != b[None, :, :]  # (m, m, d)
        exactly_one = diff.sum(axis=2) == 1  # (m, m)
        return (diff & exactly_one[:, :, None]).sum(axis=1)
    out = np.empty((m, d), dtype=np.int64)
    for i in range(d):
        rest = np.delete(b, i, axis=1)
        base = int(rest.max()) + 1 if rest.size else 1
        if rest.shape[1] and float(base) ** rest.shape[1] < 2.0**62:
            keys = rest @ (base ** np.arange(rest.shape[1], dtype=np.int64))
            ids, n = group_ids(keys)
        else:
            _, inv = np.unique(rest, axis=0, return_inverse=True)
            ids, n = inv.ravel(), int(inv.max()) + 1
        out[:, i] = np.bincount(ids, minlength=n)[ids] - 1
    return out


def search_space_size(hypotheses: object) -> int:
    """``prod_x (number of labels H takes at x)``: the count vectors an exhaustive search would visit."""
    h, _ = check_class(hypotheses)
    return _search_space(h)


def _search_space(h: np.ndarray) -> int:
    out = 1
    for j in range(h.shape[1]):
        out *= int((np.bincount(h[:, j]) > 0).sum())
    return out


class _Search:
    """Branch and bound over count vectors; boxes are sets of pattern codes (mixed radix ``K``)."""

    def __init__(self, h: np.ndarray, k: int, max_nodes: int, cube: bool, where: str) -> None:
        self.h, self.k, self.n = h, max(k, 1), h.shape[1]
        self.pow = self.k ** np.arange(self.n, dtype=np.int64)
        self.space = int(self.k) ** self.n  # codes lie in 0..space-1
        self.max_nodes, self.cube, self.where = max_nodes, cube, where
        self.nodes = 0
        self._codes: dict[tuple[int, ...], np.ndarray] = {}
        self._cached_rows = 0
        labels = [int((np.bincount(h[:, j]) > 0).sum()) for j in range(self.n)]
        self.kmax = [min(1, c - 1) if cube else c - 1 for c in labels]
        # points with larger possible counts first: good boxes are found early, so the bound cuts more
        self.order = sorted(range(self.n), key=lambda j: (-self.kmax[j], j))
        suffix = [0] * (self.n + 1)
        for pos in range(self.n - 1, -1, -1):
            suffix[pos] = suffix[pos + 1] + self.kmax[self.order[pos]]
        self.suffix = suffix
        self.best_value = 0
        self.best: tuple[tuple[int, ...], tuple[int, ...], np.ndarray] = ((), (), np.zeros(1, np.int64))

    def projection(self, support: tuple[int, ...], row_codes: np.ndarray) -> np.ndarray:
        """Sorted distinct codes of ``H`` restricted to ``support`` (``row_codes``: each row's code)."""
        key = tuple(sorted(support))
        got = self._codes.get(key)
        if got is None:
            got = unique_sorted(row_codes)
            if self._cached_rows + got.size <= 4 * MAX_PATTERNS:
                self._codes[key] = got
                self._cached_rows += got.size
        return got

    def digit(self, codes: np.ndarray, j: int) -> np.ndarray:
        return (codes // self.pow[j]) % self.k

    def fibre_sizes(self, codes: np.ndarray, j: int) -> np.ndarray:
        """For each code, the size of its j-fibre within ``codes`` (codes that agree off coordinate j)."""
        keys = codes - self.digit(codes, j) * self.pow[j]
        if self.space <= _BINCOUNT_LIMIT and keys.size * 64 >= self.space:
            return np.bincount(keys, minlength=1)[keys]
        ids, n = group_ids(keys)
        return np.bincount(ids, minlength=n)[ids]

    def fibres(self, codes: np.ndarray, support: list[int]) -> list[tuple[np.ndarray, int]]:
        """For each point of ``support``: the fibre id of every code of ``codes`` and the number of fibres."""
        out = []
        dense = self.space <= _BINCOUNT_LIMIT and codes.size * 64 >= self.space  # codes as ids: no sort
        for j in support:
            keys = codes - self.digit(codes, j) * self.pow[j]
            if dense:
                out.append((keys, self.space))
                continue
            out.append(group_ids(keys))
        return out

    def peel(self, codes: np.ndarray, fibres: list[tuple[np.ndarray, int]], counts: list[int]) -> np.ndarray:
        """The largest box with ``counts`` inside the code set ``codes`` (possibly empty); ``fibres``: from
        :meth:`fibres` on ``codes`` (patterns in too-small fibres are dropped until none is)."""
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise SearchLimitError(
                f"{self.where}: the search exceeded max_nodes={self.max_nodes:,} peelings "
                f"({self.h.shape[0]:,} patterns on {self.n} points, {self.k} labels); raise max_nodes or "
                "search a smaller class"
            )
        idx = np.arange(codes.size)
        while idx.size:
            before = idx.size
            for (fid, nf), kj in zip(fibres, counts):
                f = fid[idx]
                idx = idx[np.bincount(f, minlength=nf)[f] >= kj + 1]
                if not idx.size:
                    break
            if idx.size == before:
                break
        return codes[idx]

    def run(self) -> None:
        # Shortcut: if H itself, on every point that has two labels, is a box with the largest possible
        # counts (as for product classes), it attains the upper bound and no search is needed.
        full = [j for j in self.order if self.kmax[j] >= 1]
        if full:
            codes = unique_sorted(self.h[:, full] @ self.pow[full])
            box = self.peel(codes, self.fibres(codes, full), [self.kmax[j] for j in full])
            if box.size:
                self.best_value = sum(self.kmax[j] for j in full)
                self.best = (tuple(full), tuple(self.kmax[j] for j in full), box)
                return
        self._dfs(0, [], [], np.zeros(1, dtype=np.int64), 0, np.zeros(self.h.shape[0], dtype=np.int64))

    def _local(self, pos: int, core: np.ndarray, rows: np.ndarray) -> tuple[list[int], float]:
        """Bounds for the points ``order[pos:]`` below this node: the largest possible count of each (its
        labels minus one among the rows consistent with the box) and a budget ``log r``.

        ``r`` is the most rows of ``H`` that extend one pattern ``c`` of the box. In any box ``B'`` below
        this node, the patterns projecting to one ``c`` form a box on the remaining points with their
        counts (a neighbour at a remaining point projects to the same ``c``), and a box with counts
        ``k_l`` has at least ``prod (k_l + 1)`` patterns (induction on the points: fixing the label at one
        point leaves a box on the others, and each pattern's neighbours there show ``k + 1`` labels), so
        ``sum log(k_l + 1) <= log r``. Both bounds hold for the whole subtree (children keep fewer rows).
        """
        rest = self.order[pos:]
        if self.h.shape[0] > _LOCAL_BOUND_ROWS:
            return [self.kmax[j] for j in rest], float(np.log(self.h.shape[0]))
        inside = np.isin(rows, core)
        sub = self.h[inside][:, rest]
        seen = np.bincount((sub + self.k * np.arange(len(rest))).ravel(), minlength=self.k * len(rest))
        labels = (seen.reshape(len(rest), self.k) > 0).sum(axis=1)
        kmax = [min(1, int(c) - 1) if self.cube else int(c) - 1 for c in labels]
        r = max(largest_group(rows[inside]), 1)
        return kmax, float(np.log(r))

    def _dfs(
        self, pos: int, support: list[int], counts: list[int], core: np.ndarray, total: int, rows: np.ndarray
    ) -> None:
        """``core``: the box (codes) for ``support``/``counts``; ``rows``: each row's code on ``support``."""
        if pos == self.n or total + self.suffix[pos] <= self.best_value:
            return
        local, budget = self._local(pos, core, rows)
        budget += 1e-9
        if total + _knapsack(local, budget) <= self.best_value:
            return
        j = self.order[pos]
        child_support = [*support, j]
        if local[0] >= 1:
            child_rows = rows + self.h[:, j] * self.pow[j]
            cand = self.projection(tuple(child_support), child_rows)
            lifted = cand[np.isin(cand - self.digit(cand, j) * self.pow[j], core)]
            fibres = self.fibres(lifted, child_support)
            for v in range(local[0], 0, -1):
                if total + v + _knapsack(local[1:], budget - np.log1p(v)) <= self.best_value:
                    continue  # a smaller v leaves more of the budget to the points after j
                box = self.peel(lifted, fibres, [*counts, v])
                if box.size:
                    if total + v > self.best_value:
                        self.best_value = total + v
                        self.best = (tuple(child_support), (*counts, v), box)
                    self._dfs(pos + 1, child_support, [*counts, v], box, total + v, child_rows)
            del child_rows
        self._dfs(pos + 1, support, counts, core, total, rows)

    def witness(self) -> PseudoBox:
        support, _, codes = self.best
        order = sorted(range(len(support)), key=lambda i: support[i])
        pts = tuple(int(support[i]) for i in order)
        if not pts:
            return PseudoBox((), (), np.zeros((1, 0), dtype=np.int64))
        pats = np.empty((codes.size, len(pts)), dtype=np.int64)
        for i, p in enumerate(pts):
            pats[:, i] = self.digit(codes, p)
        got = [int(self.fibre_sizes(codes, p).min()) - 1 for p in pts]
        return PseudoBox(pts, tuple(got), pats)


def _knapsack(kmax: list[int], budget: float) -> float:
    """Upper bound on ``sum k_l`` over ``0 <= k_l <= kmax[l]`` with ``sum log(k_l + 1) <= budget``.

    ``log(k + 1) / k`` falls with ``k``, so any choice costs at least the fraction ``k_l / kmax_l`` of the
    full item ``(value kmax_l, weight log(kmax_l + 1))``: the fractional knapsack over full items bounds it.
    """
    if budget <= 0:
        return 0.0
    items = sorted((np.log1p(k) / k, k) for k in kmax if k > 0)
    out = 0.0
    for ratio, k in items:
        w = ratio * k
        if w <= budget:
            out += k
            budget -= w
        else:
            return out + budget / ratio
    return out


def _search(hypotheses: object, n_labels: int | None, max_nodes: int, cube: bool, where: str) -> Dimension:
    h, k = check_class(hypotheses, n_labels=n_labels)
    max_nodes = int_in_range(max_nodes, "max_nodes", 1)
    if h.shape[0] > MAX_PATTERNS:
        raise SearchLimitError(f"{where}: {h.shape[0]:,} hypotheses exceed the limit of {MAX_PATTERNS:,}")
    if k ** h.shape[1] >= 2**62:
        raise SearchLimitError(f"{where}: K^|X| = {k}^{h.shape[1]} does not fit the int64 pattern codes")
    space = _search_space(h)
    if not cube and space > MAX_SEARCH_SPACE:
        raise SearchLimitError(
            f"{where}: the search space (prod over points of the labels there) is {space:.3g}, above the "
            f"stated limit {MAX_SEARCH_SPACE:.0e}"
        )
    s = _Search(h, k, max_nodes, cube, where)
    s.run()
    w = s.witness()
    value = len(w.points) if cube else w.dimension
    return Dimension(int(value), w, s.nodes)


def ds_dimension(
    hypotheses: object, *, n_labels: int | None = None, max_nodes: int = DEFAULT_MAX_NODES
) -> Dimension:
    """The DS dimension of a finite class and a pseudo-cube witnessing it.

    ``hypotheses``: ``(|H|, |X|)`` integer labels in ``0..K-1``. Returns a :class:`Dimension` whose
    ``witness`` is a :class:`PseudoBox` with every count ``>= 1`` on ``value`` points. Raises
    :class:`SearchLimitError` when the search needs more than ``max_nodes`` peelings.
    """
    return _search(hypotheses, n_labels, max_nodes, True, "ds_dimension")


def bandit_ds_dimension(
    hypotheses: object, *, n_labels: int | None = None, max_nodes: int = DEFAULT_MAX_NODES
) -> Dimension:
    """The bandit DS dimension: the largest ``k_1 + ... + k_d`` over pseudo-boxes, with the witness box.

    ``hypotheses``: ``(|H|, |X|)`` integer labels in ``0..K-1``. Raises :class:`SearchLimitError` when the
    search space (``prod_x`` labels at ``x``) exceeds :data:`MAX_SEARCH_SPACE` or the search needs more
    than ``max_nodes`` peelings.
    """
    return _search(hypotheses, n_labels, max_nodes, False, "bandit_ds_dimension")


def brute_force_dimensions(hypotheses: object, *, max_patterns: int = 14) -> tuple[int, int]:
    """``(DS, bandit DS)`` by enumerating every non-empty subset ``B`` of every projection ``H|_S``.

    Independent of the search above: neighbours are counted pairwise (:func:`neighbour_counts` on all
    subsets at once), no fibres, no peeling, no bound. ``O(2^|X| 2^p p^2 |X|)`` with ``p`` the largest
    projection; raises :class:`SearchLimitError` when some projection has more than ``max_patterns``
    distinct patterns.
    """
    h, _ = check_class(hypotheses)
    max_patterns = int_in_range(max_patterns, "max_patterns", 1, 20)
    n = h.shape[1]
    ds = bds = 0
    for r in range(1, n + 1):
        for support in itertools.combinations(range(n), r):
            p = np.unique(h[:, list(support)], axis=0)
            m = p.shape[0]
            if m > max_patterns:
                raise SearchLimitError(
                    f"brute_force_dimensions: H restricted to points {support} has {m} patterns, above "
                    f"max_patterns={max_patterns}"
                )
            if m < 2:
                continue
            diff = p[:, None, :] != p[None, :, :]
            one = diff.sum(axis=2) == 1
            nb = (diff & one[:, :, None]).astype(np.int64)  # (m, m, r): q is an i-neighbour of b
            subsets = ((np.arange(1, 2**m)[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)  # (S, m)
            # within each subset: neighbours of each pattern at each coordinate, then min over members
            cnt = np.einsum("sq,bqi->sbi", subsets.astype(np.int64), nb)
            big = np.iinfo(np.int64).max
            k = np.where(subsets[:, :, None], cnt, big).min(axis=1)  # (S, r)
            bds = max(bds, int(k.sum(axis=1).max()))
            if r > ds and bool((k >= 1).all(axis=1).any()):
                ds = r
    return ds, bds
