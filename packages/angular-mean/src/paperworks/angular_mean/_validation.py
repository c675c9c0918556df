"""Checks at the public boundary: voters' vectors, population fractions, item batches."""

from __future__ import annotations

import numpy as np

__all__ = ["check_cov", "check_fractions", "check_items", "check_theta", "check_voters"]


def _finite_float_array(x: object, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name}: expected a numeric array, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{name}: expected a real array, got complex dtype {arr.dtype}")
    arr = arr.astype(float, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected finite values, found NaN or inf")
    return arr


def check_voters(thetas: object, name: str = "thetas") -> np.ndarray:
    """Voters' preferred scoring vectors: shape (n, d), n >= 1, d >= 1, finite, no zero row."""
    arr = _finite_float_array(thetas, name)
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected a 2-d array of shape (n_voters, d), got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name}: expected at least one voter and one dimension, got shape {arr.shape}")
    norms = np.linalg.norm(arr, axis=1)
    zero = np.flatnonzero(norms <= 1e-300)
    if zero.size:
        raise ValueError(
            f"{name}: row(s) {zero[:5].tolist()} are zero vectors; a scoring vector needs a direction"
        )
    return arr


def check_theta(theta: object, d: int | None = None, name: str = "theta") -> np.ndarray:
    """One scoring vector: shape (d,), finite, non-zero."""
    arr = _finite_float_array(theta, name)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-d vector of shape (d,), got shape {arr.shape}")
    if d is not None and arr.shape[0] != d:
        raise ValueError(f"{name}: expected dimension d={d} (the voters' dimension), got {arr.shape[0]}")
    if np.linalg.norm(arr) <= 1e-300:
        raise ValueError(f"{name}: is the zero vector; a scoring vector needs a direction")
    return arr


def check_fractions(alpha: object, n: int, name: str = "alpha", atol: float = 1e-6) -> np.ndarray:
    """Population fractions: shape (n,), finite, >= 0, summing to 1 (within ``atol``)."""
    if alpha is None:
        return np.full(n, 1.0 / n)
    arr = _finite_float_array(alpha, name)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name}: expected shape ({n},) (one fraction per voter), got shape {arr.shape}")
    if np.any(arr < 0):
        raise ValueError(f"{name}: population fractions must be >= 0, got min {arr.min():.4g}")
    total = float(arr.sum())
    if abs(total - 1.0) > atol:
        raise ValueError(f"{name}: population fractions must sum to 1, got sum {total:.6g}")
    return arr / total


def check_items(items: object, d: int, name: str = "items") -> np.ndarray:
    """A batch (m, d) or a stack of batches (B, m, d) of items, m >= 2, finite."""
    arr = _finite_float_array(items, name)
    if arr.ndim not in (2, 3):
        raise ValueError(f"{name}: expected shape (m, d) or (n_batches, m, d), got shape {arr.shape}")
    if arr.shape[-1] != d:
        raise ValueError(f"{name}: expected items of dimension d={d}, got {arr.shape[-1]}")
    if arr.shape[-2] < 2:
        raise ValueError(f"{name}: a batch needs at least 2 items to rank, got m={arr.shape[-2]}")
    if arr.ndim == 3 and arr.shape[0] == 0:
        raise ValueError(f"{name}: expected at least one batch, got 0")
    return arr


def check_cov(cov: object, d: int, name: str = "cov") -> np.ndarray | None:
    """Item covariance (d, d), symmetric positive definite; None means isotropic."""
    if cov is None:
        return None
    arr = _finite_float_array(cov, name)
    if arr.shape != (d, d):
        raise ValueError(f"{name}: expected shape ({d}, {d}), got {arr.shape}")
    if not np.allclose(arr, arr.T, atol=1e-10 * max(1.0, float(np.abs(arr).max()))):
        raise ValueError(f"{name}: expected a symmetric matrix")
    try:
        np.linalg.cholesky(arr)
    except np.linalg.LinAlgError:
        raise ValueError(f"{name}: expected a positive definite covariance") from None
    return arr
