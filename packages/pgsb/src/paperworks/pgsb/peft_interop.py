"""peft interoperability and the peer merge: peft's own ``add_weighted_adapter``.

Import this module explicitly; it needs the ``peft`` extra (``pip install paperworks-pgsb[peft]``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

import torch
from torch import nn

from .lora import LoRAAdapter, adapters_from_peft_state_dict, adapters_to_peft_state_dict

__all__ = ["PEFT_COMBINATIONS", "from_peft_model", "peft_merge", "to_peft_model"]

PEFT_COMBINATIONS = ("linear", "svd", "cat", "ties", "dare_ties")


def _peft():
    try:
        import peft
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "paperworks.pgsb.peft_interop needs peft: pip install 'paperworks-pgsb[peft]'"
        ) from exc
    return peft


def _uniform(task: Mapping[str, LoRAAdapter], k: int) -> tuple[int, float, bool]:
    first = next(iter(task.values()))
    for name, ad in task.items():
        if (ad.rank, ad.scaling, ad.use_rslora) != (first.rank, first.scaling, first.use_rslora):
            raise ValueError(
                f"adapters[{k}][{name!r}]: peft needs one rank/alpha per adapter; got rank {ad.rank} vs "
                f"{first.rank}, scaling {ad.scaling:g} vs {first.scaling:g}"
            )
    alpha = first.rank if first.alpha is None else first.alpha
    return first.rank, float(alpha), first.use_rslora


def to_peft_model(base: nn.Module, adapters: Sequence[Mapping[str, LoRAAdapter]]):
    """A peft ``PeftModel`` over a deep copy of ``base`` holding the K adapters as ``task0 .. task{K-1}``."""
    peft = _peft()
    if len(adapters) == 0:
        raise ValueError("adapters: expected at least one adapter (K >= 1), got K = 0")
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
    """Read one adapter of a ``PeftModel`` as ``{module name: LoRAAdapter}`` (scaling from its config)."""
    peft = _peft()
    cfg = model.peft_config[adapter_name]
    sd = peft.get_peft_model_state_dict(model, adapter_name=adapter_name)
    return adapters_from_peft_state_dict(sd, alpha=cfg.lora_alpha, use_rslora=cfg.use_rslora)


def peft_merge(
    base: nn.Module,
    adapters: Sequence[Mapping[str, LoRAAdapter]],
    combination_type: str = "ties",
    *,
    weights: Sequence[float] | None = None,
    density: float | None = None,
    svd_rank: int | None = None,
) -> dict[str, torch.Tensor]:
    """The peer: peft's ``add_weighted_adapter`` over the K adapters; returns ``{name: Delta_merged}``."""
    if combination_type not in PEFT_COMBINATIONS:
        raise ValueError(f"combination_type: expected one of {PEFT_COMBINATIONS}, got {combination_type!r}")
    model = to_peft_model(base, adapters)
    names = [f"task{k}" for k in range(len(adapters))]
    w = [1.0] * len(names) if weights is None else [float(x) for x in weights]
    if len(w) != len(names):
        raise ValueError(f"weights: expected {len(names)} values, got {len(w)}")
    kwargs = {}
    if combination_type in ("ties", "dare_ties"):
        kwargs["density"] = 0.2 if density is None else density
    model.add_weighted_adapter(
        names, w, "merged", combination_type=combination_type, svd_rank=svd_rank, **kwargs
    )
    layers = sorted(set().union(*adapters))
    modules = dict(model.base_model.model.named_modules())
    with torch.no_grad():
        return {n: modules[n].get_delta_weight("merged").detach().clone() for n in layers}
