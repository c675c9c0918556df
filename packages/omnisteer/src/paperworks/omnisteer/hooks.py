"""Forward hooks on a decoder's blocks: additive steering and directional ablation.

Any Hugging Face ``transformers`` decoder whose blocks sit at ``model.model.layers`` (Llama, Qwen2,
Mistral, Gemma, ...) or a bare ``nn.ModuleList``-holding module with ``.layers`` works. A hook edits
the residual stream leaving block ``l`` (the block's output ``h^l``, shape ``(batch, seq, d)``):

- addition (ActAdd / CAA, and OmniSteer with a per-position strength):
  ``h^l <- h^l + alpha * u^l`` with ``alpha`` a float or a callable ``alpha(h^l, l) -> (batch, seq)``;
- directional ablation (Arditi et al. 2024, arXiv 2406.11717): ``h^l <- h^l - (h^l . u) u``.

Both are context managers: the hooks are registered on entry and removed on exit, also when the
block raises. A block returning a tuple (transformers 4) or a tensor (transformers 5) is handled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn

__all__ = ["ablate", "decoder_layers", "steer", "check_directions"]

Strength = float | Callable[[torch.Tensor, int], torch.Tensor]


def decoder_layers(model: nn.Module) -> nn.ModuleList:
    """The decoder blocks of ``model``: ``model.model.layers`` (a ``*ForCausalLM``) or ``model.layers``."""
    inner = getattr(model, "model", None)
    layers = getattr(inner, "layers", None) if inner is not None else None
    if layers is None:
        layers = getattr(model, "layers", None)
    if not isinstance(layers, nn.ModuleList) or len(layers) == 0:
        raise TypeError(
            f"model: expected a decoder with blocks at model.model.layers or model.layers, "
            f"got {type(model).__name__}"
        )
    return layers


def _hidden_size(model: nn.Module) -> int | None:
    cfg = getattr(model, "config", None)
    size = getattr(cfg, "hidden_size", None)
    return int(size) if size is not None else None


def check_directions(
    model: nn.Module, directions: Mapping[int, Any], name: str = "directions"
) -> dict[int, torch.Tensor]:
    """Validate ``{layer: (d,) direction}`` against ``model``: layer indices in range (negative ones
    count from the end), one 1-d finite non-zero vector of the model's width per layer."""
    layers = decoder_layers(model)
    n = len(layers)
    if not isinstance(directions, Mapping) or len(directions) == 0:
        raise ValueError(
            f"{name}: expected a non-empty mapping layer -> direction, got {type(directions).__name__}"
        )
    width = _hidden_size(model)
    out: dict[int, torch.Tensor] = {}
    for layer, vec in directions.items():
        if isinstance(layer, bool) or not isinstance(layer, int):
            raise TypeError(f"{name}: layer keys must be ints, got {layer!r}")
        if not -n <= layer < n:
            raise ValueError(f"{name}: layer {layer} out of range for a model with {n} decoder layers")
        v = torch.as_tensor(vec)
        if v.ndim != 1:
            raise ValueError(f"{name}[{layer}]: expected a 1-d direction, got shape {tuple(v.shape)}")
        if width is not None and v.shape[0] != width:
            raise ValueError(f"{name}[{layer}]: direction width {v.shape[0]} != model hidden size {width}")
        if not torch.isfinite(v).all():
            raise ValueError(f"{name}[{layer}]: direction has NaN or inf entries")
        if float(v.norm()) == 0.0:
            raise ValueError(f"{name}[{layer}]: zero direction")
        key = layer % n
        if key in out:
            raise ValueError(f"{name}: layer {layer} given twice")
        out[key] = v
    return out


def _split(output: Any) -> tuple[torch.Tensor, Callable[[torch.Tensor], Any]]:
    if isinstance(output, torch.Tensor):
        return output, lambda h: h
    if isinstance(output, tuple) and output and isinstance(output[0], torch.Tensor):
        rest = output[1:]
        return output[0], lambda h: (h, *rest)
    raise TypeError(f"decoder block returned {type(output).__name__}; expected a tensor or a tuple")


