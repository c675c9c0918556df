"""Argument checks for torch tensors at the package's public boundaries (the core's
:mod:`paperworks.core.validate` covers numbers and names; these add what tensors need).

Each raises ``TypeError`` for a wrong type or dtype and ``ValueError`` for a wrong value or shape,
with a one-line message that names the argument.
"""

from __future__ import annotations

import torch

__all__ = ["check_generator", "check_hv", "check_int_tensor", "check_real_tensor", "shape_of"]


def shape_of(x: object) -> str:
    return str(tuple(x.shape)) if isinstance(x, torch.Tensor) else type(x).__name__


def check_hv(x: object, name: str, *, finite: bool = False) -> torch.Tensor:
    """A complex FHRR hypervector tensor ``(..., D)``, D >= 1. Type, dtype and shape only (free: no pass
    over the data, no host sync), unless ``finite``: then NaN/inf are rejected too."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name}: expected a complex torch.Tensor hypervector, got {type(x).__name__}")
    if not torch.is_complex(x):
        raise TypeError(f"{name}: expected a complex FHRR hypervector, got dtype {x.dtype}")
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"{name}: expected shape (..., D) with D >= 1, got {tuple(x.shape)}")
    if finite and not torch.isfinite(x).all():
        raise ValueError(f"{name}: expected finite values (NaN/inf found)")
    return x


def check_real_tensor(x: object, name: str, ndim: int | None = None) -> torch.Tensor:
    """A real floating tensor (not complex, not bool), finite, non-empty, with ``ndim`` dims."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise TypeError(f"{name}: expected a real floating tensor, got dtype {x.dtype}")
    if ndim is not None and x.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d tensor, got shape {tuple(x.shape)}")
    if x.numel() == 0:
        raise ValueError(f"{name}: expected a non-empty tensor, got shape {tuple(x.shape)}")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name}: expected finite values (NaN/inf found)")
    return x


def check_int_tensor(x: object, name: str) -> torch.Tensor:
    """An integer tensor, or a float tensor / nested sequence whose values are whole numbers, as int64.

    Floats with a fractional part, NaN/inf, complex and bool values are rejected (no silent truncation).
    """
    if isinstance(x, bool):
        raise TypeError(f"{name}: expected integers, got a bool")
    if not isinstance(x, torch.Tensor):
        try:
            x = torch.as_tensor(x)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(
                f"{name}: expected integers (a tensor or a sequence), got {type(x).__name__}"
            ) from None
    if x.dtype == torch.bool or x.is_complex():
        raise TypeError(f"{name}: expected integers, got dtype {x.dtype}")
    if x.dtype.is_floating_point:
        if not torch.isfinite(x).all():
            raise ValueError(f"{name}: expected finite integers (NaN/inf found)")
        if not torch.equal(x, x.round()):
            raise ValueError(
                f"{name}: expected whole numbers, got fractional values such as {float(x[x != x.round()][0])}"
            )
    return x.to(torch.int64)


def check_generator(g: object, name: str = "generator") -> torch.Generator | None:
    if g is not None and not isinstance(g, torch.Generator):
        raise TypeError(f"{name}: expected a torch.Generator or None, got {type(g).__name__}")
    return g
