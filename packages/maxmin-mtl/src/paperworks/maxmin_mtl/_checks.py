"""Argument checks shared by the package's public functions (one-line errors naming the argument).

Built on :mod:`paperworks.core.validate`; what is specific to this package is the Gram matrix check
(square, finite, symmetric, non-negative diagonal, positive semi-definite) and the gradient matrix
(a ``(k, d)`` array or tensor, or a sequence of ``k`` gradient vectors).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from paperworks.core.validate import finite_array, finite_float, nonnegative_float, one_of, positive_int

__all__ = [
    "as_grad_matrix",
    "check_gram",
    "finite_array",
    "finite_float",
    "nonnegative_float",
    "one_of",
    "positive_int",
    "real_vector",
]

#: Relative tolerance of the symmetry and semi-definiteness checks (rounding of a float64 Gram matrix
#: of float32 gradients is ~1e-16 relative; a defective matrix is off by far more).
GRAM_RTOL = 1e-8


def check_gram(gram: Any, name: str = "gram", *, positive_diagonal: bool = False) -> np.ndarray:
    """A ``(k, k)`` float64 Gram matrix: non-empty, finite, symmetric, PSD, diagonal ``>= 0`` (``> 0``).

    Symmetry and semi-definiteness are checked relative to the diagonal (on the Jacobi-normalised
    matrix ``D^{-1/2} K D^{-1/2}``), so the check does not depend on the tasks' gradient scales.
    Returns the exactly symmetrised matrix.
    """
    if isinstance(gram, torch.Tensor):
        gram = gram.detach().to(torch.float64).cpu().numpy()
    if isinstance(gram, np.ndarray) and gram.dtype == np.float64:
        K = gram
    else:
        K = finite_array(gram, name, ndim=2, allow_empty=True).astype(np.float64, copy=False)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0:
        raise ValueError(f"{name}: expected a non-empty square (k, k) matrix, got shape {K.shape}")
    if not np.isfinite(K).all():
        raise ValueError(f"{name}: expected finite values, found {int((~np.isfinite(K)).sum())} NaN or inf")
    d = K.diagonal().copy()
    scale = float(np.abs(d).max())
    tiny = GRAM_RTOL * max(scale, 1e-300)
    if d.min() < -tiny:
        raise ValueError(f"{name}: expected a non-negative diagonal (squared norms), got min {d.min():.4g}")
    d = np.maximum(d, 0.0)
    if positive_diagonal and not d.min() > 0:
        bad = np.flatnonzero(d <= 0).tolist()
        raise ValueError(f"{name}: expected a positive diagonal (every task a non-zero step), tasks {bad}")
    root = np.sqrt(d)
    bound = np.outer(root, root)  # Cauchy-Schwarz: |K_ij| <= sqrt(K_ii K_jj)
    if (np.abs(K - K.T) > GRAM_RTOL * bound + tiny).any():
        raise ValueError(f"{name}: expected a symmetric matrix, max |K - K^T| = {np.abs(K - K.T).max():.4g}")
    K = 0.5 * (K + K.T)
    if (np.abs(K) > (1.0 + 1e-6) * bound + tiny).any():
        raise ValueError(f"{name}: expected a positive semi-definite matrix (|K_ij| <= sqrt(K_ii K_jj))")
    if K.shape[0] > 2:  # for k <= 2 the Cauchy-Schwarz bound is the whole PSD condition
        s = np.where(d > 0, 1.0 / np.where(d > 0, root, 1.0), 0.0)
        low = float(np.linalg.eigvalsh(s[:, None] * K * s[None, :]).min())
        if low < -1e-7 * K.shape[0]:
            raise ValueError(f"{name}: expected a positive semi-definite matrix, min eigenvalue {low:.3g}")
    return K


def real_vector(x: Any, name: str, n: int | None = None, *, allow_nonfinite: bool = False) -> np.ndarray:
    """A non-empty 1-D float64 vector (of length ``n``); NaN/inf only with ``allow_nonfinite``."""
    if isinstance(x, torch.Tensor):
        x = x.detach().to(torch.float64).cpu().numpy()
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}: expected a 1-D array of numbers, got {type(x).__name__} ({e})") from None
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name}: expected a 1-D array of real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty 1-D array, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name}: expected {n} values, got {arr.shape[0]}")
    if not allow_nonfinite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected finite values, found {int((~np.isfinite(arr)).sum())} NaN or inf")
    return arr


def as_grad_matrix(grads: Any, name: str = "grads") -> torch.Tensor | np.ndarray:
    """A ``(k, d)`` gradient matrix (k, d >= 1) from an array, a tensor or a sequence of ``k`` vectors.

    A sequence of tensors is stacked into a tensor (each flattened), anything else into a float array.
    NaN/inf entries are allowed here (the weighting methods' ``nonfinite`` policy handles them).
    """
    if isinstance(grads, Sequence) and not isinstance(grads, str | bytes):
        if len(grads) == 0:
            raise ValueError(f"{name}: expected at least one task gradient, got an empty sequence")
        if all(isinstance(g, torch.Tensor) for g in grads):
            flat = [g.reshape(-1) for g in grads]
            if len({f.numel() for f in flat}) != 1:
                raise ValueError(f"{name}: expected gradients of one length, got {[f.numel() for f in flat]}")
            grads = torch.stack(flat)
        else:
            try:
                grads = np.asarray([np.asarray(g, dtype=np.float64).reshape(-1) for g in grads])
            except (TypeError, ValueError) as e:
                raise TypeError(f"{name}: expected k gradient vectors of one length ({e})") from None
    if isinstance(grads, torch.Tensor):
        if not (grads.is_floating_point()):
            raise TypeError(f"{name}: expected a floating-point tensor, got {grads.dtype}")
        G = grads
    else:
        try:
            G = np.asarray(grads)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{name}: expected a (k, d) array, got {type(grads).__name__} ({e})") from None
        if G.dtype.kind not in "iuf":
            raise TypeError(f"{name}: expected a real-valued (k, d) array, got dtype {G.dtype}")
        if G.dtype.kind != "f":
            G = G.astype(np.float64)
    if G.ndim != 2 or G.shape[0] < 1 or G.shape[1] < 1:
        raise ValueError(
            f"{name}: expected a (k, d) gradient matrix with k, d >= 1, got shape {tuple(G.shape)}"
        )
    return G


def check_int(value: Any, name: str, lo: int = 1) -> int:
    """An int ``>= lo`` (not a bool, not a float)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an int >= {lo}, got {value!r} ({type(value).__name__})")
    if value < lo:
        raise ValueError(f"{name}: expected an int >= {lo}, got {int(value)}")
    return int(value)


def positive_number(value: Any, name: str) -> float:
    v = finite_float(value, name)
    if not v > 0:
        raise ValueError(f"{name}: expected a number > 0, got {v}")
    return v
