"""Argument checks for torch tensors at the public boundary (scalars go through ``paperworks.core.validate``).

Every check raises ``TypeError`` for a wrong type and ``ValueError`` for a wrong value, with a one-line
message that names the argument, what was expected and what came.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from paperworks.core import validate

__all__ = ["as_tensor", "check_answer", "check_layers", "check_tensor", "validate"]


def _shape(x: object) -> str:
    return str(tuple(x.shape)) if hasattr(x, "shape") else type(x).__name__


def check_tensor(
    x: object,
    name: str,
    *,
    ndim: int | Sequence[int] | None = None,
    floating: bool | None = None,
    finite: bool = True,
    nonnegative: bool = False,
    allow_empty: bool = False,
) -> torch.Tensor:
    """``x`` as a torch tensor, checked for its number of dims, dtype kind, finiteness and sign.

    ``floating``: True needs a floating dtype, False an integer one, None any real dtype (not bool or
    complex). ``finite`` / ``nonnegative`` look at the values (one reduction, one host sync).
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    if ndim is not None:
        dims = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if x.ndim not in dims:
            want = " or ".join(f"{d}-D" for d in dims)
            raise ValueError(f"{name}: expected a {want} tensor, got shape {tuple(x.shape)}")
    if x.dtype == torch.bool or x.is_complex():
        raise TypeError(f"{name}: expected a real-valued tensor, got dtype {x.dtype}")
    if floating is True and not x.is_floating_point():
        raise TypeError(f"{name}: expected a floating-point tensor, got dtype {x.dtype}")
    if floating is False and x.is_floating_point():
        raise TypeError(f"{name}: expected an integer tensor, got dtype {x.dtype}")
    if x.numel() == 0:
        if not allow_empty:
            raise ValueError(f"{name}: expected a non-empty tensor, got shape {tuple(x.shape)}")
        return x
    if finite and x.is_floating_point() and not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name}: contains NaN or inf")
    if nonnegative and bool((x < 0).any()):
        raise ValueError(f"{name}: expected non-negative values, got min {float(x.min()):.4g}")
    return x


def as_tensor(x: object, name: str, **kwargs) -> torch.Tensor:
    """Like :func:`check_tensor`, but a NumPy array (or nested list) is converted first."""
    if not isinstance(x, torch.Tensor):
        if isinstance(x, np.ndarray | list | tuple):
            arr = validate.finite_array(
                x, name, dtype_kind=None, allow_empty=kwargs.get("allow_empty", False)
            )
            x = torch.as_tensor(arr.astype(np.float32) if arr.dtype.kind == "f" else arr)
        else:
            raise TypeError(f"{name}: expected a torch.Tensor or a NumPy array, got {type(x).__name__}")
    return check_tensor(x, name, **kwargs)


def check_answer(answer: object, batch: int, vocab: int | None = None, name: str = "answer") -> torch.Tensor:
    """Answer token ids, shape (batch,), integer, in ``[0, vocab)``: never broadcast."""
    a = check_tensor(answer, name, ndim=1, floating=False)
    if a.shape[0] != batch:
        raise ValueError(f"{name}: expected shape ({batch},), one id per row, got {tuple(a.shape)}")
    if bool((a < 0).any()) or (vocab is not None and bool((a >= vocab).any())):
        raise ValueError(
            f"{name}: expected token ids in [0, {vocab}), got min {int(a.min())}, max {int(a.max())}"
        )
    return a


def check_layers(x: object, name: str, *, finite: bool = True) -> list[torch.Tensor]:
    """A non-empty list/tuple of 4-D per-layer tensors (batch, heads, seq, d) of one batch and length."""
    if isinstance(x, torch.Tensor) or not isinstance(x, list | tuple) or len(x) == 0:
        raise TypeError(f"{name}: expected a non-empty list of per-layer tensors, got {_shape(x)}")
    out = [check_tensor(t, f"{name}[{i}]", ndim=4, floating=True, finite=finite) for i, t in enumerate(x)]
    ref = out[0].shape
    for i, t in enumerate(out[1:], 1):
        if t.shape[0] != ref[0] or t.shape[2] != ref[2]:
            raise ValueError(
                f"{name}[{i}]: expected batch {ref[0]} and seq {ref[2]} like layer 0, got {tuple(t.shape)}"
            )
    return out
