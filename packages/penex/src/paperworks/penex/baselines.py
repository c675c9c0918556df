"""The regularisers PENEX is compared with (arXiv 2510.02107, experiments): all on cross-entropy.

- label smoothing (Szegedy et al. 2016): ``torch.nn.functional.cross_entropy(label_smoothing=eps)``;
- confidence penalty (Pereyra et al. 2017): ``CE - beta * H(softmax(f))``;
- dropout and weight decay act on the network / the parameters (see :mod:`.training`).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["confidence_penalty_loss"]


def confidence_penalty_loss(logits: Tensor, target: Tensor, beta: float = 0.1) -> Tensor:
    """Mean of ``CE(f, y) - beta * H(softmax(f))``; logits ``(N, C)``, target ``(N,)``."""
    if isinstance(beta, bool) or not math.isfinite(beta) or beta < 0:
        raise ValueError(f"beta: expected a non-negative finite number, got {beta!r}")
    logp = torch.log_softmax(logits, dim=1)
    entropy = -(logp.exp() * logp).sum(dim=1)
    return F.nll_loss(logp, target) - beta * entropy.mean()
