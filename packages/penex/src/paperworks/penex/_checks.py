"""Argument checks shared by the package's public functions (tensor-side; scalars use the core's).

Metadata checks (type, dtype, shape) never read tensor values and cost no host synchronisation. Value
checks (NaN/inf, index ranges) read one boolean back from the tensors' device: they run when
:func:`check_values_now` says so (by default on CPU tensors, never inside ``torch.compile`` or a
``torch.func`` transform).
"""

from __future__ import annotations

import torch
from torch import Tensor

from paperworks.core.validate import int_in_range

__all__ = [
    "check_scores_and_targets",
    "check_values_now",
    "class_scores",
    "class_targets",
    "float_tensor",
    "ignore_index_arg",
    "validate_flag",
]

_INT_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


def validate_flag(value: object, name: str = "validate") -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise TypeError(f"{name}: expected True, False or None, got {value!r} ({type(value).__name__})")
    return value


def _transformed(t: Tensor) -> bool:
    """Whether ``t`` is wrapped by a ``torch.func`` transform (vmap/grad/jacrev): values unreadable."""
    try:
        return bool(torch._C._functorch.is_functorch_wrapped_tensor(t))
    except AttributeError:  # pragma: no cover - a torch without functorch
        return False


def check_values_now(validate: bool | None, *tensors: Tensor) -> bool:
    """Whether to read tensor values for checks.

    Never inside ``torch.compile`` or a ``torch.func`` transform (values cannot be read there);
    otherwise ``validate`` when given, else only when every tensor is on the CPU (where reading a value
    back stalls no device).
    """
    if validate is False or torch.compiler.is_compiling():
        return False
    if any(_transformed(t) for t in tensors):
        return False
    return bool(validate) or all(t.device.type == "cpu" for t in tensors)


def float_tensor(x: object, name: str, *, min_dim: int = 0, what: str = "") -> Tensor:
    """A floating-point tensor with at least ``min_dim`` dimensions (metadata only)."""
    shape_text = what or f"at least {min_dim} dimension(s)"
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{name}: expected a floating-point torch.Tensor ({shape_text}), got {type(x).__name__}"
        )
    if not x.is_floating_point():
        raise TypeError(f"{name}: expected a floating-point tensor, got dtype {x.dtype}")
    if x.dim() < min_dim:
        raise ValueError(f"{name}: expected {shape_text}, got shape {tuple(x.shape)}")
    return x


def class_scores(logits: object, name: str = "logits") -> Tensor:
    """``(N, C)`` or ``(N, C, d1, ...)`` floating logits with ``N >= 1`` and ``C >= 1`` (metadata only)."""
    f = float_tensor(logits, name, min_dim=2, what="shape (N, C) or (N, C, d1, ...)")
    if f.shape[1] < 1:
        raise ValueError(f"{name}: expected at least one class (C >= 1), got shape {tuple(f.shape)}")
    if f.numel() == 0:
        raise ValueError(f"{name}: expected a non-empty batch, got shape {tuple(f.shape)}")
    return f


def class_targets(target: object, logits: Tensor, name: str = "target") -> Tensor:
    """Integer class indices of shape ``(N, d1, ...)`` matching ``logits`` ``(N, C, d1, ...)``."""
    if not isinstance(target, Tensor):
        raise TypeError(
            f"{name}: expected a torch.Tensor of integer class indices, got {type(target).__name__}"
        )
    if target.dtype not in _INT_DTYPES:
        raise TypeError(
            f"{name}: expected integer class indices (torch.long), got dtype {target.dtype}; "
            "probability (soft) targets are not supported"
        )
    expected = (logits.shape[0], *logits.shape[2:])
    if tuple(target.shape) != expected:
        raise ValueError(
            f"{name}: expected shape {expected} to match logits of shape {tuple(logits.shape)} "
            f"(batch sizes must agree), got {tuple(target.shape)}"
        )
    if target.device != logits.device:
        raise ValueError(f"{name}: expected a tensor on {logits.device} like the logits, got {target.device}")
    return target


def ignore_index_arg(value: object) -> int:
    return int_in_range(value, "ignore_index")


def check_scores_and_targets(
    f: Tensor, t: Tensor, n_classes: int, ignore_index: int | None, weight: Tensor | None = None
) -> None:
    """Value checks with one host read: finite logits, targets in range (or ignored), valid weights."""
    bad_target = (t < 0) | (t >= n_classes)
    if ignore_index is not None:
        bad_target &= t != ignore_index
    flags = [~torch.isfinite(f).all(), bad_target.any()]
    if weight is not None:
        flags.append(~(torch.isfinite(weight) & (weight >= 0)).all())
    nonfinite, out_of_range, *bad_weight = torch.stack(flags).tolist()
    if nonfinite:
        n_nan = int(torch.isnan(f).sum())
        n_inf = int(torch.isinf(f).sum())
        raise ValueError(f"logits: expected finite values, found {n_nan} NaN and {n_inf} inf")
    if out_of_range:
        first = int(t[bad_target].reshape(-1)[0])
        extra = "" if ignore_index is None else f" (or ignore_index={ignore_index})"
        raise ValueError(f"target: expected class indices in [0, {n_classes - 1}]{extra}, got {first}")
    if bad_weight and bad_weight[0]:
        raise ValueError("weight: expected finite non-negative class weights")
