"""Light self-distillation (LSD): the final classifier is a stop-gradient teacher for the ICs.

For final logits ``z_F`` (B, C), IC logits ``z_j`` (K, B, C), targets ``y`` (B,) and IC weights
``tau_j`` (K,):

    L = CE(z_F, y) + sum_j tau_j * [ (1 - alpha) CE(z_j, y)
                                     + alpha T^2 KL( softmax(sg(z_F) / T) || softmax(z_j / T) ) ]

``sg`` is stop-gradient: the teacher term sends no gradient into the final classifier or, through
it, into the deep blocks (only the ICs and the blocks below them learn from it). ``alpha = 0.3``,
``T = 4`` (the authors' defaults). :func:`sdn_ic_weights` gives the Shallow-Deep Networks weight
ramp ``tau_j(t) = 0.01 + t (c_j - 0.01)`` with ``c_j`` the IC's FLOPs fraction and ``t`` in [0, 1]
the training progress. With ``alpha = 0`` the loss is the SDN loss.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["SelfDistillationLoss", "sdn_ic_weights", "self_distillation_loss"]


def sdn_ic_weights(ic_costs: Sequence[float], progress: float) -> torch.Tensor:
    """SDN's IC loss weights ``0.01 + progress * (cost - 0.01)`` (K,), ``progress`` in [0, 1]."""
    if not 0.0 <= progress <= 1.0:
        raise ValueError(f"progress: expected a number in [0, 1], got {progress}")
    c = torch.as_tensor(list(ic_costs), dtype=torch.float32)
    if c.ndim != 1 or c.numel() == 0 or not bool(((c > 0) & (c <= 1)).all()):
        raise ValueError(
            f"ic_costs: expected a non-empty list of FLOPs fractions in (0, 1], got {list(ic_costs)}"
        )
    return 0.01 + progress * (c - 0.01)


def self_distillation_loss(
    final_logits: torch.Tensor,
    ic_logits: torch.Tensor,
    target: torch.Tensor,
    ic_weights: torch.Tensor,
    *,
    alpha: float = 0.3,
    temperature: float = 4.0,
) -> torch.Tensor:
    """The LSD loss above (scalar). Shapes: ``(B, C)``, ``(K, B, C)``, ``(B,)`` int, ``(K,)``."""
    if final_logits.dim() != 2:
        raise ValueError(f"final_logits: expected shape (B, C), got {tuple(final_logits.shape)}")
    b, c = final_logits.shape
    if b == 0:
        raise ValueError("final_logits: expected a non-empty batch")
    if ic_logits.dim() != 3 or ic_logits.shape[1:] != (b, c):
        raise ValueError(f"ic_logits: expected shape (K, {b}, {c}), got {tuple(ic_logits.shape)}")
    if target.shape != (b,) or target.dtype not in (torch.int64, torch.int32):
        raise ValueError(
            f"target: expected int class indices of shape ({b},), got {tuple(target.shape)} {target.dtype}"
        )
    k = ic_logits.shape[0]
    if ic_weights.shape != (k,):
        raise ValueError(f"ic_weights: expected shape ({k},), got {tuple(ic_weights.shape)}")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha: expected a number in [0, 1], got {alpha}")
    if not temperature > 0:
        raise ValueError(f"temperature: expected a positive number, got {temperature}")
    loss = F.cross_entropy(final_logits, target)
    if k == 0:
        return loss
    flat = ic_logits.reshape(k * b, c)
    ce = F.cross_entropy(flat, target.repeat(k), reduction="none").view(k, b).mean(1)
    ic_loss = (1.0 - alpha) * ce
    if alpha > 0:
        teacher = F.softmax(final_logits.detach() / temperature, dim=-1)  # stop-gradient teacher
        log_student = F.log_softmax(ic_logits / temperature, dim=-1)
        kl = (teacher * (torch.log(teacher.clamp_min(1e-12)) - log_student)).sum(-1).mean(-1)  # (K,)
        ic_loss = ic_loss + alpha * temperature**2 * kl
    return loss + (ic_weights.to(ic_loss) * ic_loss).sum()


class SelfDistillationLoss(nn.Module):
    """Module form of :func:`self_distillation_loss` (``alpha``, ``temperature`` fixed at init)."""

    def __init__(self, alpha: float = 0.3, temperature: float = 4.0) -> None:
        super().__init__()
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha: expected a number in [0, 1], got {alpha}")
        if not temperature > 0:
            raise ValueError(f"temperature: expected a positive number, got {temperature}")
        self.alpha = float(alpha)
        self.temperature = float(temperature)

    def forward(
        self,
        final_logits: torch.Tensor,
        ic_logits: torch.Tensor,
        target: torch.Tensor,
        ic_weights: torch.Tensor,
    ) -> torch.Tensor:
        return self_distillation_loss(
            final_logits, ic_logits, target, ic_weights, alpha=self.alpha, temperature=self.temperature
        )
