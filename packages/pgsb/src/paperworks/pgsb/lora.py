"""LoRA adapters as (A, B, scaling) triples, and the peft state-dict format.

A LoRA update of a frozen linear weight ``W0`` (shape ``(d_out, d_in)``) is
``Delta = s * B @ A`` with ``A`` of shape ``(r, d_in)``, ``B`` of shape ``(d_out, r)`` and the scaling
``s = alpha / r`` (Hu et al. 2021) or ``s = alpha / sqrt(r)`` for rsLoRA (Kalajdzievski 2023). The
scaling is carried explicitly: merging the raw ``B @ A`` of adapters with different ``alpha``/rank or
with rsLoRA is a known source of wrong merges.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import torch

__all__ = ["LoRAAdapter", "adapters_from_peft_state_dict", "adapters_to_peft_state_dict"]


def _check_matrix(name: str, t: object) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    if t.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D matrix, got shape {tuple(t.shape)}")
    if not t.is_floating_point():
        raise TypeError(f"{name}: expected a floating-point tensor, got dtype {t.dtype}")
    if not torch.isfinite(t).all():
        raise ValueError(f"{name}: contains NaN or inf")
    return t


@dataclass(frozen=True)
class LoRAAdapter:
    """One layer's LoRA update ``Delta = scaling * B @ A``.

    ``A``: ``(r, d_in)``; ``B``: ``(d_out, r)``; ``alpha``: the LoRA alpha (default ``r``, i.e. scaling 1);
    ``use_rslora``: scaling ``alpha / sqrt(r)`` instead of ``alpha / r``.
    """

    A: torch.Tensor
    B: torch.Tensor
    alpha: float | None = None
    use_rslora: bool = False

    def __post_init__(self) -> None:
        _check_matrix("A", self.A)
        _check_matrix("B", self.B)
        if self.A.shape[0] != self.B.shape[1]:
            raise ValueError(
                f"A, B: rank mismatch, A has {self.A.shape[0]} rows but B has {self.B.shape[1]} columns"
            )
        if self.A.shape[0] == 0:
            raise ValueError("A: expected rank >= 1, got rank 0")
        if self.alpha is not None and not (math.isfinite(self.alpha) and self.alpha > 0):
            raise ValueError(f"alpha: expected a finite positive number, got {self.alpha!r}")

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


_A_SUFFIX = ".lora_A.weight"
_B_SUFFIX = ".lora_B.weight"


def adapters_from_peft_state_dict(
    state_dict: Mapping[str, torch.Tensor], *, alpha: float | None = None, use_rslora: bool = False
) -> dict[str, LoRAAdapter]:
    """Read a peft LoRA state dict (``get_peft_model_state_dict``) into ``{module name: LoRAAdapter}``.

    Keys look like ``base_model.model.<module>.lora_A.weight`` (peft drops the adapter name when it
    saves; ``.lora_A.<adapter>.weight`` is accepted too). ``alpha`` / ``use_rslora`` come from the
    adapter's ``LoraConfig`` (``lora_alpha``, ``use_rslora``): a state dict does not carry them.
    """
    if not state_dict:
        raise ValueError("state_dict: expected a non-empty peft LoRA state dict")
    a_parts: dict[str, torch.Tensor] = {}
    b_parts: dict[str, torch.Tensor] = {}
    for key, value in state_dict.items():
        for marker, store in ((".lora_A.", a_parts), (".lora_B.", b_parts)):
            if marker in key and key.endswith(".weight"):
                name = key.split(marker)[0]
                name = name.removeprefix("base_model.model.")
                store[name] = value
    if not a_parts:
        raise ValueError("state_dict: no '.lora_A.' weights found; is this a peft LoRA state dict?")
    if set(a_parts) != set(b_parts):
        missing = sorted(set(a_parts) ^ set(b_parts))
        raise ValueError(f"state_dict: modules with only one of lora_A / lora_B: {missing}")
    return {
        n: LoRAAdapter(a_parts[n].detach(), b_parts[n].detach(), alpha=alpha, use_rslora=use_rslora)
        for n in sorted(a_parts)
    }


def adapters_to_peft_state_dict(adapters: Mapping[str, LoRAAdapter]) -> dict[str, torch.Tensor]:
    """Write ``{module name: LoRAAdapter}`` as a peft LoRA state dict (``set_peft_model_state_dict``).

    The scaling is not stored in the state dict: configure the peft ``LoraConfig`` with the adapters'
    ``lora_alpha`` and ``use_rslora``.
    """
    out: dict[str, torch.Tensor] = {}
    for name, ad in adapters.items():
        if not isinstance(ad, LoRAAdapter):
            raise TypeError(f"adapters[{name!r}]: expected a LoRAAdapter, got {type(ad).__name__}")
        out[f"base_model.model.{name}{_A_SUFFIX}"] = ad.A.detach().clone()
        out[f"base_model.model.{name}{_B_SUFFIX}"] = ad.B.detach().clone()
    return out
