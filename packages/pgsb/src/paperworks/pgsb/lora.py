"""LoRA adapters as (A, B, scaling) triples, the peft state-dict format, and merged adapters.

A LoRA update of a frozen linear weight ``W0`` (shape ``(d_out, d_in)``) is
``Delta = s * B @ A`` with ``A`` of shape ``(r, d_in)``, ``B`` of shape ``(d_out, r)`` and the scaling
``s = alpha / r`` (Hu et al. 2021) or ``s = alpha / sqrt(r)`` for rsLoRA (Kalajdzievski 2023). The
scaling is carried explicitly: merging the raw ``B @ A`` of adapters with different ``alpha``/rank or
with rsLoRA is a known source of wrong merges, so nothing here guesses it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import torch

from paperworks.core.validate import positive_float

__all__ = [
    "LoRAAdapter",
    "MergedLoRA",
    "adapters_from_peft_state_dict",
    "adapters_to_peft_state_dict",
]


def check_matrix(name: str, t: object) -> torch.Tensor:
    """A 2-D finite floating-point tensor, or a one-line error naming ``name``."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    if t.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D matrix, got shape {tuple(t.shape)}")
    if not t.is_floating_point():
        raise TypeError(f"{name}: expected a floating-point tensor, got dtype {t.dtype}")
    if t.numel() == 0:
        raise ValueError(f"{name}: expected a non-empty matrix, got shape {tuple(t.shape)}")
    if not torch.isfinite(t).all():
        raise ValueError(f"{name}: contains NaN or inf")
    return t


def check_bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name}: expected True or False, got {value!r} ({type(value).__name__})")
    return value


