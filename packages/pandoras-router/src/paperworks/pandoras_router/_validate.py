"""Input checks of the public functions, built on the core's shared validators.

Each returns the normalised value or raises a one-line ``TypeError`` / ``ValueError`` that names the
argument and says what was expected (:mod:`paperworks.core.validate` does the type, shape and
finiteness checks; the sign checks and the ``-inf`` option of an outside value are added here).
"""

from __future__ import annotations

import numpy as np

from paperworks.core.validate import finite_array, one_of

__all__ = ["as_finite", "as_nonneg", "as_positive", "as_value_or_neg_inf", "per_specialist"]


def as_finite(x: object, name: str, *, ndim: int | None = None) -> np.ndarray:
    """``x`` as a float64 array of finite reals (non-empty, ``ndim`` dimensions when given)."""
    return np.asarray(finite_array(x, name, ndim=ndim), dtype=np.float64)


def as_nonneg(x: object, name: str, *, ndim: int | None = None) -> np.ndarray:
    arr = as_finite(x, name, ndim=ndim)
    if (arr < 0).any():
        raise ValueError(f"{name}: expected non-negative values, got minimum {arr.min():g}")
    return arr


def as_positive(x: object, name: str, *, ndim: int | None = None) -> np.ndarray:
    arr = as_finite(x, name, ndim=ndim)
    if (arr <= 0).any():
        raise ValueError(f"{name}: expected strictly positive values, got minimum {arr.min():g}")
    return arr


def as_value_or_neg_inf(x: object, name: str, *, ndim: int | None = None) -> np.ndarray:
    """Finite reals or ``-inf`` (an option that is not there); NaN and ``+inf`` are errors."""
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected an array of real numbers, got {type(x).__name__}") from None
    if arr.dtype.kind not in "biuf" or arr.dtype.kind == "b":
        raise TypeError(f"{name}: expected real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d array, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty array, got shape {arr.shape}")
    bad = np.isnan(arr) | (arr == np.inf)
    if bad.any():
        raise ValueError(f"{name}: expected finite values or -inf, found {int(bad.sum())} NaN/+inf entries")
    return arr


_CHECKS = {"finite": as_finite, "nonneg": as_nonneg, "positive": as_positive}


def per_specialist(
    x: object, name: str, shape: tuple[int, int], *, kind: str = "finite", broadcast: bool = True
) -> np.ndarray:
    """Validate ``x`` as one value per specialist (K,) or one per query and specialist (n, K).

    ``kind``: ``"finite"``, ``"nonneg"`` or ``"positive"``. Returns an (n, K) array, or with
    ``broadcast=False`` the array as given ((K,) or (n, K), no copy). Any other shape is an error
    (no silent broadcasting of, e.g., one scalar or an (n,) column).
    """
    arr = _CHECKS[one_of(kind, "kind", tuple(_CHECKS))](x, name)
    if arr.shape == tuple(shape):
        return arr
    if arr.shape == (shape[1],):
        return np.broadcast_to(arr, shape).copy() if broadcast else arr
    raise ValueError(f"{name}: expected shape ({shape[1]},) or {tuple(shape)}, got {arr.shape}")
