"""Similarity-aware dual-branch fusion of a symbolic and a neural reading of a message.

Our reading of the paper's module: the symbolic branch gives clean-up similarities ``s`` (..., M)
over a value codebook (1 = a clean match), the neural branch gives logits ``z`` (..., M) over the
same values. The fused distribution trusts the symbolic branch exactly as much as its best
similarity says it is reliable, so a confidently decoded (critical) symbol is never diluted by the
neural branch, and a low-similarity one falls back to it::

    g = sigmoid(kappa * (max_m s_m - tau)),   p = g * softmax(s / T) + (1 - g) * softmax(z)
"""

from __future__ import annotations

import torch
from torch import nn

from paperworks.core.validate import finite_float, positive_float

__all__ = ["SimilarityAwareFusion", "similarity_fusion"]


def _param(value, name: str, *, positive: bool):
    """A finite float (> 0 when ``positive``), or a real 0-d tensor: a learnable parameter of
    :class:`SimilarityAwareFusion`, whose value is not read (no host sync in ``forward``)."""
    if isinstance(value, torch.Tensor):
        if value.ndim != 0 or not value.dtype.is_floating_point:
            raise ValueError(f"{name}: expected a real scalar, got a tensor of shape {tuple(value.shape)}")
        return value
    return positive_float(value, name) if positive else finite_float(value, name)


def similarity_fusion(
    symbolic_scores: torch.Tensor,
    neural_logits: torch.Tensor,
    *,
    tau: float = 0.5,
    kappa: float = 20.0,
    temperature: float = 0.05,
) -> torch.Tensor:
    """Fused probabilities (..., M) from similarities and logits of identical shape (module docstring)."""
    for name, t in (("symbolic_scores", symbolic_scores), ("neural_logits", neural_logits)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor of shape (..., M), got {type(t).__name__}")
        if not t.dtype.is_floating_point:
            raise TypeError(f"{name}: expected a real floating tensor, got dtype {t.dtype}")
        if t.ndim == 0 or t.shape[-1] == 0:
            raise ValueError(f"{name}: expected a tensor of shape (..., M) with M >= 1, got {tuple(t.shape)}")
        if not torch.isfinite(t).all():
            raise ValueError(f"{name}: expected finite values (NaN/inf found)")
    if symbolic_scores.shape != neural_logits.shape:
        raise ValueError(
            f"shape mismatch: symbolic_scores {tuple(symbolic_scores.shape)} vs neural_logits "
            f"{tuple(neural_logits.shape)} (no silent broadcasting)"
        )
    tau = _param(tau, "tau", positive=False)
    kappa = _param(kappa, "kappa", positive=True)
    temperature = positive_float(temperature, "temperature")
    gate = torch.sigmoid(kappa * (symbolic_scores.max(dim=-1, keepdim=True).values - tau))
    return gate * torch.softmax(symbolic_scores / temperature, dim=-1) + (1 - gate) * torch.softmax(
        neural_logits, dim=-1
    )


class SimilarityAwareFusion(nn.Module):
    """Module twin of :func:`similarity_fusion` with learnable ``tau`` and ``log kappa``."""

    def __init__(self, tau: float = 0.5, kappa: float = 20.0, temperature: float = 0.05) -> None:
        super().__init__()
        tau = finite_float(tau, "tau")
        kappa = positive_float(kappa, "kappa")
        temperature = positive_float(temperature, "temperature")
        self.tau = nn.Parameter(torch.tensor(float(tau)))
        self.log_kappa = nn.Parameter(torch.tensor(float(kappa)).log())
        self.temperature = temperature

    def forward(self, symbolic_scores: torch.Tensor, neural_logits: torch.Tensor) -> torch.Tensor:
        return similarity_fusion(
            symbolic_scores,
            neural_logits,
            tau=self.tau,  # type: ignore[arg-type]
            kappa=self.log_kappa.exp(),  # type: ignore[arg-type]
            temperature=self.temperature,
        )
