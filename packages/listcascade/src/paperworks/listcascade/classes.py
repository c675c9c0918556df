"""Constructed finite classes on a finite domain, with their dimensions in closed form where known.

Every class is an ``(|H|, |X|)`` int64 array: row ``h`` is the hypothesis ``x -> H[h, x]`` on the domain
``X = {0, ..., |X|-1}`` with labels ``0..K-1``.

Closed forms (proved in the README's Fidelity section; the experiment checks them by exact search):

- all functions ``[K]^X`` on ``d`` points: ``DS = d`` and ``bandit DS = d (K - 1)``;
- a product class ``L_0 x ... x L_{d-1}`` (label set ``L_x`` at point ``x``): ``DS = #{x : |L_x| >= 2}``
  and ``bandit DS = sum_x (|L_x| - 1)``; with two labels per point (``|L_x| = 2``), ``bandit DS = DS = d``;
- any class in which every point carries at most two labels: ``bandit DS = DS``.

The fixed-DS family :func:`fixed_ds_family` (product classes with ``|L_x| = s`` on ``d`` points, labels
drawn from ``K``) keeps ``DS = d`` while ``bandit DS = d (s - 1)`` grows with ``s``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from paperworks.core.validate import as_generator, int_in_range

from ._validate import check_class

__all__ = [
    "MAX_CLASS_SIZE",
    "ConstructedClass",
    "all_functions",
    "fixed_ds_family",
    "product_class",
    "product_dimensions",
    "random_class",
    "random_label_sets",
    "random_subclass",
    "two_label_class",
]

MAX_CLASS_SIZE = 5_000_000  # rows of a constructed class (|H| x |X| int64 stays under ~320 MB at |X| = 8)


@dataclass(frozen=True, eq=False)
class ConstructedClass:
    """A named class with its closed-form dimensions (``None`` where no closed form is known)."""

    name: str
    hypotheses: np.ndarray = field(repr=False)
    n_labels: int
    ds: int | None = None
    bandit_ds: int | None = None
    note: str = ""

    @property
    def n_points(self) -> int:
        return int(self.hypotheses.shape[1])

    @property
    def size(self) -> int:
        return int(self.hypotheses.shape[0])


def _check_size(n: int, what: str) -> None:
    if n > MAX_CLASS_SIZE:
        raise ValueError(
            f"{what}: the class would have {n:,} hypotheses, more than the limit {MAX_CLASS_SIZE:,}"
        )


def product_class(label_sets: Sequence[Sequence[int]]) -> np.ndarray:
    """Every pattern ``(y_0, ..., y_{d-1})`` with ``y_x`` in ``label_sets[x]``: shape ``(prod |L_x|, d)``."""
    if not isinstance(label_sets, Sequence) or len(label_sets) == 0:
        raise ValueError(f"label_sets: expected a non-empty sequence of label sets, got {label_sets!r}")
    sets = []
    for x, s in enumerate(label_sets):
        vals = sorted({int_in_range(v, f"label_sets[{x}]", 0) for v in s})
        if not vals:
            raise ValueError(f"label_sets[{x}]: expected at least one label")
        sets.append(np.array(vals, dtype=np.int64))
    sizes = [len(s) for s in sets]
    _check_size(int(np.prod(sizes, dtype=float)), "product_class")
    total = int(np.prod(sizes))
    out = np.empty((total, len(sets)), dtype=np.int64)
    inner = total
    for x, vals in enumerate(sets):  # column x cycles through its labels, the last column fastest
        inner //= sizes[x]
        out[:, x] = np.tile(np.repeat(vals, inner), total // (inner * sizes[x]))
    return out


def all_functions(n_points: int, n_labels: int) -> np.ndarray:
    """All ``K^d`` functions from ``d = n_points`` points to ``K = n_labels`` labels, shape ``(K^d, d)``."""
    d = int_in_range(n_points, "n_points", 1)
    k = int_in_range(n_labels, "n_labels", 1)
    _check_size(k**d, "all_functions")
    return product_class([range(k)] * d)


def product_dimensions(label_sets: Sequence[Sequence[int]]) -> tuple[int, int]:
    """Closed forms of a product class: ``(DS, bandit DS) = (#{x: |L_x| >= 2}, sum_x (|L_x| - 1))``."""
    sizes = [len(set(s)) for s in label_sets]
    return sum(s >= 2 for s in sizes), sum(s - 1 for s in sizes)


def random_label_sets(
    n_points: int, n_labels: int, size: int, rng: object = None
) -> tuple[tuple[int, ...], ...]:
    """For each of ``n_points`` points, ``size`` distinct labels drawn uniformly from ``0..n_labels-1``."""
    d = int_in_range(n_points, "n_points", 1)
    k = int_in_range(n_labels, "n_labels", 1)
    s = int_in_range(size, "size", 1, k)
    g = as_generator(rng)
    return tuple(tuple(sorted(int(v) for v in g.choice(k, size=s, replace=False))) for _ in range(d))


def two_label_class(n_points: int, n_labels: int, rng: object = None) -> np.ndarray:
    """The product of a random pair of labels (out of ``n_labels``) at each point: ``2^d`` hypotheses."""
    return product_class(random_label_sets(n_points, n_labels, 2, rng))


def random_class(n_points: int, n_labels: int, n_hypotheses: int, rng: object = None) -> np.ndarray:
    """``n_hypotheses`` distinct functions drawn uniformly without replacement from ``[K]^d``.

    Generative model: the class is a uniform random subset of size ``|H|`` of all functions.
    """
    d = int_in_range(n_points, "n_points", 1)
    k = int_in_range(n_labels, "n_labels", 1)
    total = k**d
    m = int_in_range(n_hypotheses, "n_hypotheses", 1, min(total, MAX_CLASS_SIZE))
    g = as_generator(rng)
    codes = (
        np.sort(g.choice(total, size=m, replace=False)) if total <= 10**7 else _distinct_codes(g, total, m)
    )
    return (codes[:, None] // (k ** np.arange(d, dtype=np.int64))[None, :]) % k


def _distinct_codes(g: np.random.Generator, total: int, m: int) -> np.ndarray:
    out: set[int] = set()
    while len(out) < m:
        out.update(int(c) for c in g.integers(0, total, size=2 * (m - len(out))))
    return np.sort(np.fromiter(out, dtype=np.int64))[:m]


def random_subclass(hypotheses: object, n_hypotheses: int, rng: object = None) -> np.ndarray:
    """``n_hypotheses`` distinct rows of ``hypotheses`` drawn uniformly without replacement."""
    h, _ = check_class(hypotheses)
    m = int_in_range(n_hypotheses, "n_hypotheses", 1, h.shape[0])
    g = as_generator(rng)
    return h[np.sort(g.choice(h.shape[0], size=m, replace=False))]


def fixed_ds_family(
    n_points: int, n_labels: int, sizes: Sequence[int], rng: object = None
) -> list[ConstructedClass]:
    """Product classes with ``s`` labels (drawn from ``n_labels``) at each of ``n_points`` points, one per
    ``s`` in ``sizes``: ``DS = n_points`` for every ``s >= 2``, ``bandit DS = n_points (s - 1)``."""
    g = as_generator(rng)
    out = []
    for s in sizes:
        sets = random_label_sets(n_points, n_labels, s, g)
        ds, bds = product_dimensions(sets)
        out.append(
            ConstructedClass(
                f"family_d{n_points}_s{s}_K{n_labels}",
                product_class(sets),
                n_labels,
                ds,
                bds,
                note=f"product of {s} random labels (of {n_labels}) at each of {n_points} points",
            )
        )
    return out
