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

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from paperworks.core import validate

from ._checks import as_labels, in_graph_capture

__all__ = ["SelfDistillationLoss", "sdn_ic_weights", "self_distillation_loss"]


def sdn_ic_weights(ic_costs: Sequence[float], progress: float) -> torch.Tensor:
    """SDN's IC loss weights ``0.01 + progress * (cost - 0.01)`` (K,), ``progress`` in [0, 1]."""
    progress = validate.fraction(progress, "progress")
    if isinstance(ic_costs, str | bytes) or not isinstance(ic_costs, Sequence | np.ndarray | torch.Tensor):
        raise TypeError(f"ic_costs: expected a sequence of FLOPs fractions, got {type(ic_costs).__name__}")
    vals = [
        validate.finite_float(float(c) if isinstance(c, torch.Tensor) else c, "ic_costs") for c in ic_costs
    ]
    if not vals or not all(0 < c <= 1 for c in vals):
        raise ValueError(f"ic_costs: expected a non-empty list of FLOPs fractions in (0, 1], got {vals}")
    c = torch.tensor(vals, dtype=torch.float32)
    return 0.01 + progress * (c - 0.01)


def self_distillation_loss(
    final_logits: torch.Tensor,
    ic_logits: torch.Tensor,
    target: torch.Tensor,
    ic_weights: torch.Tensor,
    *,
    alpha: float = 0.3,
    temperature: float = 4.0,
    check: bool = True,
) -> torch.Tensor:
    """The LSD loss above (scalar). Shapes: ``(B, C)``, ``(K, B, C)``, ``(B,)`` int, ``(K,)``.

    ``check``: also check the values (finite logits and weights, targets in ``[0, C - 1]``; a host
    sync, skipped while torch compiles or traces). The shapes and dtypes are always checked.
    """
    for name, t in (("final_logits", final_logits), ("ic_logits", ic_logits), ("target", target)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    if not isinstance(ic_weights, torch.Tensor):
        raise TypeError(f"ic_weights: expected a torch.Tensor, got {type(ic_weights).__name__}")
    if final_logits.dim() != 2:
        raise ValueError(f"final_logits: expected shape (B, C), got {tuple(final_logits.shape)}")
    b, c = final_logits.shape
    if b == 0:
        raise ValueError("final_logits: expected a non-empty batch")
    if not final_logits.is_floating_point() or not ic_logits.is_floating_point():
        raise TypeError(
            "final_logits, ic_logits: expected floating-point logits, got "
            f"{final_logits.dtype}, {ic_logits.dtype}"
        )
    if ic_logits.dim() != 3 or ic_logits.shape[1:] != (b, c):
        raise ValueError(f"ic_logits: expected shape (K, {b}, {c}), got {tuple(ic_logits.shape)}")
    if target.shape != (b,) or target.dtype not in (torch.int64, torch.int32):
        raise ValueError(
            f"target: expected int class indices of shape ({b},), got {tuple(target.shape)} {target.dtype}"
        )
    k = ic_logits.shape[0]
    if ic_weights.shape != (k,):
        raise ValueError(f"ic_weights: expected shape ({k},), got {tuple(ic_weights.shape)}")
    alpha = validate.fraction(alpha, "alpha")
    temperature = validate.positive_float(temperature, "temperature")
    if check and not in_graph_capture():
        as_labels(target, "target", n=b, num_classes=c)
        for name, t in (("final_logits", final_logits), ("ic_logits", ic_logits), ("ic_weights", ic_weights)):
            if not bool(torch.isfinite(t).all()):
                raise ValueError(f"{name}: expected finite values, found NaN or inf")
        if bool((ic_weights < 0).any()):
            raise ValueError("ic_weights: expected non-negative weights")
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
        self.alpha = validate.fraction(alpha, "alpha")
        self.temperature = validate.positive_float(temperature, "temperature")

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
