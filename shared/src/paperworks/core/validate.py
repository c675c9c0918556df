"""Checks for public arguments: each takes ``(value, name)`` and returns the normalised value.

A wrong type raises ``TypeError``, a wrong value ``ValueError``; the one-line message names the
argument, what was expected and what came. Pure functions of NumPy and the standard library.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = [
    "as_generator",
    "finite_array",
    "finite_float",
    "fraction",
    "int_in_range",
    "nonnegative_float",
    "nonnegative_int",
    "one_of",
    "positive_float",
    "positive_int",
    "probability_vector",
]


def _show(value: object) -> str:
    text = repr(value)
    if len(text) > 60 or "\n" in text:
        return f"a {type(value).__name__}"
    return f"{text} ({type(value).__name__})"


def _int(value: object, name: str, what: str) -> int:
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected {what}, got {_show(value)}")
    return int(value)


def int_in_range(value: object, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """An int (or NumPy integer, not a bool or a float) with ``lo <= value <= hi``; ``None``: unbounded."""
    what = "an int" + ("" if lo is None else f" >= {lo}") + ("" if hi is None else f" <= {hi}")
    v = _int(value, name, what)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name}: expected {what}, got {v}")
    return v


def positive_int(value: object, name: str) -> int:
    return int_in_range(value, name, 1)


def nonnegative_int(value: object, name: str) -> int:
    return int_in_range(value, name, 0)


def finite_float(value: object, name: str) -> float:
    """A real number (int, float or NumPy scalar; not a bool or a string), finite, as a float."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {_show(value)}")
    try:
        v = float(value)
    except OverflowError:
        v = math.inf if value > 0 else -math.inf  # an int too large for a float
    if not math.isfinite(v):
        raise ValueError(f"{name}: expected a finite number, got {v}")
    return v


def positive_float(value: object, name: str) -> float:
    v = finite_float(value, name)
    if not v > 0:
        raise ValueError(f"{name}: expected a number > 0, got {v}")
    return v


def nonnegative_float(value: object, name: str) -> float:
    v = finite_float(value, name)
    if not v >= 0:
        raise ValueError(f"{name}: expected a number >= 0, got {v}")
    return v


def fraction(value: object, name: str, *, open_low: bool = False, open_high: bool = False) -> float:
    """A number in [0, 1]; ``open_low`` / ``open_high`` exclude 0 / 1."""
    v = finite_float(value, name)
    low_ok = v > 0 if open_low else v >= 0
    high_ok = v < 1 if open_high else v <= 1
    if not (low_ok and high_ok):
        interval = f"{'(' if open_low else '['}0, 1{')' if open_high else ']'}"
        raise ValueError(f"{name}: expected a number in {interval}, got {v}")
    return v


def one_of(value: object, name: str, choices: Iterable[str]) -> str:
    """A string among ``choices`` (case-sensitive)."""
    options = list(choices)
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected one of {options}, got {_show(value)}")
    if value not in options:
        raise ValueError(f"{name}: expected one of {options}, got {value!r}")
    return value


def as_generator(rng: object, name: str = "rng") -> np.random.Generator:
    """A ``numpy.random.Generator`` as is, a non-negative int seed -> ``default_rng(seed)``, None -> fresh."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, bool | np.bool_) or not isinstance(rng, numbers.Integral):
        raise TypeError(f"{name}: expected a numpy Generator, an int seed or None, got {_show(rng)}")
    if rng < 0:
        raise ValueError(f"{name}: expected a non-negative int seed, got {int(rng)}")
    return np.random.default_rng(int(rng))


_KINDS = {"f": "fiu", "i": "iu", None: "biuf"}


def finite_array(
    x: object,
    name: str,
    *,
    ndim: int | None = None,
    shape: Sequence[int | None] | None = None,
    dtype_kind: str | None = "f",
    allow_empty: bool = False,
) -> np.ndarray:
    """An array of real numbers with no NaN or inf, checked for ``ndim`` and ``shape`` (None: any size).

    ``dtype_kind``: ``"f"`` accepts ints and floats and returns floats (float64 unless already float),
    ``"i"`` accepts integers only, ``None`` any real or bool dtype. Empty arrays need ``allow_empty``.
    """
    if dtype_kind not in _KINDS:
        raise ValueError(f"dtype_kind: expected one of {list(_KINDS)}, got {dtype_kind!r}")
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as e:  # ragged nesting, unconvertible objects
        raise TypeError(f"{name}: expected an array, got {_show(x)} ({e})") from None
    if arr.dtype.kind not in _KINDS[dtype_kind]:
        wanted = {"f": "a real-valued", "i": "an integer", None: "a numeric"}[dtype_kind]
        raise TypeError(f"{name}: expected {wanted} array, got dtype {arr.dtype}")
    if dtype_kind == "f" and arr.dtype.kind != "f":
        arr = arr.astype(np.float64)
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            dims = ", ".join("n" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "")
            raise ValueError(f"{name}: expected shape ({dims}), got {arr.shape}")
    elif ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d array, got shape {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name}: expected a non-empty array, got shape {arr.shape}")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(f"{name}: expected finite values, found {int((~np.isfinite(arr)).sum())} NaN or inf")
    return arr


def probability_vector(p: object, name: str, *, axis: int = -1, atol: float = 1e-6) -> np.ndarray:
    """Probabilities along ``axis``: finite, in [0, 1], summing to 1 within ``atol``; non-empty.

    Returns a float array renormalised along ``axis`` (a change of at most ``atol``), so that
    ``Generator.choice`` and similar strict consumers accept it.
    """
    arr = finite_array(p, name)
    if arr.ndim == 0:
        raise ValueError(f"{name}: expected at least a 1-d array of probabilities, got a scalar")
    if not -arr.ndim <= axis < arr.ndim:
        raise ValueError(f"{name}: expected an array with an axis {axis}, got shape {arr.shape}")
    if arr.min() < 0 or arr.max() > 1:
        lo, hi = arr.min(), arr.max()
        raise ValueError(f"{name}: expected probabilities in [0, 1], got min {lo:.4g}, max {hi:.4g}")
    total = arr.sum(axis=axis, keepdims=True)
    worst = float(np.abs(total - 1).max())
    if worst > atol:
        raise ValueError(f"{name}: expected probabilities summing to 1 along axis {axis}, off by {worst:.3g}")
    return arr / total
