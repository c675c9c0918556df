"""Argument checks at the package's public boundaries, on top of :mod:`paperworks.core.validate`.

The core's validators cover numbers, names and NumPy arrays; these add what tensors need: images
``(B, C, S, S)``, integer labels in range, softmax outputs. Every check raises ``TypeError`` for a
wrong type and ``ValueError`` for a wrong value, with a one-line message naming the argument.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from paperworks.core import validate

__all__ = [
    "as_images",
    "as_labels",
    "as_probabilities",
    "as_tensor",
    "check_module",
    "in_graph_capture",
    "int_sequence",
]


def in_graph_capture() -> bool:
    """True while torch traces or compiles (jit tracing, dynamo, ``torch.export``, ONNX export).

    Value checks that read tensor contents (NaN, label range) need a host sync and a data-dependent
    branch; they run in eager calls only, so the captured graph stays static.
    """
    if torch.jit.is_tracing() or torch.jit.is_scripting():
        return True
    compiler = getattr(torch, "compiler", None)
    if compiler is not None:
        if getattr(compiler, "is_compiling", lambda: False)():
            return True
        if getattr(compiler, "is_exporting", lambda: False)():
            return True
    return False


def _describe(x: object) -> str:
    if isinstance(x, torch.Tensor | np.ndarray):
        return f"{type(x).__name__} of shape {tuple(x.shape)} and dtype {x.dtype}"
    return type(x).__name__


def as_tensor(x: object, name: str) -> torch.Tensor:
    """A torch tensor from a tensor or a NumPy array (other types: ``TypeError``)."""
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "biuf":
            raise TypeError(f"{name}: expected a numeric array, got dtype {x.dtype}")
        return torch.from_numpy(np.ascontiguousarray(x))
    raise TypeError(f"{name}: expected a torch.Tensor or a numpy array, got {_describe(x)}")


def _finite(t: torch.Tensor, name: str) -> None:
    if t.is_floating_point() and not in_graph_capture():
        bad = ~torch.isfinite(t)
        if bool(bad.any()):
            raise ValueError(f"{name}: expected finite values, found {int(bad.sum())} NaN or inf")


def as_images(
    x: object,
    name: str = "x",
    *,
    in_channels: int | None = None,
    image_size: int | None = None,
    finite: bool = True,
) -> torch.Tensor:
    """Float images ``(B >= 1, in_channels, image_size, image_size)``, finite (checked in eager calls)."""
    t = as_tensor(x, name)
    c = "C" if in_channels is None else str(in_channels)
    s = "S" if image_size is None else str(image_size)
    if (
        t.dim() != 4
        or (in_channels is not None and t.shape[1] != in_channels)
        or (image_size is not None and (t.shape[2] != image_size or t.shape[3] != image_size))
        or (image_size is None and t.shape[2] != t.shape[3])
    ):
        raise ValueError(f"{name}: expected images of shape (batch, {c}, {s}, {s}), got {tuple(t.shape)}")
    if t.shape[0] == 0:
        raise ValueError(f"{name}: expected a non-empty batch, got batch size 0")
    if not t.is_floating_point():
        raise TypeError(f"{name}: expected a floating-point tensor, got {t.dtype}")
    if finite:
        _finite(t, name)
    return t


def as_labels(
    y: object, name: str = "y", *, n: int | None = None, num_classes: int | None = None
) -> torch.Tensor:
    """Integer class indices ``(n,)`` in ``[0, num_classes - 1]``, as int64."""
    if isinstance(y, list | tuple):
        y = np.asarray(y)
    t = as_tensor(y, name)
    if t.dtype == torch.bool or t.is_floating_point() or t.is_complex():
        raise TypeError(f"{name}: expected integer class indices, got dtype {t.dtype}")
    if t.dim() != 1 or (n is not None and t.shape[0] != n):
        want = "(n,)" if n is None else f"({n},)"
        raise ValueError(f"{name}: expected class indices of shape {want}, got {tuple(t.shape)}")
    if t.numel() == 0:
        raise ValueError(f"{name}: expected at least one label, got none")
    if not in_graph_capture():
        lo, hi = int(t.min()), int(t.max())
        top = "C - 1" if num_classes is None else str(num_classes - 1)
        if lo < 0 or (num_classes is not None and hi >= num_classes):
            raise ValueError(f"{name}: expected class indices in [0, {top}], got values in [{lo}, {hi}]")
    return t.long()


def as_probabilities(
    p: object, name: str, *, ndim: int, atol: float = 1e-3, shape: Sequence[int | None] | None = None
) -> torch.Tensor:
    """Probabilities over the last axis (softmax outputs): finite, in [0, 1], summing to 1 within ``atol``."""
    t = as_tensor(p, name)
    if not t.is_floating_point():
        raise TypeError(f"{name}: expected floating-point probabilities, got dtype {t.dtype}")
    if t.dim() != ndim or 0 in t.shape:
        dims = {2: "(N, C)", 3: "(K, N, C)"}.get(ndim, f"{ndim}-d")
        raise ValueError(f"{name}: expected a non-empty tensor of shape {dims}, got {tuple(t.shape)}")
    if shape is not None and any(s is not None and s != a for s, a in zip(shape, t.shape, strict=True)):
        want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name}: expected shape {want}, got {tuple(t.shape)}")
    _finite(t, name)
    if not in_graph_capture():
        lo, hi = float(t.min()), float(t.max())
        if lo < 0 or hi > 1:
            raise ValueError(
                f"{name}: expected probabilities in [0, 1] (softmax outputs, not logits), "
                f"got values in [{lo:.4g}, {hi:.4g}]"
            )
        off = float((t.sum(-1) - 1).abs().max())
        if off > atol:
            raise ValueError(
                f"{name}: expected probabilities summing to 1 over the last axis (softmax outputs, "
                f"not logits), off by up to {off:.3g}"
            )
    return t


def check_module(m: object, name: str, cls: type = nn.Module) -> Any:
    """``m`` if it is an instance of ``cls`` (an ``nn.Module`` by default), else ``TypeError``."""
    if not isinstance(m, cls):
        raise TypeError(f"{name}: expected a {cls.__name__}, got {type(m).__name__}")
    return m


def int_sequence(
    values: object, name: str, *, lo: int | None = None, hi: int | None = None
) -> tuple[int, ...]:
    """A tuple of ints (each checked by :func:`paperworks.core.validate.int_in_range`)."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray | torch.Tensor):
        raise TypeError(f"{name}: expected a sequence of ints, got {type(values).__name__}")
    out = []
    for i, v in enumerate(list(values)):
        if isinstance(v, torch.Tensor | np.ndarray) and getattr(v, "ndim", 1) == 0:
            v = v.item()
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name}[{i}]: expected an int, got {v!r} ({type(v).__name__})")
        out.append(validate.int_in_range(v, f"{name}[{i}]", lo, hi))
    return tuple(out)
