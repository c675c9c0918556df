"""``merge``: one entry point for every merge method over a model's LoRA-adapted linear layers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from .baselines import dare_merge, knots_merge, task_arithmetic_merge, ties_merge
from .lora import LoRAAdapter, adapters_from_peft_state_dict
from .pgsb import PGSBConfig, pgsb_merge

__all__ = ["METHODS", "merge", "merge_layer"]

METHODS = ("pgsb", "pgsb_no_pretrained", "pgsb_no_shared", "task_arithmetic", "ties", "dare", "knots")
_OPTIONS = {
    "pgsb": {"support_threshold", "min_support", "lam"},
    "pgsb_no_pretrained": {"support_threshold", "min_support", "lam"},
    "pgsb_no_shared": {"support_threshold", "min_support", "lam"},
    "task_arithmetic": {"lam"},
    "ties": {"density", "lam"},
    "dare": {"density", "lam", "combine", "generator"},
    "knots": {"density", "lam", "combine"},
}


def merge_layer(
    W0: torch.Tensor, adapters: Sequence[LoRAAdapter], method: str = "pgsb", **options: Any
) -> torch.Tensor:
    """Merged update ``(d_out, d_in)`` of one layer with pretrained weight ``W0`` ``(d_out, d_in)``."""
    if method not in METHODS:
        raise ValueError(f"method: expected one of {METHODS}, got {method!r}")
    unknown = set(options) - _OPTIONS[method]
    if unknown:
        raise ValueError(f"options: {sorted(unknown)} not understood by method {method!r}")
    if len(adapters) == 0:
        raise ValueError("adapters: expected at least one adapter (K >= 1), got K = 0")
    if method.startswith("pgsb"):
        cfg = PGSBConfig(
            use_pretrained=method != "pgsb_no_pretrained",
            use_shared_basis=method != "pgsb_no_shared",
            **options,
        )
        B, A = pgsb_merge(W0, adapters, cfg)
        return B @ A
    if method == "knots":
        return knots_merge(adapters, **options)
    deltas = torch.stack([ad.delta() for ad in adapters])
    if method == "task_arithmetic":
        return task_arithmetic_merge(deltas, **options)
    if method == "ties":
        return ties_merge(deltas, **options)
    return dare_merge(deltas, **options)


def _base_weights(base: nn.Module | Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    if isinstance(base, nn.Module):
        return {n: m.weight.detach() for n, m in base.named_modules() if isinstance(m, nn.Linear)}
    if isinstance(base, Mapping):
        out = {}
        for name, w in base.items():
            if not isinstance(w, torch.Tensor) or w.ndim != 2:
                raise ValueError(f"base[{name!r}]: expected a 2-D weight tensor")
            out[name] = w.detach()
        return out
    raise TypeError(f"base: expected an nn.Module or a mapping name -> weight, got {type(base).__name__}")


def _as_adapters(
    k: int, adapter: Mapping[str, Any], lora_alpha: float | None, use_rslora: bool | None
) -> dict[str, LoRAAdapter]:
    if not isinstance(adapter, Mapping) or not adapter:
        raise ValueError(f"adapters[{k}]: expected a non-empty mapping (module name -> adapter)")
    if any(".lora_A." in key for key in adapter):
        if lora_alpha is None or use_rslora is None:
            raise ValueError(
                f"adapters[{k}]: a peft state dict does not carry its scaling; pass lora_alpha= and "
                "use_rslora= (from its LoraConfig), or give LoRAAdapter objects"
            )
        return adapters_from_peft_state_dict(adapter, alpha=lora_alpha, use_rslora=use_rslora)
    out = {}
    for name, ad in adapter.items():
        if isinstance(ad, LoRAAdapter):
            out[name] = ad
        elif isinstance(ad, tuple) and len(ad) == 2:
            out[name] = LoRAAdapter(ad[0], ad[1], alpha=lora_alpha, use_rslora=bool(use_rslora))
        else:
            raise TypeError(f"adapters[{k}][{name!r}]: expected a LoRAAdapter or an (A, B) tuple")
    return out


def merge(
    base: nn.Module | Mapping[str, torch.Tensor],
    adapters: Sequence[Mapping[str, Any]],
    method: str = "pgsb",
    *,
    output: str = "weights",
    lora_alpha: float | None = None,
    use_rslora: bool | None = None,
    **options: Any,
) -> dict[str, torch.Tensor]:
    """Merge K task adapters into the base model's linear layers.

    ``base``: an ``nn.Module`` (its ``nn.Linear`` weights by module name) or ``{name: W0}``;
    ``adapters``: K >= 1 mappings ``{module name: LoRAAdapter | (A, B)}`` or peft LoRA state dicts (then
    ``lora_alpha`` and ``use_rslora`` are required: the scaling is not in a state dict). A layer absent
    from some adapters counts as a zero update for those tasks. ``output``: ``"weights"`` gives
    ``{name: W0 + Delta_merged}``, ``"delta"`` gives ``{name: Delta_merged}``. ``options`` go to the method
    (``lam``, ``density``, ``support_threshold``, ...).
    """
    if output not in ("weights", "delta"):
        raise ValueError(f"output: expected 'weights' or 'delta', got {output!r}")
    if isinstance(adapters, Mapping) or len(adapters) == 0:
        raise ValueError("adapters: expected a non-empty sequence of per-task adapters (K >= 1)")
    weights = _base_weights(base)
    tasks = [_as_adapters(k, ad, lora_alpha, use_rslora) for k, ad in enumerate(adapters)]
    names = sorted(set().union(*tasks))
    for k, task in enumerate(tasks):
        for name, ad in task.items():
            if name not in weights:
                raise KeyError(f"adapters[{k}]: layer {name!r} is not a linear layer of base")
            if ad.shape != tuple(weights[name].shape):
                raise ValueError(
                    f"adapters[{k}][{name!r}]: expected shape {tuple(weights[name].shape)} of the base "
                    f"weight, got {ad.shape}"
                )
    out = {}
    with torch.no_grad():
        for name in names:
            W0 = weights[name]
            if not torch.isfinite(W0).all():
                raise ValueError(f"base[{name!r}]: contains NaN or inf")
            layer = [task[name] for task in tasks if name in task]
            delta = merge_layer(W0, layer, method, **options).to(W0.dtype)
            out[name] = W0 + delta if output == "weights" else delta
    return out
