"""``merge``: one entry point for every merge method over a model's LoRA-adapted layers.

Layers are ``nn.Linear`` and GPT-2-style ``Conv1D`` modules selected by module name (as peft's
``target_modules`` are); a ``Conv1D`` stores its weight as ``(d_in, d_out)``, so it is transposed on the
way in and out (peft's ``fan_in_fan_out``). The result is the merged weights, the merged updates, or one
rank-``r`` LoRA adapter (:class:`~paperworks.pgsb.lora.MergedLoRA`) that peft loads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from paperworks.core.validate import one_of, positive_float, positive_int

from .baselines import dare_merge, knots_factors, ties_merge
from .lora import LoRAAdapter, MergedLoRA, adapters_from_peft_state_dict, check_bool, check_matrix
from .pgsb import PGSBConfig, pgsb_merge
from .shared_basis import check_adapters

__all__ = ["METHODS", "OUTPUTS", "merge", "merge_layer", "truncate_factors"]

METHODS = ("pgsb", "pgsb_no_pretrained", "pgsb_no_shared", "task_arithmetic", "ties", "dare", "knots")
OUTPUTS = ("weights", "delta", "lora")
_PGSB_OPTIONS = {"significance", "support_threshold", "min_support", "lam", "n_null", "null_seed"}
_OPTIONS = {
    "pgsb": _PGSB_OPTIONS,
    "pgsb_no_pretrained": _PGSB_OPTIONS,
    "pgsb_no_shared": _PGSB_OPTIONS,
    "task_arithmetic": {"lam"},
    "ties": {"density", "lam"},
    "dare": {"density", "lam", "combine", "generator"},
    "knots": {"density", "lam", "combine"},
}
_LOW_RANK = ("pgsb", "pgsb_no_pretrained", "pgsb_no_shared", "task_arithmetic", "knots")


def _check_method(method: object, options: Mapping[str, Any]) -> str:
    method = one_of(method, "method", METHODS)
    unknown = set(options) - _OPTIONS[method]
    if unknown:
        raise ValueError(
            f"options: {sorted(unknown)} not understood by method {method!r} "
            f"(it takes {sorted(_OPTIONS[method])})"
        )
    return method


def _layer_factors(
    W0: torch.Tensor, adapters: Sequence[LoRAAdapter], method: str, options: Mapping[str, Any]
) -> tuple[torch.Tensor, torch.Tensor] | None:
    """``(B, A)`` with ``Delta_merged = B @ A`` for the low-rank methods, None for the dense ones."""
    if method.startswith("pgsb"):
        cfg = PGSBConfig(
            use_pretrained=method != "pgsb_no_pretrained",
            use_shared_basis=method != "pgsb_no_shared",
            **options,
        )
        return pgsb_merge(W0, adapters, cfg)
    if method == "knots":
        return knots_factors(adapters, **options)
    if method == "task_arithmetic":
        scale = positive_float(options.get("lam", 1.0), "lam")
        dtype = torch.promote_types(adapters[0].A.dtype, torch.float32)
        B = torch.cat([scale * ad.scaling * ad.B.to(dtype) for ad in adapters], dim=1)
        return B, torch.cat([ad.A.to(dtype) for ad in adapters], dim=0)
    return None


def _layer_dense(
    W0: torch.Tensor, adapters: Sequence[LoRAAdapter], method: str, options: Mapping[str, Any]
) -> torch.Tensor:
    factors = _layer_factors(W0, adapters, method, options)
    if factors is not None:
        return factors[0] @ factors[1]
    dtype = torch.promote_types(adapters[0].A.dtype, torch.float32)
    deltas = torch.stack([ad.delta().to(dtype) for ad in adapters])
    if method == "ties":
        return ties_merge(deltas, **options)
    return dare_merge(deltas, **options)


def _check_layer(W0: object, adapters: Sequence[LoRAAdapter], name: str = "W0") -> None:
    check_matrix(name, W0)
    shape = check_adapters(adapters)
    if tuple(W0.shape) != shape:
        raise ValueError(f"{name}: expected shape {shape} of the adapters, got {tuple(W0.shape)}")
    if W0.device != adapters[0].A.device:
        raise ValueError(f"{name}: on {W0.device}, the adapters on {adapters[0].A.device}")


def merge_layer(
    W0: torch.Tensor, adapters: Sequence[LoRAAdapter], method: str = "pgsb", **options: Any
) -> torch.Tensor:
    """Merged update ``(d_out, d_in)`` of one layer with pretrained weight ``W0`` ``(d_out, d_in)``
    (floating point, finite) and K >= 1 adapters of that shape; ``options`` go to the method."""
    method = _check_method(method, options)
    _check_layer(W0, adapters)
    return _layer_dense(W0, adapters, method, options).to(W0.dtype)


def truncate_factors(B: torch.Tensor, A: torch.Tensor, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The best rank-``rank`` factors (Eckart-Young) ``(B_r (d_out, rank), A_r (rank, d_in))`` of
    ``B @ A`` (``(d_out, R)``, ``(R, d_in)``), from QRs of the factors and an SVD of an ``R x R`` core;
    zero-padded when ``B @ A`` has rank below ``rank``. The singular values are split evenly between
    the factors."""
    rank = positive_int(rank, "rank")
    Qb, Rb = torch.linalg.qr(B, mode="reduced")
    Qa, Ra = torch.linalg.qr(A.T, mode="reduced")
    Uc, S, Vch = torch.linalg.svd(Rb @ Ra.T, full_matrices=False)
    return _split(Qb @ Uc, S, Vch @ Qa.T, rank)


