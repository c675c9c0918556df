"""Residual scaling: ``h_{l+1} = h_l + alpha_l f_l(h_l)`` for chosen decoder layers (TAPIOCA's intervention).

A pre-norm decoder layer maps ``h -> h + f(h)`` (attention and MLP sub-blocks, each with its own
residual). :func:`residual_scaling` rescales the layer's whole residual update ``f(h) = out - h`` by
``alpha``: ``alpha = 1`` is the model as trained, ``alpha = 0`` makes the layer the identity, which is
exactly removing it (tested), and ``alpha > 1`` amplifies it. It is a context manager built on forward
hooks, so it works on any model whose layers :func:`~paperworks.pruning_geometry.layers.find_layers`
finds and leaves the model unchanged on exit.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from torch import nn

from .layers import find_layers

__all__ = ["residual_scaling"]


def _check_alphas(alphas: Mapping[int, float], n: int) -> dict[int, float]:
    if not isinstance(alphas, Mapping):
        raise TypeError(f"alphas: expected a mapping layer index -> alpha, got {type(alphas).__name__}")
    out: dict[int, float] = {}
    for k, a in alphas.items():
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise TypeError(f"alphas: expected int layer indices, got {k!r}")
        if not 0 <= int(k) < n:
            raise ValueError(
                f"alphas: layer index {int(k)} out of range for a model of {n} layers (0..{n - 1})"
            )
        if isinstance(a, bool) or not isinstance(a, numbers.Real) or not math.isfinite(float(a)):
            raise TypeError(f"alphas: expected a finite number for layer {int(k)}, got {a!r}")
        if a < 0:
            raise ValueError(f"alphas: expected alpha >= 0 for layer {int(k)}, got {float(a)}")
        out[int(k)] = float(a)
    return out


def _hook(alpha: float):
    def hook(module: nn.Module, args: tuple, kwargs: dict, output):
        h = args[0] if args else kwargs["hidden_states"]
        out = output[0] if isinstance(output, tuple) else output
        if alpha == 0.0:
            new = h  # the identity: exactly removing the layer
        elif alpha == 1.0:
            new = out
        else:
            new = h + alpha * (out - h)
        if isinstance(output, tuple):
            return (new, *output[1:])
        return new

    return hook


@contextmanager
def residual_scaling(
    model: nn.Module, alphas: Mapping[int, float], *, layers_attr: str | None = None
) -> Iterator[nn.Module]:
    """Inside the block, layer ``l`` of ``model`` computes ``h + alphas[l] * (layer(h) - h)``.

    ``alphas``: layer index -> alpha >= 0 (indices of the model's current layers). Other layers are
    untouched. Hooks are removed on exit, also on an exception.

    Example::

        with residual_scaling(model, {3: 0.0, 5: 0.5}):
            logits = model(input_ids).logits
    """
    _, _, layers = find_layers(model, layers_attr)
    checked = _check_alphas(alphas, len(layers))
    handles = [layers[i].register_forward_hook(_hook(a), with_kwargs=True) for i, a in checked.items()]
    try:
        yield model
    finally:
        for h in handles:
            h.remove()