@dataclass(frozen=True)
class LoRAAdapter:
    """One layer's LoRA update ``Delta = scaling * B @ A``.

    ``A``: ``(r, d_in)``; ``B``: ``(d_out, r)``; ``alpha``: the LoRA alpha (default ``r``, i.e. scaling 1:
    ``Delta = B @ A``); ``use_rslora``: scaling ``alpha / sqrt(r)`` instead of ``alpha / r``.
    """

    A: torch.Tensor
    B: torch.Tensor
    alpha: float | None = None
    use_rslora: bool = False

    def __post_init__(self) -> None:
        check_matrix("A", self.A)
        check_matrix("B", self.B)
        if self.A.shape[0] != self.B.shape[1]:
            raise ValueError(
                f"A, B: rank mismatch, A has {self.A.shape[0]} rows but B has {self.B.shape[1]} columns"
            )
        if self.A.dtype != self.B.dtype or self.A.device != self.B.device:
            raise TypeError(
                f"A, B: expected one dtype and device, got {self.A.dtype} on {self.A.device} and "
                f"{self.B.dtype} on {self.B.device}"
            )
        if self.alpha is not None:
            object.__setattr__(self, "alpha", positive_float(self.alpha, "alpha"))
        check_bool(self.use_rslora, "use_rslora")

    @property
    def rank(self) -> int:
        return int(self.A.shape[0])

    @property
    def shape(self) -> tuple[int, int]:
        """``(d_out, d_in)`` of the layer this adapter updates."""
        return int(self.B.shape[0]), int(self.A.shape[1])

    @property
    def scaling(self) -> float:
        alpha = float(self.rank) if self.alpha is None else float(self.alpha)
        return alpha / math.sqrt(self.rank) if self.use_rslora else alpha / self.rank

    def delta(self) -> torch.Tensor:
        """The dense update ``scaling * B @ A``, shape ``(d_out, d_in)``."""
        return self.scaling * (self.B @ self.A)

    def scaled_factors(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(A, scaling * B)``: factors whose product is :meth:`delta`."""
        return self.A, self.scaling * self.B


_PREFIX = "base_model.model."
_A_MARK, _B_MARK = ".lora_A.", ".lora_B."
# peft keys that carry something a LoRA (A, B) merge cannot represent: refused, never dropped silently.
_REFUSED = {
    "lora_magnitude_vector": "a DoRA magnitude (use_dora=True)",
    "lora_embedding_A": "an embedding-layer LoRA",
    "lora_embedding_B": "an embedding-layer LoRA",
}


def adapters_from_peft_state_dict(
    state_dict: Mapping[str, torch.Tensor], *, alpha: float, use_rslora: bool = False
) -> dict[str, LoRAAdapter]:
    """Read a peft LoRA state dict (``get_peft_model_state_dict``) into ``{module name: LoRAAdapter}``.

    Keys look like ``base_model.model.<module>.lora_A.weight`` (peft drops the adapter name when it
    saves; ``.lora_A.<adapter>.weight`` is accepted too). ``alpha`` / ``use_rslora`` come from the
    adapter's ``LoraConfig`` (``lora_alpha``, ``use_rslora``): a state dict does not carry them, so
    ``alpha`` is required. Keys a LoRA merge cannot represent (DoRA magnitudes, embedding LoRAs, LoRA
    biases, anything that is not a ``lora_A``/``lora_B`` weight) raise ``ValueError`` naming the key.
    For per-layer ranks or alphas (``rank_pattern``/``alpha_pattern``) load the adapter into peft and use
    :func:`paperworks.pgsb.peft_interop.from_peft_model`, which reads each layer's own scaling.
    """
    if not isinstance(state_dict, Mapping) or not state_dict:
        raise ValueError("state_dict: expected a non-empty peft LoRA state dict (a mapping)")
    alpha = positive_float(alpha, "alpha")
    check_bool(use_rslora, "use_rslora")
    a_parts: dict[str, torch.Tensor] = {}
    b_parts: dict[str, torch.Tensor] = {}
    for key, value in state_dict.items():
        if not isinstance(key, str):
            raise TypeError(f"state_dict: expected string keys, got {key!r}")
        for marker, what in _REFUSED.items():
            if marker in key:
                raise ValueError(f"state_dict[{key!r}]: {what} cannot be merged as a LoRA (A, B) pair")
        store = a_parts if _A_MARK in key else b_parts if _B_MARK in key else None
        if store is None or not key.endswith(".weight"):
            raise ValueError(
                f"state_dict[{key!r}]: not a LoRA lora_A/lora_B weight; refusing to drop it silently"
            )
        name = key.split(_A_MARK if store is a_parts else _B_MARK)[0].removeprefix(_PREFIX)
        if name in store:
            raise ValueError(
                f"state_dict[{key!r}]: a second {('lora_A', 'lora_B')[store is b_parts]} for {name!r}"
            )
        store[name] = value
    if set(a_parts) != set(b_parts):
        missing = sorted(set(a_parts) ^ set(b_parts))
        raise ValueError(f"state_dict: modules with only one of lora_A / lora_B: {missing}")
    out = {}
    for n in sorted(a_parts):
        a, b = a_parts[n], b_parts[n]
        check_matrix(f"state_dict[{n!r} lora_A]", a)
        check_matrix(f"state_dict[{n!r} lora_B]", b)
        out[n] = LoRAAdapter(a.detach(), b.detach(), alpha=alpha, use_rslora=use_rslora)
    return out


def adapters_to_peft_state_dict(adapters: Mapping[str, LoRAAdapter]) -> dict[str, torch.Tensor]:
    """Write ``{module name: LoRAAdapter}`` as a peft LoRA state dict (``set_peft_model_state_dict``).

    The scaling is not stored in the state dict: configure the peft ``LoraConfig`` with the adapters'
    ``lora_alpha`` and ``use_rslora`` (or use :class:`MergedLoRA`, whose scaling is 1 by construction).
    """
    if not isinstance(adapters, Mapping) or not adapters:
        raise ValueError("adapters: expected a non-empty mapping module name -> LoRAAdapter")
    out: dict[str, torch.Tensor] = {}
    for name, ad in adapters.items():
        if not isinstance(ad, LoRAAdapter):
            raise TypeError(f"adapters[{name!r}]: expected a LoRAAdapter, got {type(ad).__name__}")
        out[f"{_PREFIX}{name}{_A_MARK}weight"] = ad.A.detach().clone()
        out[f"{_PREFIX}{name}{_B_MARK}weight"] = ad.B.detach().clone()
    return out


@dataclass(frozen=True)
class MergedLoRA:
    """A merge returned as one rank-``rank`` LoRA adapter (``merge(..., output="lora", rank=r)``).

    ``adapters``: ``{module name: LoRAAdapter}`` with ``alpha = rank`` (scaling 1, so
    ``Delta = B @ A`` exactly); ``fan_in_fan_out``: names of the modules that are GPT-2-style ``Conv1D``
    (weight stored ``(d_in, d_out)``; peft sets ``fan_in_fan_out`` for them). ``state_dict()`` gives the
    peft state dict, ``lora_config()`` the matching ``LoraConfig`` arguments, ``save_pretrained(folder)``
    a folder that ``PeftModel.from_pretrained(base, folder)`` loads (needs the ``peft`` extra).
    """

    adapters: dict[str, LoRAAdapter]
    rank: int
    fan_in_fan_out: tuple[str, ...] = field(default=())

    @property
    def target_modules(self) -> list[str]:
        return sorted(self.adapters)

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The peft LoRA state dict (keys ``base_model.model.<module>.lora_A.weight``)."""
        return adapters_to_peft_state_dict(self.adapters)

    def lora_config(self) -> dict[str, object]:
        """Keyword arguments of the ``peft.LoraConfig`` this state dict belongs to."""
        targets = self.target_modules
        return {
            "r": self.rank,
            "lora_alpha": float(self.rank),
            "use_rslora": False,
            "lora_dropout": 0.0,
            "bias": "none",
            "target_modules": targets,
            "fan_in_fan_out": bool(targets) and set(targets) <= set(self.fan_in_fan_out),
        }

    def deltas(self) -> dict[str, torch.Tensor]:
        """``{module name: Delta}`` in ``(d_out, d_in)`` layout."""
        return {n: ad.delta() for n, ad in self.adapters.items()}

    def save_pretrained(self, folder: str | Path, *, base_model_name_or_path: str | None = None) -> Path:
        """Write ``adapter_config.json`` and ``adapter_model.safetensors`` into ``folder`` itself (no
        per-adapter subfolder), loadable with ``PeftModel.from_pretrained(base, folder)``."""
        from .peft_interop import save_merged

        return save_merged(self, folder, base_model_name_or_path=base_model_name_or_path)