def _split(
    U: torch.Tensor, S: torch.Tensor, Vh: torch.Tensor, rank: int
) -> tuple[torch.Tensor, torch.Tensor]:
    k = min(rank, S.numel())
    root = S[:k].sqrt()
    B = torch.zeros(U.shape[0], rank, dtype=U.dtype, device=U.device)
    A = torch.zeros(rank, Vh.shape[1], dtype=U.dtype, device=U.device)
    B[:, :k] = U[:, :k] * root
    A[:k] = root[:, None] * Vh[:k]
    return B, A


def _is_conv1d(module: nn.Module) -> bool:
    """GPT-2-style ``transformers`` ``Conv1D`` (weight ``(d_in, d_out)``), recognised without importing it."""
    w = getattr(module, "weight", None)
    return (
        type(module).__name__ == "Conv1D"
        and isinstance(w, torch.Tensor)
        and w.ndim == 2
        and hasattr(module, "nf")
    )


def _base_weights(base: object) -> dict[str, tuple[torch.Tensor, bool]]:
    """``{module name: (W0 (d_out, d_in), stored transposed?)}`` of the mergeable layers of ``base``."""
    if isinstance(base, nn.Module):
        peft_wrapped = hasattr(base, "peft_config") and hasattr(base, "get_base_model")
        out = {}
        for name, m in base.named_modules():
            parts = name.split(".")
            if any(p.startswith("lora_") for p in parts):  # peft's own adapter sub-layers
                continue
            if isinstance(m, nn.Linear) or _is_conv1d(m):
                key = name.removesuffix(".base_layer")
                if peft_wrapped:
                    key = key.removeprefix("base_model.model.")
                conv = _is_conv1d(m)
                out[key] = (m.weight.detach().T if conv else m.weight.detach(), conv)
        return out
    if isinstance(base, Mapping):
        out = {}
        for name, w in base.items():
            check_matrix(f"base[{name!r}]", w)
            out[name] = (w.detach(), False)
        if not out:
            raise ValueError("base: expected a non-empty mapping name -> W0")
        return out
    raise TypeError(f"base: expected an nn.Module or a mapping name -> weight, got {type(base).__name__}")


def _per_adapter(value: object, name: str, K: int) -> list[object]:
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        if len(value) != K:
            raise ValueError(f"{name}: expected one value or {K} (one per adapter), got {len(value)}")
        return list(value)
    return [value] * K


def _as_adapters(k: int, adapter: object, lora_alpha: object, use_rslora: object) -> dict[str, LoRAAdapter]:
    if not isinstance(adapter, Mapping) or not adapter:
        raise ValueError(f"adapters[{k}]: expected a non-empty mapping (module name -> adapter)")
    state_dict = any(isinstance(key, str) and ".lora_" in key for key in adapter)
    if not state_dict:
        for name, ad in adapter.items():
            if not (isinstance(ad, LoRAAdapter) or (isinstance(ad, tuple) and len(ad) == 2)):
                raise TypeError(
                    f"adapters[{k}][{name!r}]: expected a LoRAAdapter or an (A, B) tuple, "
                    f"got {type(ad).__name__}"
                )
    raw = state_dict or any(not isinstance(ad, LoRAAdapter) for ad in adapter.values())
    if not raw:
        return dict(adapter)
    if lora_alpha is None or use_rslora is None:
        raise ValueError(
            f"adapters[{k}]: raw LoRA weights (a peft state dict or (A, B) tuples) do not carry their "
            f"scaling; pass lora_alpha= and use_rslora= (from its LoraConfig), or give LoRAAdapter objects"
        )
    alpha = positive_float(lora_alpha, f"lora_alpha[{k}]")
    check_bool(use_rslora, f"use_rslora[{k}]")
    try:
        if state_dict:
            return adapters_from_peft_state_dict(adapter, alpha=alpha, use_rslora=use_rslora)
        return {
            name: ad
            if isinstance(ad, LoRAAdapter)
            else LoRAAdapter(ad[0], ad[1], alpha=alpha, use_rslora=use_rslora)
            for name, ad in adapter.items()
        }
    except (TypeError, ValueError) as e:
        raise type(e)(f"adapters[{k}]: {e}") from None


