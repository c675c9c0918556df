"""Argument checks for tensors at the package's public boundaries (scalars go through
:mod:`paperworks.core.validate`). Each returns the checked value; a wrong type raises ``TypeError``, a
wrong value ``ValueError``, with a one-line message that names the argument."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from paperworks.core.validate import finite_array

__all__ = ["float_tensor", "seed_int"]


def float_tensor(
    x: object,
    name: str,
    *,
    ndim: int | None = None,
    shape: Sequence[int | None] | None = None,
    allow_empty: bool = True,
) -> torch.Tensor:
    """A finite real tensor (float32 unless already floating), checked for ``ndim`` / ``shape``.

    Tensors stay on their device; anything else goes through the core's ``finite_array`` (which
    rejects strings, objects and ragged nesting with a ``TypeError`` naming ``name``).
    """
    if isinstance(x, torch.Tensor):
        if x.dtype == torch.bool or x.is_complex():
            raise TypeError(f"{name}: expected a real-valued tensor, got dtype {x.dtype}")
        t = x if x.is_floating_point() else x.float()
    else:
        t = torch.as_tensor(finite_array(x, name, allow_empty=True).astype(np.float32, copy=False))
    if shape is not None:
        if t.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, t.shape)):
            want = "(" + ", ".join("n" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name}: expected shape {want}, got {tuple(t.shape)}")
    elif ndim is not None and t.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d tensor, got shape {tuple(t.shape)}")
    if not allow_empty and t.numel() == 0:
        raise ValueError(f"{name}: expected a non-empty tensor, got shape {tuple(t.shape)}")
    if not torch.isfinite(t).all():
        raise ValueError(f"{name}: expected finite values (found NaN or inf)")
    return t


def seed_int(seed: object, name: str = "seed") -> int:
    """A seed: a non-negative int below 2**63 (NumPy and torch generators accept it)."""
    from paperworks.core.validate import int_in_range

    return int_in_range(seed, name, 0, 2**63 - 1)
