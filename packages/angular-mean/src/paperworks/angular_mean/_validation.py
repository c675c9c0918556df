"""Checks at the public boundary: voters' vectors, population fractions, item batches, settings.

Built on :mod:`paperworks.core.validate`: a wrong type raises ``TypeError``, a wrong value
``ValueError``, and the one-line message starts with the argument's name.
"""

from __future__ import annotations

import numpy as np

from paperworks.core.validate import (
    finite_array,
    int_in_range,
    nonnegative_float,
    nonnegative_int,
    positive_float,
    positive_int,
    probability_vector,
)

__all__ = [
    "check_cov",
    "check_fractions",
    "check_items",
    "check_seed",
    "check_solver",
    "check_theta",
    "check_tol",
    "check_voters",
    "check_weights",
]


def check_voters(thetas: object, name: str = "thetas") -> np.ndarray:
    """Voters' preferred scoring vectors: shape (n, d), n >= 1, d >= 1, finite, no zero row."""
    arr = finite_array(thetas, name, allow_empty=True)
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
    arr = finite_array(theta, name, allow_empty=True)
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError(f"{name}: expected a non-empty 1-d vector of shape (d,), got shape {arr.shape}")
    if d is not None and arr.shape[0] != d:
        raise ValueError(f"{name}: expected dimension d={d} (the voters' dimension), got {arr.shape[0]}")
    if np.linalg.norm(arr) <= 1e-300:
        raise ValueError(f"{name}: is the zero vector; a scoring vector needs a direction")
    return arr


def check_fractions(alpha: object, n: int, name: str = "alpha", atol: float = 1e-6) -> np.ndarray:
    """Population fractions: shape (n,), finite, in [0, 1], summing to 1 (within ``atol``).

    None means equal fractions 1/n. Returned renormalised to sum to exactly 1.
    """
    if alpha is None:
        return np.full(n, 1.0 / n)
    arr = finite_array(alpha, name, allow_empty=True)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name}: expected shape ({n},) (one fraction per voter), got shape {arr.shape}")
    if np.any(arr < 0):
        raise ValueError(f"{name}: population fractions must be >= 0, got min {arr.min():.4g}")
    return probability_vector(arr, name, atol=atol)


def check_weights(sample_weight: object, n: int, name: str = "sample_weight") -> np.ndarray:
    """scikit-learn style weights (n,) >= 0, not all zero, as fractions summing to 1 (None: equal)."""
    if sample_weight is None:
        return np.full(n, 1.0 / n)
    arr = finite_array(sample_weight, name, allow_empty=True)
    if arr.ndim == 0:  # a scalar weight applies to every voter, as in scikit-learn
        arr = np.full(n, float(arr))
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name}: expected shape ({n},) (one weight per voter), got shape {arr.shape}")
    if np.any(arr < 0):
        raise ValueError(f"{name}: weights must be >= 0, got min {arr.min():.4g}")
    total = float(arr.sum())
    if not total > 0:
        raise ValueError(f"{name}: weights must not all be zero")
    return arr / total


def check_items(items: object, d: int, name: str = "items") -> np.ndarray:
    """A batch (m, d) or a stack of batches (B, m, d) of items, m >= 2, finite."""
    arr = finite_array(items, name, allow_empty=True)
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
    arr = finite_array(cov, name, allow_empty=True)
    if arr.shape != (d, d):
        raise ValueError(f"{name}: expected shape ({d}, {d}), got {arr.shape}")
    if not np.allclose(arr, arr.T, atol=1e-10 * max(1.0, float(np.abs(arr).max()))):
        raise ValueError(f"{name}: expected a symmetric matrix")
    try:
        np.linalg.cholesky(arr)
    except np.linalg.LinAlgError:
        raise ValueError(f"{name}: expected a positive definite covariance") from None
    return arr


def check_solver(n_starts: object, max_iter: object, tol: object) -> tuple[int, int, float]:
    """The settings every iterative rule shares: ``n_starts`` >= 1, ``max_iter`` >= 1, ``tol`` > 0."""
    return (
        int_in_range(n_starts, "n_starts", 1, 10_000),
        positive_int(max_iter, "max_iter"),
        positive_float(tol, "tol"),
    )


def check_tol(tol: object, name: str = "tol") -> float:
    """A slack allowed before an IP violation counts: a finite number >= 0."""
    return nonnegative_float(tol, name)


def check_seed(seed: object, name: str = "seed") -> int:
    """A seed: an int >= 0 (not a bool, not a float)."""
    return nonnegative_int(seed, name)


def check_rule_inputs(
    thetas: object,
    alpha: object,
    cov: object,
    n_starts: object,
    max_iter: object,
    tol: object,
    fractions: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int, int, float]:
    """The checks every rule's fit starts with: ``(thetas, alpha, cov, n_starts, max_iter, tol)``.

    ``fractions``: already checked population fractions (skips the alpha check).
    """
    thetas = check_voters(thetas)
    alpha = fractions if fractions is not None else check_fractions(alpha, thetas.shape[0])
    cov = check_cov(cov, thetas.shape[1])
    n_starts, max_iter, tol = check_solver(n_starts, max_iter, tol)
    return thetas, alpha, cov, n_starts, max_iter, tol
