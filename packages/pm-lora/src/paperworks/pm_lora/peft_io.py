"""The merged PM-LoRA adapter as a peft LoRA state dict or ``save_pretrained`` folder, and back.

peft names the factors of a LoRA on module ``name`` ``base_model.model.<name>.lora_A.weight``
(shape (r, in)) and ``base_model.model.<name>.lora_B.weight`` (shape (out, r)), for an ``nn.Linear``
and a GPT-2 ``Conv1D`` alike (``fan_in_fan_out`` only transposes the base weight), and scales their
product by ``lora_alpha / r`` (``lora_alpha / sqrt(r)`` with ``use_rslora``). A ``save_pretrained``
folder holds ``adapter_config.json`` and ``adapter_model.safetensors`` (or ``adapter_model.bin``).
We export with ``lora_alpha = r`` (scaling 1). The state-dict functions need no peft;
:func:`to_peft_model` needs the ``peft`` extra, the folder functions ``safetensors`` (in that extra).
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path

import torch
from torch import nn

from paperworks.core.io import atomic_write_bytes, atomic_write_json
from paperworks.core.validate import fraction, positive_float, positive_int

from .adapter import ContinualLoRALinear, PMLoRA, PMLoRAConfig

__all__ = [
    "base_model_copy",
    "from_peft_dir",
    "load_peft_state_dict",
    "save_peft_dir",
    "to_peft_model",
    "to_peft_state_dict",
]

PREFIX = "base_model.model."
CONFIG_NAME = "adapter_config.json"
WEIGHTS_SAFE = "adapter_model.safetensors"
WEIGHTS_BIN = "adapter_model.bin"
_KEY = re.compile(r"base_model\.model\.(?P<name>.+)\.lora_(?P<which>[AB])\.weight")


def _keys(name: str) -> tuple[str, str]:
    return f"{PREFIX}{name}.lora_A.weight", f"{PREFIX}{name}.lora_B.weight"


def _check_closed(pm: PMLoRA) -> None:
    if not isinstance(pm, PMLoRA):
        raise TypeError(f"pm: expected a PMLoRA, got {type(pm).__name__}")
    if pm.task_open or any(layer.task_A is not None for layer in pm.layers.values()):
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
    peft's ``lora_alpha / r``, a finite number > 0). Every key is checked before anything is written:
    shape, dtype and device must match the layer's; missing or unexpected keys raise ``KeyError``."""
    _check_closed(pm)
    scaling = positive_float(scaling, "scaling")
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"state_dict: expected a mapping of name to tensor, got {type(state_dict).__name__}")
    expected = {k for name in pm.layers for k in _keys(name)}
    extra = sorted(set(state_dict) - expected)
    missing = sorted(expected - set(state_dict))
    if missing or extra:
        raise KeyError(f"state_dict: missing keys {missing[:4]}, unexpected keys {extra[:4]}")
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
    """A deep copy of the wrapped model with every adapted layer replaced by its plain base layer."""
    if not isinstance(pm, PMLoRA):
        raise TypeError(f"pm: expected a PMLoRA, got {type(pm).__name__}")
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


def _lora_config(pm: PMLoRA):
    from peft import LoraConfig

    r = pm.config.rank
    conv = [layer.fan_in_fan_out for layer in pm.layers.values()]
    return LoraConfig(
        r=r,
        lora_alpha=r,
        lora_dropout=0.0,
        target_modules=list(pm.layers),
        bias="none",
        fan_in_fan_out=all(conv),
    )


def to_peft_model(pm: PMLoRA):
    """A ``peft.PeftModel`` on a copy of the base model carrying ``pm``'s merged adapter (extra ``peft``)."""
    _check_closed(pm)
    try:
        from peft import get_peft_model, set_peft_model_state_dict
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("to_peft_model needs peft: pip install 'paperworks-pm-lora[peft]'") from e
    sd = to_peft_state_dict(pm)
    peft_model = get_peft_model(base_model_copy(pm), _lora_config(pm))
    result = set_peft_model_state_dict(peft_model, sd)
    bad = [k for k in getattr(result, "unexpected_keys", []) if "lora" in k]
    if bad:
        raise RuntimeError(f"peft did not accept keys {bad}")
    return peft_model


def _safetensors():
    try:
        import safetensors.torch as st
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("peft folders need safetensors: pip install 'paperworks-pm-lora[peft]'") from e
    return st