def _check_eval(model: nn.Module) -> None:
    if model.training:
        raise RuntimeError("model: steering a model in training mode; call model.eval() first")


@contextmanager
def _hooks(
    layers: nn.ModuleList, indices: Mapping[int, Any], make: Callable[[int], Callable[..., Any]]
) -> Iterator[list[torch.utils.hooks.RemovableHandle]]:
    """Register ``make(l)`` as a forward hook on ``layers[l]`` for each ``l``; remove them all on exit."""
    handles = []
    try:
        for layer in indices:
            handles.append(layers[layer].register_forward_hook(make(layer)))
        yield handles
    finally:
        for handle in handles:
            handle.remove()


@contextmanager
def steer(
    model: nn.Module,
    directions: Mapping[int, Any],
    strength: Strength | Mapping[int, float] = 1.0,
    *,
    positions: slice | None = None,
) -> Iterator[list[torch.utils.hooks.RemovableHandle]]:
    """Add ``strength * u^l`` to the output of each block ``l`` in ``directions`` inside the block.

    ``directions``: ``{layer: (d,)}`` (used as given: unit-normalise for strengths in norm units).
    ``strength``: a float, a ``{layer: float}`` mapping, or a callable ``(h (b, s, d), layer) -> (b, s)``
    (OmniSteer's adapter; differentiable, so an adapter can be trained through the hook).
    ``positions``: the sequence positions steered (default all, as CAA does after the prompt).
    The model must be in eval mode. Yields the hook handles; they are removed on exit.
    """
    dirs = check_directions(model, directions)
    _check_eval(model)
    layers = decoder_layers(model)
    if isinstance(strength, Mapping):
        per_layer = {k % len(layers): float(v) for k, v in strength.items()}
        missing = set(dirs) - set(per_layer)
        if missing:
            raise ValueError(f"strength: no value for layers {sorted(missing)}")
    elif callable(strength):
        per_layer = None
    else:
        s = float(strength)
        if s != s or s in (float("inf"), float("-inf")):
            raise ValueError(f"strength: expected a finite number, got {strength!r}")
        per_layer = dict.fromkeys(dirs, s)
    sl = positions if positions is not None else slice(None)

    def make(layer: int) -> Callable[..., Any]:
        def hook(module: nn.Module, args: Any, output: Any) -> Any:
            h, rebuild = _split(output)
            u = dirs[layer].to(device=h.device, dtype=h.dtype)
            if per_layer is not None:
                delta = per_layer[layer] * u
                if sl == slice(None):
                    return rebuild(h + delta)
                h = h.clone()
                h[:, sl] = h[:, sl] + delta
                return rebuild(h)
            alpha = strength(h, layer)  # type: ignore[operator]
            if alpha.shape != h.shape[:2]:
                raise ValueError(
                    f"strength: callable returned shape {tuple(alpha.shape)}, expected {tuple(h.shape[:2])}"
                )
            mask = torch.zeros(h.shape[1], dtype=h.dtype, device=h.device)
            mask[sl] = 1.0
            return rebuild(h + (alpha * mask)[..., None] * u)

        return hook

    with _hooks(layers, dirs, make) as handles:
        yield handles


@contextmanager
def ablate(
    model: nn.Module, directions: Mapping[int, Any]
) -> Iterator[list[torch.utils.hooks.RemovableHandle]]:
    """Directional ablation: project ``u^l / ||u^l||`` out of the output of each block ``l`` given.

    Arditi et al. ablate one direction at every layer: pass ``{l: u for l in range(n_layers)}``.
    """
    _check_eval(model)
    dirs = {k: v / v.norm() for k, v in check_directions(model, directions).items()}
    layers = decoder_layers(model)

    def make(layer: int) -> Callable[..., Any]:
        def hook(module: nn.Module, args: Any, output: Any) -> Any:
            h, rebuild = _split(output)
            u = dirs[layer].to(device=h.device, dtype=h.dtype)
            return rebuild(h - (h @ u)[..., None] * u)

        return hook

    with _hooks(layers, dirs, make) as handles:
        yield handles
