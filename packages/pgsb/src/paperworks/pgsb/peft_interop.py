"""peft interoperability and the peer merge: peft's own ``add_weighted_adapter``.

Import this module explicitly; it needs the ``peft`` extra (``pip install paperworks-pgsb[peft]``).
Layers are ``nn.Linear`` or GPT-2-style ``Conv1D`` (peft's ``fan_in_fan_out``); LoRA factors are in
peft's layout for both (``lora_A``: ``(r, d_in)``, ``lora_B``: ``(d_out, r)``).
"""

from __future__ import annotations

import copy
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch
from torch import nn

from paperworks.core.validate import fraction, one_of, positive_int

from .lora import LoRAAdapter, MergedLoRA, adapters_to_peft_state_dict, check_matrix

__all__ = [
    "PEFT_COMBINATIONS",
    "from_peft_model",
    "peft_merge",
    "peft_weighted_merge",
    "save_merged",
    "to_peft_model",
]

PEFT_COMBINATIONS = ("linear", "svd", "cat", "ties", "ties_svd", "dare_ties", "dare_linear")
_PREFIX = "base_model.model."


def _peft():
    try:
        import peft
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "paperworks.pgsb.peft_interop needs peft: pip install 'paperworks-pgsb[peft]'"
        ) from exc
    return peft


def _uniform(task: Mapping[str, LoRAAdapter], k: int) -> tuple[int, float, bool]:
    if not isinstance(task, Mapping) or not task:
        raise ValueError(f"adapters[{k}]: expected a non-empty mapping module name -> LoRAAdapter")
    for name, ad in task.items():
        if not isinstance(ad, LoRAAdapter):
            raise TypeError(f"adapters[{k}][{name!r}]: expected a LoRAAdapter, got {type(ad).__name__}")
    first = next(iter(task.values()))
    for name, ad in task.items():
        if (ad.rank, ad.scaling, ad.use_rslora) != (first.rank, first.scaling, first.use_rslora):
            raise ValueError(
                f"adapters[{k}][{name!r}]: one peft adapter needs one rank/alpha; got rank {ad.rank} vs "
                f"{first.rank}, scaling {ad.scaling:g} vs {first.scaling:g}"
            )
    alpha = first.rank if first.alpha is None else first.alpha
    return first.rank, float(alpha), first.use_rslora


def _check_base(base: object) -> nn.Module:
    if not isinstance(base, nn.Module):
        raise TypeError(f"base: expected an nn.Module, got {type(base).__name__}")
    return base


def to_peft_model(base: nn.Module, adapters: Sequence[Mapping[str, LoRAAdapter]]):
    """A peft ``PeftModel`` over a deep copy of ``base`` holding the K adapters as ``task0 .. task{K-1}``."""
    peft = _peft()
    _check_base(base)
    if isinstance(adapters, Mapping) or not isinstance(adapters, Sequence) or len(adapters) == 0:
        raise ValueError("adapters: expected a non-empty sequence of per-task adapters (K >= 1)")
    model = None
    for k, task in enumerate(adapters):
        r, alpha, rs = _uniform(task, k)
        cfg = peft.LoraConfig(
            r=r, lora_alpha=alpha, use_rslora=rs, target_modules=sorted(task), lora_dropout=0.0
        )
        if model is None:
            model = peft.get_peft_model(copy.deepcopy(base), cfg, adapter_name=f"task{k}")
        else:
            model.add_adapter(f"task{k}", cfg)
        result = peft.set_peft_model_state_dict(
            model, adapters_to_peft_state_dict(task), adapter_name=f"task{k}"
        )
        missing = [key for key in result.missing_keys if f"task{k}" in key and "lora_" in key]
        if missing:
            raise KeyError(f"adapters[{k}]: peft did not accept {missing[:3]}")
    return model


def from_peft_model(model, adapter_name: str = "default") -> dict[str, LoRAAdapter]:
    """Read one adapter of a ``PeftModel`` as ``{module name: LoRAAdapter}``, each layer with the scaling
    peft applies to it (``rank_pattern``, ``alpha_pattern`` and rsLoRA included). DoRA, LoRA biases,
    embedding LoRAs and convolution LoRAs raise ``ValueError``: a LoRA (A, B) merge cannot carry them."""
    _peft()
    if not hasattr(model, "peft_config"):
        raise TypeError(f"model: expected a peft PeftModel, got {type(model).__name__}")
    if not isinstance(adapter_name, str) or adapter_name not in model.peft_config:
        raise ValueError(f"adapter_name: expected one of {sorted(model.peft_config)}, got {adapter_name!r}")
    out: dict[str, LoRAAdapter] = {}
    for name, m in model.named_modules():
        key = name.removeprefix(_PREFIX)
        emb = getattr(m, "lora_embedding_A", None)
        if emb is not None and adapter_name in emb:
            raise ValueError(f"model[{key!r}]: an embedding LoRA cannot be merged as a linear (A, B) pair")
        lora_A = getattr(m, "lora_A", None)
        if not isinstance(lora_A, nn.ModuleDict) or adapter_name not in lora_A:
            continue
        if getattr(m, "use_dora", {}).get(adapter_name, False):
            raise ValueError(
                f"model[{key!r}]: a DoRA adapter (use_dora=True) cannot be merged as a LoRA pair"
            )
        a_mod, b_mod = lora_A[adapter_name], m.lora_B[adapter_name]
        if getattr(b_mod, "bias", None) is not None:
            raise ValueError(f"model[{key!r}]: a LoRA with a bias (lora_bias=True) cannot be merged")
        A = check_matrix(f"model[{key!r}] lora_A", a_mod.weight.detach())
        B = check_matrix(f"model[{key!r}] lora_B", b_mod.weight.detach())
        s = float(m.scaling[adapter_name])
        out[key] = LoRAAdapter(A.clone(), B.clone(), alpha=s * A.shape[0])
    if not out:
        raise ValueError(f"adapter_name: adapter {adapter_name!r} has no LoRA layers in model")
    return out


