"""Checking and converting what users pass at the public boundary.

Every public function takes ``probs`` of shape ``(n, k)`` (rows on the probability simplex) and
``labels`` of shape ``(n,)`` (integers in ``[0, k)``), as NumPy arrays, array-likes or torch tensors.
Torch is never imported here: a tensor is recognised by its ``detach``/``cpu``/``numpy`` methods, so
the package works without torch installed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_labels", "as_probs", "check_n_bins", "to_numpy"]


def to_numpy(x: Any, name: str) -> np.ndarray:
    """A NumPy view of ``x`` (torch tensors are detached and moved to the CPU first)."""
    if hasattr(x, "detach") and hasattr(x, "cpu") and hasattr(x, "numpy"):
        x = x.detach().cpu()
        if str(getattr(x, "dtype", "")) in ("torch.bfloat16", "torch.float16"):
            x = x.float()
        return x.numpy()
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name}: expected an array or tensor, got {type(x).__name__} ({err})") from None


def as_probs(probs: Any, *, atol: float = 1e-4, name: str = "probs") -> np.ndarray:
    """Validate predicted distributions: a finite float array of shape (n, k), n >= 1, k >= 2,
    entries >= 0 and rows summing to one within ``atol``. Returns float64."""
    p = to_numpy(probs, name)
    if p.dtype == bool or not (np.issubdtype(p.dtype, np.floating) or np.issubdtype(p.dtype, np.integer)):
        raise TypeError(f"{name}: expected a real-valued (float) array, got dtype {p.dtype}")
    if p.ndim != 2:
        raise ValueError(f"{name}: expected shape (n_samples, n_classes), got shape {tuple(p.shape)}")
    n, k = p.shape
    if n == 0:
        raise ValueError(f"{name}: expected at least one sample, got an empty batch of shape {p.shape}")
    if k < 2:
        raise ValueError(f"{name}: expected at least 2 classes (columns), got {k}")
    p = p.astype(np.float64, copy=False)
    if not np.isfinite(p).all():
        bad = int(np.argwhere(~np.isfinite(p))[0, 0])
        raise ValueError(f"{name}: expected finite probabilities, found NaN or inf (first in row {bad})")
    if (p < 0).any():
        bad = int(np.argwhere(p < 0)[0, 0])
        raise ValueError(f"{name}: expected non-negative probabilities, found a negative entry in row {bad}")
    dev = np.abs(p.sum(axis=1) - 1.0)
    if (dev > atol).any():
        bad = int(np.argmax(dev))
        raise ValueError(
            f"{name}: expected every row to sum to 1 (tolerance {atol:g}); row {bad} sums to "
            f"{p[bad].sum():.6g}. Pass probabilities, not logits (apply softmax first)"
        )
    return p


def as_labels(labels: Any, n: int, k: int, *, name: str = "labels") -> np.ndarray:
    """Validate class labels: integers of shape (n,) in ``[0, k)``. Returns int64."""
    y = to_numpy(labels, name)
    if y.dtype == bool or not np.issubdtype(y.dtype, np.integer):
        if (
            np.issubdtype(y.dtype, np.floating)
            and y.size
            and np.isfinite(y).all()
            and (y == np.round(y)).all()
        ):
            y = y.astype(np.int64)
        else:
            raise TypeError(f"{name}: expected integer class indices, got dtype {y.dtype}")
    if y.shape != (n,):
        raise ValueError(f"{name}: expected shape ({n},) to match probs, got shape {tuple(y.shape)}")
    y = y.astype(np.int64, copy=False)
    if ((y < 0) | (y >= k)).any():
        bad = int(y[(y < 0) | (y >= k)][0])
        raise ValueError(f"{name}: expected class indices in [0, {k}), found {bad}")
    return y


def check_n_bins(n_bins: Any, n: int, *, name: str = "n_bins") -> int:
    """A positive int no larger than the number of samples (every equal-mass bin needs a sample)."""
    if isinstance(n_bins, bool) or not isinstance(n_bins, int | np.integer):
        raise TypeError(f"{name}: expected a positive int, got {n_bins!r}")
    if n_bins < 1:
        raise ValueError(f"{name}: expected a positive int, got {n_bins}")
    if n < n_bins:
        raise ValueError(
            f"{name}: the estimator needs at least one sample per bin, got {n} samples for {n_bins} bins"
        )
    return int(n_bins)
