"""The calibrated probability read-out implied by PENEX's Fisher consistency (arXiv 2510.02107, Prop. 2.1).

Minimising the population PENEX risk pointwise in ``f(x)``,
``sum_k P(k|x) exp(-alpha f_k) + rho sum_j exp(f_j)``, the stationarity condition
``alpha P(j|x) exp(-alpha f_j) = rho exp(f_j)`` gives ``exp((1 + alpha) f_j) = (alpha / rho) P(j|x)``.
Hence ``P(j|x) = softmax((1 + alpha) f(x))_j`` for every ``rho`` (``rho`` only shifts all logits by
``log(alpha / rho) / (1 + alpha)``): the logits are log-probabilities at temperature ``1 / (1 + alpha)``
(the authors' README: "perform inference at temperature (1 + alpha)^-1").
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from paperworks.core.validate import positive_float

from ._checks import check_values_now, float_tensor

__all__ = ["penex_log_probabilities", "penex_minimiser", "penex_probabilities"]


def _class_dim(logits: object) -> int:
    f = float_tensor(logits, "logits", min_dim=1, what="shape (C,), (N, C) or (N, C, d1, ...)")
    dim = 0 if f.dim() == 1 else 1
    if f.shape[dim] < 1 or f.numel() == 0:
        raise ValueError(
            f"logits: expected a non-empty tensor with C >= 1 classes, got shape {tuple(f.shape)}"
        )
    if check_values_now(None, f) and not bool(torch.isfinite(f).all()):
        raise ValueError("logits: expected finite values (no NaN or inf)")
    return dim


def penex_log_probabilities(logits: Tensor, sensitivity: float) -> Tensor:
    """``log P(j|x) = log_softmax((1 + alpha) f)`` over the class axis (1, or 0 for a 1-D input).

    ``sensitivity`` is the ``alpha`` the logits were trained with (no default: use
    :meth:`PENEXLoss.log_probabilities` to read it from the criterion).
    """
    dim = _class_dim(logits)
    alpha = positive_float(sensitivity, "sensitivity")
    return torch.log_softmax((1.0 + alpha) * logits, dim=dim)


def penex_probabilities(logits: Tensor, sensitivity: float) -> Tensor:
    """Calibrated probabilities ``softmax((1 + alpha) f)`` for logits trained with PENEX.

    Shapes: ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``; the class axis is 1 (0 for a 1-D input).
    ``sensitivity`` is the ``alpha`` the logits were trained with (no default: use
    :meth:`PENEXLoss.probabilities` to read it from the criterion).
    """
    dim = _class_dim(logits)
    alpha = positive_float(sensitivity, "sensitivity")
    return torch.softmax((1.0 + alpha) * logits, dim=dim)


def penex_minimiser(probabilities: Tensor, sensitivity: float, penalty: float) -> Tensor:
    """Closed-form population minimiser ``f_j = log((alpha / rho) P(j|x)) / (1 + alpha)`` at a fixed ``rho``.

    ``probabilities``: ``(..., C)`` strictly positive rows (last axis) summing to one.
    """
    alpha = positive_float(sensitivity, "sensitivity")
    rho = positive_float(penalty, "penalty")
    p = float_tensor(probabilities, "probabilities", min_dim=1, what="shape (..., C)")
    if p.numel() == 0:
        raise ValueError(f"probabilities: expected a non-empty tensor, got shape {tuple(p.shape)}")
    if check_values_now(True, p):
        if not bool(torch.isfinite(p).all()) or bool((p <= 0).any()) or bool((p > 1).any()):
            raise ValueError("probabilities: expected finite values in (0, 1]")
        sums = p.sum(dim=-1)
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-5):
            raise ValueError("probabilities: expected rows (last axis) summing to one")
    return (torch.log(p) + math.log(alpha / rho)) / (1.0 + alpha)
