"""Input checks shared by the public functions: clear errors naming the argument."""

from __future__ import annotations

import numpy as np

__all__ = ["as_finite", "as_nonneg", "as_positive", "same_shape"]


def as_finite(x: object, name: str, *, ndim: int | None = None, allow_neg_inf: bool = False) -> np.ndarray:
    """``x`` as a float64 array; raise on NaN/inf (``-inf`` allowed when asked) or a wrong ``ndim``."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected an array of real numbers, got {type(x).__name__}") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d array, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty array, got shape {arr.shape}")
    if np.isfinite(arr).all():
        return arr
    bad = np.isnan(arr) | (np.isinf(arr) & ~(allow_neg_inf & (arr < 0)))
    if bad.any():
        raise ValueError(f"{name}: expected finite values, found {int(bad.sum())} NaN/inf entries")
    return arr


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


def same_shape(ref: np.ndarray, ref_name: str, **arrays: np.ndarray) -> None:
    for name, arr in arrays.items():
        if arr.shape != ref.shape:
            raise ValueError(f"{name}: expected shape {ref.shape} (the shape of {ref_name}), got {arr.shape}")
