"""Checking and converting what users pass at the public boundary.

Every public function takes ``probs`` of shape ``(n, k)`` (rows on the probability simplex) and
``labels`` of shape ``(n,)`` (integers in ``[0, k)``), as NumPy arrays, array-likes or torch tensors.
Torch is never imported here: a tensor is recognised by its ``detach``/``cpu``/``numpy`` methods, so
the package works without torch installed. Scalar arguments go through the core's validators
(:mod:`paperworks.core.validate`); every error is one line that starts with the argument's name.

Row sums are checked against a tolerance that follows the input's precision: ``atol=None`` means
``max(1e-4, 4 * eps)`` with ``eps`` the machine epsilon of the dtype the caller passed (float16:
``3.9e-3``, bfloat16: ``3.1e-2``, float32 and float64: ``1e-4``). A softmax computed in half
precision and rounded to it is off by at most ``eps / 2`` per row, so it passes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperworks.core.validate import finite_array, int_in_range, nonnegative_float

__all__ = [
    "as_labels",
    "as_probs",
    "as_property_matrix",
    "check_atol",
    "check_n_bins",
    "default_atol",
    "to_numpy",
]

_EPS = {"torch.bfloat16": 2.0**-7, "torch.float16": 2.0**-10}


def to_numpy(x: Any, name: str) -> tuple[np.ndarray, float]:
    """``(array, eps)``: a NumPy view of ``x`` (tensors detached and moved to the CPU; bfloat16, which
    NumPy lacks, as float32) and the machine epsilon of the dtype the caller passed (0 for integers)."""
    eps = 0.0
    if hasattr(x, "detach") and hasattr(x, "cpu") and hasattr(x, "numpy"):
        dtype = str(getattr(x, "dtype", ""))
        x = x.detach().cpu()
        if dtype == "torch.bfloat16":
            x = x.float()
        eps = _EPS.get(dtype, 0.0)
        x = x.numpy()
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as err:  # ragged nesting, unconvertible objects
        raise TypeError(f"{name}: expected an array or tensor, got {type(x).__name__} ({err})") from None
    if not eps and arr.dtype.kind == "f":
        eps = float(np.finfo(arr.dtype).eps)
    return arr, eps


def default_atol(eps: float) -> float:
    """The row-sum tolerance for inputs of machine epsilon ``eps`` (module docstring)."""
    return max(1e-4, 4.0 * eps)


def check_atol(atol: Any) -> float | None:
    """``None`` (dtype-aware default) or a finite number >= 0."""
    return None if atol is None else nonnegative_float(atol, "atol")


def as_probs(probs: Any, *, atol: float | None = None, name: str = "probs") -> np.ndarray:
    """Validate predicted distributions: a finite real array of shape (n, k), n >= 1, k >= 2, entries
    >= 0 and rows summing to one within ``atol`` (None: dtype-aware, module docstring).

    Returns float32 or float64 (the input's float width; integers and half precision become float64),
    without copying a float32/float64 array. Three passes over the data: the row sums (a NaN or inf
    entry makes its row's sum non-finite), the minimum, and nothing else on the way to a valid result.
    """
    p, eps = to_numpy(probs, name)
    if p.dtype.kind not in "iuf":
        raise TypeError(f"{name}: expected a real-valued array, got dtype {p.dtype}")
    if p.ndim != 2:
        raise ValueError(f"{name}: expected shape (n_samples, n_classes), got shape {tuple(p.shape)}")
    n, k = p.shape
    if n == 0:
        raise ValueError(f"{name}: expected at least one sample, got an empty batch of shape {p.shape}")
    if k < 2:
        raise ValueError(f"{name}: expected at least 2 classes (columns), got {k}")
    if p.dtype not in (np.float32, np.float64):
        p = p.astype(np.float64)
    tol = default_atol(eps) if atol is None else check_atol(atol)
    sums = p @ np.ones(k, dtype=p.dtype)
    if not np.isfinite(sums).all():
        bad = int(np.flatnonzero(~np.isfinite(p).all(axis=1))[0])
        raise ValueError(f"{name}: expected finite probabilities, found NaN or inf (first in row {bad})")
    if p.min() < 0:
        bad = int(np.argwhere(p < 0)[0, 0])
        raise ValueError(f"{name}: expected non-negative probabilities, found a negative entry in row {bad}")
    if np.abs(sums - 1.0).max() > tol:
        dev = np.abs(p.sum(axis=1, dtype=np.float64) - 1.0)  # exact sums before blaming a row
        if dev.max() > tol:
            bad = int(np.argmax(dev))
            raise ValueError(
                f"{name}: expected every row to sum to 1 (tolerance {tol:g}); row {bad} sums to "
                f"{float(p[bad].sum(dtype=np.float64)):.6g}. "
                "Pass probabilities, not logits (apply softmax first)"
            )
    return p


def as_labels(labels: Any, n: int, k: int, *, name: str = "labels") -> np.ndarray:
    """Validate class labels: integers of shape (n,) in ``[0, k)`` (floats holding integers are
    accepted). Returns an integer array (int64 or the input's integer type)."""
    y, _ = to_numpy(labels, name)
    if y.dtype.kind == "b" or y.dtype.kind not in "iuf":
        raise TypeError(f"{name}: expected integer class indices, got dtype {y.dtype}")
    if y.shape != (n,):
        raise ValueError(f"{name}: expected shape ({n},) to match probs, got shape {tuple(y.shape)}")
    if y.dtype.kind == "f":
        if not (np.isfinite(y).all() and (y == np.round(y)).all()):
            raise TypeError(f"{name}: expected integer class indices, got dtype {y.dtype} with fractions")
        y = y.astype(np.int64)
    lo, hi = int(y.min()), int(y.max())
    if lo < 0 or hi >= k:
        bad = lo if lo < 0 else hi
        raise ValueError(f"{name}: expected class indices in [0, {k}), found {bad}")
    return y


def check_n_bins(n_bins: Any, n: int | None = None, *, name: str = "n_bins") -> int:
    """A positive int; with ``n``, no larger than the number of samples (every equal-mass bin needs one)."""
    m = int_in_range(n_bins, name, 1)
    if n is not None and n < m:
        raise ValueError(
            f"{name}: the estimator needs at least one sample per bin, got {n} samples for {m} bins"
        )
    return m


def as_property_matrix(property_matrix: Any, k: int | None, *, varying: bool = False) -> np.ndarray:
    """``A`` as a float64 (d, k) array (a 1-d input is one row; ``k=None``: any k >= 2); ``varying``:
    at least one row must be non-constant on the simplex (a constant property carries no information)."""
    a, _ = to_numpy(property_matrix, "property_matrix")
    a = finite_array(a, "property_matrix", dtype_kind="f").astype(np.float64)
    if a.ndim == 1:
        a = a[None, :]
    want = k if k is not None else max(2, a.shape[-1] if a.ndim else 2)
    if a.ndim != 2 or a.shape[1] != want:
        shown = "k >= 2" if k is None else str(k)
        raise ValueError(f"property_matrix: expected shape (d, {shown}), got shape {tuple(a.shape)}")
    if varying and not (a.max(axis=1) > a.min(axis=1)).any():
        raise ValueError("property_matrix: every row is constant on the simplex; expected a non-constant row")
    return a