def save_peft_dir(
    pm: PMLoRA, path: str | os.PathLike[str], *, base_model_name_or_path: str | None = None
) -> Path:
    """Write ``pm``'s merged adapter as a peft ``save_pretrained`` folder (config + safetensors).

    ``peft.PeftModel.from_pretrained(base, path)`` loads it (``lora_alpha = r``). Files are written
    atomically; returns the folder.
    """
    _check_closed(pm)
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path: expected a folder path, got {type(path).__name__}")
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"path: {str(folder)!r} exists and is not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    st = _safetensors()
    tensors = {k: v.detach().cpu().contiguous() for k, v in to_peft_state_dict(pm).items()}
    r = pm.config.rank
    config = {
        "peft_type": "LORA",
        "task_type": None,
        "base_model_name_or_path": base_model_name_or_path,
        "r": r,
        "lora_alpha": r,
        "lora_dropout": 0.0,
        "target_modules": sorted(pm.layers),
        "fan_in_fan_out": all(layer.fan_in_fan_out for layer in pm.layers.values()),
        "bias": "none",
        "use_rslora": False,
        "use_dora": False,
        "inference_mode": True,
        "rank_pattern": {},
        "alpha_pattern": {},
        "modules_to_save": None,
    }
    atomic_write_bytes(folder / WEIGHTS_SAFE, st.save(tensors))
    atomic_write_json(folder / CONFIG_NAME, config)
    return folder


def _read_config(folder: Path) -> dict:
    cfg_path = folder / CONFIG_NAME
    if not cfg_path.is_file():
        raise FileNotFoundError(
            f"path: no {CONFIG_NAME} in {str(folder)!r} (not a peft save_pretrained folder)"
        )
    try:
        cfg = json.loads(cfg_path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"path: {CONFIG_NAME} is not valid JSON ({e})") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"path: {CONFIG_NAME} must hold a JSON object")
    if str(cfg.get("peft_type", "")).upper() != "LORA":
        raise ValueError(f"path: expected a LoRA adapter (peft_type 'LORA'), got {cfg.get('peft_type')!r}")
    for key, ok in (
        ("use_dora", lambda v: not v),
        ("rank_pattern", lambda v: not v),
        ("alpha_pattern", lambda v: not v),
        ("modules_to_save", lambda v: not v),
        ("bias", lambda v: v in (None, "none")),
        ("lora_bias", lambda v: not v),
    ):
        if key in cfg and not ok(cfg[key]):
            raise ValueError(
                f"path: {CONFIG_NAME} sets {key}={cfg[key]!r}, which a PM-LoRA adapter cannot hold"
            )
    return cfg


def _read_weights(folder: Path) -> dict[str, torch.Tensor]:
    if (folder / WEIGHTS_SAFE).is_file():
        return dict(_safetensors().load_file(str(folder / WEIGHTS_SAFE)))
    if (folder / WEIGHTS_BIN).is_file():
        return dict(torch.load(folder / WEIGHTS_BIN, map_location="cpu", weights_only=True))
    raise FileNotFoundError(f"path: neither {WEIGHTS_SAFE} nor {WEIGHTS_BIN} in {str(folder)!r}")


def from_peft_dir(
    path: str | os.PathLike[str],
    model: nn.Module,
    *,
    task_rank: int | None = None,
    energy: float = 0.95,
) -> PMLoRA:
    """A :class:`PMLoRA` on ``model`` whose merged adapter is the LoRA of a peft ``save_pretrained`` folder.

    The targets are the modules named in the weights, the rank is the config's ``r``, ``B`` is scaled by
    ``lora_alpha / r`` (``/ sqrt(r)`` with ``use_rslora``); tensors are cast to each layer's dtype and
    device. ``task_rank`` (default ``min(4, r)``) and ``energy`` configure the tasks that follow.
    ``model`` is wrapped in place, as by :class:`PMLoRA`.
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path: expected a folder path, got {type(path).__name__}")
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"path: {str(folder)!r} is not a folder")
    if not isinstance(model, nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    cfg = _read_config(folder)
    r = positive_int(cfg.get("r"), "r (adapter_config.json)")
    alpha = positive_float(cfg.get("lora_alpha", r), "lora_alpha (adapter_config.json)")
    scaling = alpha / math.sqrt(r) if cfg.get("use_rslora") else alpha / r
    weights = _read_weights(folder)
    names, bad = set(), []
    for k in weights:
        m = _KEY.fullmatch(k)
        if m is None:
            bad.append(k)
        else:
            names.add(m["name"])
    if bad or not names:
        raise ValueError(f"path: the weights hold no LoRA factors or other keys, e.g. {bad[:3]}")
    task_rank = min(4, r) if task_rank is None else positive_int(task_rank, "task_rank")
    energy = fraction(energy, "energy", open_low=True)
    pattern = "|".join(re.escape(n) for n in sorted(names))
    pm = PMLoRA(model, PMLoRAConfig(rank=r, task_rank=task_rank, energy=energy, target_modules=pattern))
    missing = sorted(names - set(pm.layers))
    if missing:
        raise ValueError(
            f"path: the adapter targets modules {missing[:3]} that model has no linear layer for"
        )
    sd = {}
    for name, layer in pm.layers.items():
        for key in _keys(name):
            if key in weights:  # a missing factor is reported by load_peft_state_dict
                sd[key] = weights[key].to(layer.base.weight)
    load_peft_state_dict(pm, sd, scaling=scaling)
    return pm