def peft_weighted_merge(
    model,
    adapter_names: Sequence[str],
    combination_type: str = "ties",
    *,
    weights: Sequence[float] | None = None,
    density: float | None = None,
    svd_rank: int | None = None,
) -> dict[str, torch.Tensor]:
    """peft's ``add_weighted_adapter`` on an existing ``PeftModel``: ``{module name: Delta_merged}`` in the
    module's weight layout; the temporary merged adapter is deleted again, so the model is left as it
    was. ``weights``: one per adapter (default 1.0 each); ``density`` (``ties``/``dare_*``, default 0.2)."""
    combination_type = one_of(combination_type, "combination_type", PEFT_COMBINATIONS)
    names = list(adapter_names)
    if not names:
        raise ValueError("adapter_names: expected at least one adapter name")
    for n in names:
        if n not in model.peft_config:
            raise ValueError(
                f"adapter_names: {n!r} is not an adapter of the model ({sorted(model.peft_config)})"
            )
    w = [1.0] * len(names) if weights is None else [float(x) for x in weights]
    if len(w) != len(names):
        raise ValueError(f"weights: expected {len(names)} values, got {len(w)}")
    if not all(torch.isfinite(torch.tensor(w))):
        raise ValueError(f"weights: expected finite numbers, got {w}")
    kwargs = {}
    if combination_type in ("ties", "ties_svd", "dare_ties", "dare_linear"):
        kwargs["density"] = fraction(0.2 if density is None else density, "density", open_low=True)
    if svd_rank is not None:
        kwargs["svd_rank"] = positive_int(svd_rank, "svd_rank")
    tmp = "__pgsb_merged__"
    model.add_weighted_adapter(names, w, tmp, combination_type=combination_type, **kwargs)
    try:
        out = {}
        with torch.no_grad():
            for name, m in model.named_modules():
                lora_A = getattr(m, "lora_A", None)
                if isinstance(lora_A, nn.ModuleDict) and tmp in lora_A:
                    out[name.removeprefix(_PREFIX)] = m.get_delta_weight(tmp).detach().clone()
    finally:
        model.delete_adapter(tmp)
    return out


def peft_merge(
    base: nn.Module,
    adapters: Sequence[Mapping[str, LoRAAdapter]],
    combination_type: str = "ties",
    *,
    weights: Sequence[float] | None = None,
    density: float | None = None,
    svd_rank: int | None = None,
) -> dict[str, torch.Tensor]:
    """The peer end to end: build a ``PeftModel`` over a copy of ``base`` holding the K adapters, run
    peft's ``add_weighted_adapter`` and return ``{module name: Delta_merged}`` (module weight layout)."""
    combination_type = one_of(combination_type, "combination_type", PEFT_COMBINATIONS)
    model = to_peft_model(base, adapters)
    names = [f"task{k}" for k in range(len(adapters))]
    return peft_weighted_merge(
        model, names, combination_type, weights=weights, density=density, svd_rank=svd_rank
    )


def save_merged(
    merged: MergedLoRA, folder: str | Path, *, base_model_name_or_path: str | None = None
) -> Path:
    """Write ``merged`` as a peft adapter folder (``adapter_config.json`` and
    ``adapter_model.safetensors`` at the top of ``folder``), each file written atomically."""
    peft = _peft()
    from safetensors.torch import save_file

    if not isinstance(merged, MergedLoRA):
        raise TypeError(f"merged: expected a MergedLoRA, got {type(merged).__name__}")
    if not isinstance(folder, str | os.PathLike):
        raise TypeError(f"folder: expected a path, got {type(folder).__name__}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cfg = peft.LoraConfig(**merged.lora_config(), base_model_name_or_path=base_model_name_or_path)
    tensors = {k: v.detach().cpu().contiguous() for k, v in merged.state_dict().items()}
    with tempfile.TemporaryDirectory(dir=folder, prefix=".tmp-") as tmp:
        cfg.save_pretrained(tmp)
        save_file(tensors, os.path.join(tmp, "adapter_model.safetensors"), metadata={"format": "pt"})
        for f in ("adapter_config.json", "adapter_model.safetensors"):
            os.replace(os.path.join(tmp, f), folder / f)
    return folder
