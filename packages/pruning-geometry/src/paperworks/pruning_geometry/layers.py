"""Finding, removing and temporarily dropping the decoder layers of a Hugging Face causal LM.

A model is supported when its decoder layers are a :class:`torch.nn.ModuleList` at
``model.model.layers`` (``LlamaForCausalLM``, ``MistralForCausalLM``, ``Qwen2ForCausalLM``, ...), at
``model.layers`` (a bare ``LlamaModel``) or at a dotted path given as ``layers_attr``. Removing layers
keeps the others' weights untouched, renumbers their attention ``layer_idx`` (so a KV cache still
lines up) and updates ``config.num_hidden_layers`` (and ``config.layer_types`` where the config has
one), so the pruned model saves with ``save_pretrained`` and reloads with ``from_pretrained``.
"""

from __future__ import annotations

import copy
import numbers
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from torch import nn

__all__ = ["find_layers", "keep_layers", "n_layers", "remove_layers", "without_layers"]

_DEFAULT_PATHS = ("model.layers", "layers")


def _resolve(model: nn.Module, path: str) -> tuple[nn.Module, str, object]:
    parent: object = model
    parts = path.split(".")
    for part in parts[:-1]:
        parent = getattr(parent, part)
    return parent, parts[-1], getattr(parent, parts[-1])  # type: ignore[return-value]


def find_layers(model: nn.Module, layers_attr: str | None = None) -> tuple[nn.Module, str, nn.ModuleList]:
    """``(parent, name, layers)``: the decoder layers ``parent.<name>`` of ``model`` (a ModuleList).

    ``layers_attr``: a dotted path from ``model`` (e.g. ``"model.layers"``); ``None`` tries
    ``model.layers`` (``*ForCausalLM``) then ``layers`` (a bare base model).
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    paths = (layers_attr,) if layers_attr is not None else _DEFAULT_PATHS
    for path in paths:
        if not isinstance(path, str) or not path:
            raise TypeError(f"layers_attr: expected a dotted attribute path, got {path!r}")
        try:
            parent, name, layers = _resolve(model, path)
        except AttributeError:
            if layers_attr is not None:
                raise AttributeError(
                    f"layers_attr: {type(model).__name__} has no attribute {layers_attr!r}"
                ) from None
            continue
        if not isinstance(layers, nn.ModuleList):
            raise TypeError(
                f"model.{path}: expected the decoder layers as a torch.nn.ModuleList, "
                f"got {type(layers).__name__}"
            )
        return parent, name, layers  # type: ignore[return-value]
    raise AttributeError(
        f"model: {type(model).__name__} has no decoder layers at 'model.layers' or 'layers' "
        "(pass layers_attr='dotted.path' to a torch.nn.ModuleList)"
    )


def n_layers(model: nn.Module, layers_attr: str | None = None) -> int:
    """Number of decoder layers of ``model``."""
    return len(find_layers(model, layers_attr)[2])


def _check_indices(indices: Iterable[int], n: int, name: str) -> list[int]:
    out: list[int] = []
    for i in indices:
        if isinstance(i, bool) or not isinstance(i, numbers.Integral):
            raise TypeError(f"{name}: expected layer indices (ints), got {i!r}")
        i = int(i)
        if not 0 <= i < n:
            raise ValueError(f"{name}: layer index {i} out of range for a model of {n} layers (0..{n - 1})")
        if i in out:
            raise ValueError(f"{name}: layer index {i} given twice")
        out.append(i)
    return out


def _configs(model: nn.Module) -> list[object]:
    """Every distinct ``config`` object reachable on the model's attribute chain to its layers."""
    seen: list[object] = []
    for obj in (model, getattr(model, "model", None)):
        cfg = getattr(obj, "config", None)
        if cfg is not None and all(cfg is not c for c in seen):
            seen.append(cfg)
    return seen


def _set_layers(
    model: nn.Module, parent: nn.Module, name: str, kept: Sequence[nn.Module], old: Sequence[int]
):
    setattr(parent, name, nn.ModuleList(kept))
    for cfg in _configs(model):
        if hasattr(cfg, "num_hidden_layers"):
            cfg.num_hidden_layers = len(kept)
        types = getattr(cfg, "layer_types", None)
        if isinstance(types, list | tuple) and len(types) >= len(old) and old:
            cfg.layer_types = [types[i] for i in old]


def _renumber(layers: Sequence[nn.Module]) -> None:
    for new, layer in enumerate(layers):
        for mod in layer.modules():
            if hasattr(mod, "layer_idx") and isinstance(mod.layer_idx, int):
                mod.layer_idx = new


def keep_layers(model: nn.Module, keep: Iterable[int], *, layers_attr: str | None = None) -> nn.Module:
    """A deep copy of ``model`` holding only the decoder layers ``keep`` (in their original order)."""
    n = n_layers(model, layers_attr)
    kept = sorted(_check_indices(keep, n, "keep"))
    if not kept:
        raise ValueError("keep: expected at least one layer to keep (removing all layers is not allowed)")
    new = copy.deepcopy(model)
    parent, name, layers = find_layers(new, layers_attr)
    chosen = [layers[i] for i in kept]
    _renumber(chosen)
    _set_layers(new, parent, name, chosen, kept)
    return new


def remove_layers(model: nn.Module, remove: Iterable[int], *, layers_attr: str | None = None) -> nn.Module:
    """A deep copy of ``model`` without the decoder layers ``remove``; config updated, ``model`` unchanged.

    Raises ``ValueError`` for an index out of range, a repeated index, or removing every layer.
    """
    n = n_layers(model, layers_attr)
    drop = set(_check_indices(remove, n, "remove"))
    if len(drop) == n:
        raise ValueError(f"remove: cannot remove all {n} layers (at least one must stay)")
    return keep_layers(model, [i for i in range(n) if i not in drop], layers_attr=layers_attr)


@contextmanager
def without_layers(
    model: nn.Module, remove: Iterable[int], *, layers_attr: str | None = None
) -> Iterator[nn.Module]:
    """Run ``model`` without the layers ``remove`` inside the block (no copy); restored on exit.

    Cheap (it swaps the ModuleList and ``config.num_hidden_layers``): what the greedy search uses
    to evaluate each candidate removal. Layer ``layer_idx`` values are left as they are, so use it
    without a KV cache (``use_cache=False``); :func:`remove_layers` makes a clean copy.
    """
    parent, name, layers = find_layers(model, layers_attr)
    n = len(layers)
    drop = set(_check_indices(remove, n, "remove"))
    if len(drop) == n:
        raise ValueError(f"remove: cannot remove all {n} layers (at least one must stay)")
    cfgs = _configs(model)
    saved = [(c, getattr(c, "num_hidden_layers", None), getattr(c, "layer_types", None)) for c in cfgs]
    kept_idx = [i for i in range(n) if i not in drop]
    _set_layers(model, parent, name, [layers[i] for i in kept_idx], kept_idx)
    try:
        yield model
    finally:
        setattr(parent, name, layers)
        for c, num, types in saved:
            if num is not None:
                c.num_hidden_layers = num
            if types is not None:
                c.layer_types = types
