"""Checks at the public boundary: a finite class as an integer array of label patterns, points, labels."""

from __future__ import annotations

import numbers

import numpy as np

from paperworks.core.validate import finite_array, int_in_range

from ._arrays import first_index

__all__ = ["NonRealizableError", "check_bool", "check_class", "check_label", "check_point", "check_target"]


class NonRealizableError(ValueError):
    """The feedback (or a given target) is inconsistent with every hypothesis of the class."""


def check_class(
    hypotheses: object, name: str = "hypotheses", n_labels: int | None = None, *, unique: bool = True
) -> tuple[np.ndarray, int]:
    """A finite class ``H``: an ``(|H|, |X|)`` int64 array of label patterns, and its number of labels ``K``.

    Row ``h`` is the hypothesis ``x -> H[h, x]`` on the domain ``X = {0, ..., |X|-1}``; labels are
    ``0..K-1`` (``K = n_labels`` when given, else ``max label + 1``). ``unique``: drop repeated rows (a class
    is a set). Empty or ragged arrays, non-integers and labels outside ``0..K-1`` raise, naming ``name``.
    """
    arr = finite_array(hypotheses, name, ndim=2, dtype_kind="i")
    if arr.shape[1] == 0:
        raise ValueError(f"{name}: expected at least one point (a column), got shape {arr.shape}")
    arr = arr.astype(np.int64, copy=False)
    lo, hi = int(arr.min()), int(arr.max())
    if n_labels is not None:
        k = int_in_range(n_labels, "n_labels", 1)
        if lo < 0 or hi >= k:
            raise ValueError(
                f"{name}: expected labels in 0..{k - 1} (n_labels={k}), got labels in {lo}..{hi}"
            )
    else:
        if lo < 0:
            raise ValueError(f"{name}: expected labels in 0..K-1, got a negative label {lo}")
        k = hi + 1
    if unique:
        n = arr.shape[1]
        if float(max(k, 2)) ** n < 2.0**62:  # rows as mixed-radix codes: a 1-d unique, much faster
            codes = arr @ (max(k, 2) ** np.arange(n, dtype=np.int64))
            arr = arr[first_index(codes)]
        else:
            arr = np.unique(arr, axis=0)
    return np.ascontiguousarray(arr), k


def check_point(x: object, n_points: int, name: str = "x") -> int:
    """A point of the domain ``0..n_points-1`` (an int, not a bool)."""
    return int_in_range(x, name, 0, n_points - 1)


def check_label(y: object, n_labels: int, name: str = "y_pred") -> int:
    """A label in ``0..n_labels-1``."""
    return int_in_range(y, name, 0, n_labels - 1)


def check_bool(value: object, name: str) -> bool:
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, numbers.Integral) and int(value) in (0, 1):
        return bool(value)
    raise TypeError(f"{name}: expected a bool (or 0/1), got {value!r}")


def check_target(target: object, hypotheses: np.ndarray, name: str = "target") -> np.ndarray:
    """A target hypothesis: a row of ``hypotheses`` (the realizable setting); raises otherwise."""
    t = finite_array(target, name, shape=(hypotheses.shape[1],), dtype_kind="i").astype(np.int64)
    if not np.any(np.all(hypotheses == t[None, :], axis=1)):
        raise NonRealizableError(
            f"{name}: not a hypothesis of the class (the realizable setting needs the target in H)"
        )
    return t