def merge(
    base: nn.Module | Mapping[str, torch.Tensor],
    adapters: Sequence[Mapping[str, Any]],
    method: str = "pgsb",
    *,
    output: str = "weights",
    rank: int | None = None,
    lora_alpha: float | Sequence[float] | None = None,
    use_rslora: bool | Sequence[bool] | None = None,
    **options: Any,
) -> dict[str, torch.Tensor] | MergedLoRA:
    """Merge K task adapters into the base model's layers.

    ``base``: an ``nn.Module`` (its ``nn.Linear`` and ``Conv1D`` layers by module name; a ``PeftModel``
    is read through its base layers, names without the ``base_model.model.`` prefix) or
    ``{name: W0 (d_out, d_in)}``. ``adapters``: K >= 1 mappings ``{module name: LoRAAdapter | (A, B)}`` or
    peft LoRA state dicts; raw weights (tuples, state dicts) need ``lora_alpha`` and ``use_rslora``, one
    value for all or one per adapter (the scaling is not in the weights). A layer absent from some
    adapters counts as a zero update for those tasks. ``output``: ``"weights"`` gives
    ``{name: W0 + Delta_merged}``, ``"delta"`` ``{name: Delta_merged}``, both in the module's own weight
    layout (``(d_in, d_out)`` for ``Conv1D``); ``"lora"`` gives a :class:`MergedLoRA` of rank ``rank``
    (the best rank-``rank`` approximation of each layer's merged update; default for the low-rank
    methods: exact, the largest merged rank; the dense methods TIES and DARE need ``rank``).
    ``options`` go to the method (``lam``, ``density``, ``significance``, ...).
    """
    output = one_of(output, "output", OUTPUTS)
    method = _check_method(method, options)
    if rank is not None:
        if output != "lora":
            raise ValueError(f"rank: only used with output='lora', got output={output!r}")
        rank = positive_int(rank, "rank")
    elif output == "lora" and method not in _LOW_RANK:
        raise ValueError(
            f"rank: required for output='lora' with method {method!r} (its merged update is dense)"
        )
    if (
        isinstance(adapters, Mapping | str | bytes)
        or not isinstance(adapters, Sequence)
        or len(adapters) == 0
    ):
        raise ValueError("adapters: expected a non-empty sequence of per-task adapters (K >= 1)")
    weights = _base_weights(base)
    K = len(adapters)
    alphas = _per_adapter(lora_alpha, "lora_alpha", K)
    rslora = _per_adapter(use_rslora, "use_rslora", K)
    tasks = [_as_adapters(k, ad, alphas[k], rslora[k]) for k, ad in enumerate(adapters)]
    if lora_alpha is not None and all(isinstance(v, LoRAAdapter) for ad in adapters for v in ad.values()):
        raise ValueError("lora_alpha: given, but every adapter is a LoRAAdapter that carries its own alpha")
    names = sorted(set().union(*tasks))
    for k, task in enumerate(tasks):
        for name, ad in task.items():
            if name not in weights:
                raise KeyError(f"adapters[{k}]: layer {name!r} is not a linear or Conv1D layer of base")
            if ad.shape != tuple(weights[name][0].shape):
                raise ValueError(
                    f"adapters[{k}][{name!r}]: expected shape (d_out, d_in) = "
                    f"{tuple(weights[name][0].shape)} of the base layer, got {ad.shape}"
                )
    layers: dict[str, tuple[torch.Tensor, torch.Tensor] | torch.Tensor] = {}
    with torch.no_grad():
        for name in names:
            W0 = weights[name][0]
            layer = [task[name] for task in tasks if name in task]
            _check_layer(W0, layer, f"base[{name!r}]")
            if output == "lora":
                f = _layer_factors(W0, layer, method, options)
                if f is None:
                    U, S, Vh = torch.linalg.svd(_layer_dense(W0, layer, method, options), full_matrices=False)
                    layers[name] = (U, S, Vh)
                else:
                    layers[name] = f
            else:
                layers[name] = _layer_dense(W0, layer, method, options).to(W0.dtype)
        if output != "lora":
            out = {}
            for name, delta in layers.items():
                W0, conv = weights[name]
                full = W0 + delta if output == "weights" else delta
                out[name] = full.T.contiguous() if conv else full
            return out
        r = rank or max(f[0].shape[1] for f in layers.values())
        merged = {}
        for name, f in layers.items():
            B, A = _split(*f, r) if len(f) == 3 else truncate_factors(*f, r)
            dtype = weights[name][0].dtype
            merged[name] = LoRAAdapter(A.to(dtype).contiguous(), B.to(dtype).contiguous(), alpha=float(r))
        conv = tuple(sorted(n for n in merged if weights[n][1]))
        return MergedLoRA(merged, r, conv)
