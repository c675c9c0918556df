"""The calibrated probability read-out implied by PENEX's Fisher consistency (arXiv 2510.02107, Prop. 2.1).

Minimising the population PENEX risk pointwise in ``f(x)``,
``sum_k P(k|x) exp(-alpha f_k) + rho sum_j exp(f_j)``, the stationarity condition
``alpha P(j|x) exp(-alpha f_j) = rho exp(f_j)`` gives ``exp((1 + alpha) f_j) = (alpha / rho) P(j|x)``.
Hence ``P(j|x) = softmax((1 + alpha) f(x))_j``: the logits are log-probabilities at inverse
temperature ``1 / (1 + alpha)``, and the read-out multiplies them by ``1 + alpha`` before the softmax.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .loss import resolve_penalty

__all__ = ["penex_log_probabilities", "penex_minimiser", "penex_probabilities"]


def _check_logits(logits: Tensor, sensitivity: float) -> None:
    if not isinstance(logits, Tensor) or not logits.is_floating_point():
        raise TypeError("logits: expected a floating-point torch.Tensor")
    if logits.dim() < 1 or logits.shape[-1 if logits.dim() == 1 else 1] < 1:
        raise ValueError(f"logits: expected shape (C,), (N, C) or (N, C, d1, ...), got {tuple(logits.shape)}")
    if isinstance(sensitivity, bool) or not math.isfinite(sensitivity) or sensitivity <= 0:
        raise ValueError(f"sensitivity: expected a positive finite number, got {sensitivity!r}")


def penex_log_probabilities(logits: Tensor, sensitivity: float = 1.0) -> Tensor:
    """``log P(j|x) = log_softmax((1 + alpha) f)`` over the class axis (1, or 0 for a 1-D input)."""
    _check_logits(logits, sensitivity)
    dim = 0 if logits.dim() == 1 else 1
    return torch.log_softmax((1.0 + sensitivity) * logits, dim=dim)


def penex_probabilities(logits: Tensor, sensitivity: float = 1.0) -> Tensor:
    """Calibrated probabilities ``softmax((1 + alpha) f)`` for logits trained with PENEX.

    Shapes: ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``; the class axis is 1 (0 for a 1-D input).
    """
    _check_logits(logits, sensitivity)
    dim = 0 if logits.dim() == 1 else 1
    return torch.softmax((1.0 + sensitivity) * logits, dim=dim)


def penex_minimiser(probabilities: Tensor, sensitivity: float = 1.0, penalty: float | None = None) -> Tensor:
    """Closed-form population minimiser ``f_j = log((alpha / rho) P(j|x)) / (1 + alpha)``.

    ``probabilities``: ``(..., C)`` strictly positive rows summing to one. Used to check Fisher
    consistency; with ``rho = alpha`` (the default) ``(1 + alpha) f`` are exactly log-probabilities.
    """
    rho = resolve_penalty(sensitivity, penalty)
    if not isinstance(probabilities, Tensor) or not probabilities.is_floating_point():
        raise TypeError("probabilities: expected a floating-point torch.Tensor")
    if bool((probabilities <= 0).any()) or bool((probabilities > 1).any()):
        raise ValueError("probabilities: expected values in (0, 1]")
    sums = probabilities.sum(dim=-1)
    if not torch.allclose(sums, torch.ones_like(sums), atol=1e-5):
        raise ValueError("probabilities: expected rows (last axis) summing to one")
    return (torch.log(probabilities) + math.log(sensitivity / rho)) / (1.0 + sensitivity)
