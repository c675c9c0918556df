"""The merged PM-LoRA adapter as a peft LoRA state dict, and back.

peft names the factors of a LoRA on module ``name`` ``base_model.model.<name>.lora_A.weight``
(shape (r, in)) and ``base_model.model.<name>.lora_B.weight`` (shape (out, r)), and scales their
product by ``lora_alpha / r``. We export with ``lora_alpha = r`` (scaling 1), so the dict loads into a
peft model built with ``LoraConfig(r=r, lora_alpha=r, target_modules=[...])``. The dict format needs no
peft; :func:`to_peft_model` (extra ``peft``) builds the peft model itself.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

import torch
from torch import nn

from .adapter import ContinualLoRALinear, PMLoRA

__all__ = ["base_model_copy", "load_peft_state_dict", "to_peft_model", "to_peft_state_dict"]

PREFIX = "base_model.model."


def _keys(name: str) -> tuple[str, str]:
    return f"{PREFIX}{name}.lora_A.weight", f"{PREFIX}{name}.lora_B.weight"


def _check_closed(pm: PMLoRA) -> None:
    if not isinstance(pm, PMLoRA):
        raise TypeError(f"pm: expected a PMLoRA, got {type(pm).__name__}")
    if any(layer.task_A is not None for layer in pm.layers.values()):
        raise RuntimeError("pm: a task adapter is still open; call end_task() before exporting or loading")


def to_peft_state_dict(pm: PMLoRA) -> dict[str, torch.Tensor]:
    """The merged adapter of every target layer as peft LoRA tensors (copies, scaling 1)."""
    _check_closed(pm)
    out: dict[str, torch.Tensor] = {}
    for name, layer in pm.layers.items():
        ka, kb = _keys(name)
        out[ka] = layer.merged_A.detach().clone()
        out[kb] = layer.merged_B.detach().clone()
    return out


def load_peft_state_dict(pm: PMLoRA, state_dict: Mapping[str, torch.Tensor], *, scaling: float = 1.0) -> None:
    """Load peft LoRA factors into ``pm``'s merged adapters (``B`` is multiplied by ``scaling``,
    peft's ``lora_alpha / r``). Every key is checked before anything is written: shape, dtype and
    device must match the layer's; missing or unexpected keys raise ``KeyError``."""
    _check_closed(pm)
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"state_dict: expected a mapping of name to tensor, got {type(state_dict).__name__}")
    expected = {k for name in pm.layers for k in _keys(name)}
    extra = sorted(set(state_dict) - expected)
    missing = sorted(expected - set(state_dict))
    if missing or extra:
        raise KeyError(f"state_dict: missing keys {missing}, unexpected keys {extra}")
    staged: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
    for name, layer in pm.layers.items():
        ka, kb = _keys(name)
        A, B = state_dict[ka], state_dict[kb]
        for key, t, shape in ((ka, A, layer.merged_A.shape), (kb, B, layer.merged_B.shape)):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"state_dict[{key!r}]: expected a tensor, got {type(t).__name__}")
            if t.shape != shape:
                raise ValueError(
                    f"state_dict[{key!r}]: expected shape {tuple(shape)} (rank {layer.rank} adapter of "
                    f"{layer.out_features}x{layer.in_features}), got {tuple(t.shape)}"
                )
            w = layer.base.weight
            if t.dtype != w.dtype or t.device != w.device:
                raise ValueError(
                    f"state_dict[{key!r}]: dtype/device {t.dtype}/{t.device} does not match the base layer's "
                    f"{w.dtype}/{w.device}; convert it with .to() first"
                )
            if not torch.isfinite(t).all():
                raise ValueError(f"state_dict[{key!r}]: contains NaN or inf")
        staged[name] = (B.detach().clone() * scaling, A.detach().clone())
    for name, (B, A) in staged.items():
        layer = pm.layers[name]
        layer.merged_B, layer.merged_A = B, A


def base_model_copy(pm: PMLoRA) -> nn.Module:
    """A deep copy of the wrapped model with every adapted layer replaced by its plain base linear."""
    model = copy.deepcopy(pm.model)
    for name in pm.layers:
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        layer = getattr(parent, child)
        assert isinstance(layer, ContinualLoRALinear)
        setattr(parent, child, layer.base)
    for p in model.parameters():
        p.requires_grad_(True)
    return model


def to_peft_model(pm: PMLoRA):
    """A ``peft.PeftModel`` on a copy of the base model carrying ``pm``'s merged adapter (extra ``peft``)."""
    try:
        from peft import LoraConfig, get_peft_model, set_peft_model_state_dict
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("to_peft_model needs peft: pip install 'paperworks-pm-lora[peft]'") from e
    sd = to_peft_state_dict(pm)
    r = pm.config.rank
    cfg = LoraConfig(r=r, lora_alpha=r, lora_dropout=0.0, target_modules=list(pm.layers), bias="none")
    peft_model = get_peft_model(base_model_copy(pm), cfg)
    result = set_peft_model_state_dict(peft_model, sd)
    bad = [k for k in getattr(result, "unexpected_keys", []) if "lora" in k]
    if bad:
        raise RuntimeError(f"peft did not accept keys {bad}")
    return peft_model
