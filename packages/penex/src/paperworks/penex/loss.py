"""The penalized multi-class exponential loss (PENEX), arXiv 2510.02107, Section 2.

For logits ``f(x) in R^K`` and a label ``y`` the per-sample loss is

    l(f, y) = exp(-alpha * f_y) + rho * sum_j exp(f_j)                         (PENEX)

with sensitivity ``alpha > 0`` and penalty ``rho > 0``. The SumExp penalty replaces the
sum-to-zero constraint ``sum_j f_j = 0`` of Zhu et al.'s constrained exponential loss (CONEX), so
the objective is unconstrained and can be minimised with SGD/Adam.

Numerics: the loss is accumulated in float32 (float64 stays float64). An exponential of a large
argument overflows float32 at about 88 and float16 at about 11, so by default every exponential
``exp(z)`` is continued *linearly* above a threshold ``tau`` (``clip``):
``exp(z)`` for ``z <= tau`` and ``exp(tau) * (1 + z - tau)`` above, which is C^1, convex, and
exact for every argument up to ``tau``. With ``tau = 10`` each per-logit gradient is at most
``max(alpha, rho) * e^10 ~ 2.2e4 * max(alpha, rho)``, inside float16's range. ``clip=None``
evaluates the plain formula (which overflows for large logits, as the mathematics says it must).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

__all__ = ["DEFAULT_CLIP", "PENEXLoss", "penex_loss", "resolve_penalty"]

DEFAULT_CLIP = 10.0
_REDUCTIONS = ("mean", "sum", "none")


def resolve_penalty(sensitivity: float, penalty: float | None) -> float:
    """The penalty ``rho`` actually used: ``penalty`` if given, else ``rho = alpha``.

    With ``rho = alpha`` the population minimiser satisfies ``exp((1 + alpha) f_j) = P(j | x)``
    exactly (Proposition 2.1 with the normalising constant ``alpha / rho = 1``), so ``(1 + alpha) f``
    are log-probabilities. This default is our reading; the paper writes ``rho(alpha)``.
    """
    _check_positive("sensitivity", sensitivity)
    if penalty is None:
        return float(sensitivity)
    _check_positive("penalty", penalty)
    return float(penalty)


def _check_positive(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name}: expected a positive float, got {type(value).__name__}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name}: expected a positive finite number, got {value!r}")


class _PENEXPerSample(torch.autograd.Function):
    """Per-sample PENEX ``exp(-alpha f_y) + rho sum_j exp(f_j)`` for 2-D logits, with a lean backward.

    Forward: a row max (to decide whether any logit passes ``clip``), ``E = exp(f)`` and its row sums;
    ``E`` is saved (as cross-entropy saves its log-softmax). Backward:
    ``grad_f = g * (rho E - alpha exp(-alpha f_y) e_y)`` (``E`` is ``exp(min(f, clip))`` when clipping).
    """

    @staticmethod
    def forward(ctx, f: Tensor, t: Tensor, alpha: float, rho: float, clip: float | None) -> Tensor:
        z = f.gather(1, t.unsqueeze(1)).squeeze(1).mul_(-alpha)
        top_f, top_z = torch.stack((f.max(), z.max())).tolist()  # one host sync; NaN propagates
        if math.isnan(top_f) or math.isnan(top_z):
            raise ValueError("logits: expected no NaN values")
        f_in = clip is None or top_f <= clip  # every logit inside the exact range
        z_in = clip is None or top_z <= clip
        e = torch.exp(f) if f_in else torch.exp(f.clamp(max=clip))
        sum_exp = e.sum(dim=1)
        if not f_in:
            sum_exp += math.exp(clip) * (f - clip).clamp_(min=0).sum(dim=1)
        ez = torch.exp(z) if z_in else torch.exp(z.clamp(max=clip))
        ctx.save_for_backward(e, t, ez)
        ctx.alpha, ctx.rho = alpha, rho
        out = ez.add(sum_exp, alpha=rho)
        if not z_in:
            out += math.exp(clip) * (z - clip).clamp_(min=0)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g: Tensor):
        e, t, ez = ctx.saved_tensors  # e = exp(min(f, clip)), ez = exp(min(-alpha f_y, clip))
        grad = e * (ctx.rho * g).unsqueeze(1)
        grad.scatter_add_(1, t.unsqueeze(1), (g * ez).mul_(-ctx.alpha).unsqueeze(1))
        return grad, None, None, None, None


def _validate(logits: Tensor, target: Tensor, weight: Tensor | None) -> None:
    if not isinstance(logits, Tensor):
        raise TypeError(f"logits: expected a torch.Tensor, got {type(logits).__name__}")
    if not isinstance(target, Tensor):
        raise TypeError(f"target: expected a torch.Tensor of class indices, got {type(target).__name__}")
    if not logits.is_floating_point():
        raise TypeError(f"logits: expected a floating-point tensor, got dtype {logits.dtype}")
    if target.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
        raise TypeError(
            f"target: expected integer class indices (torch.long), got dtype {target.dtype}; "
            "probability targets are not supported"
        )
    if logits.dim() < 2:
        raise ValueError(f"logits: expected shape (N, C) or (N, C, d1, ...), got shape {tuple(logits.shape)}")
    expected = (logits.shape[0], *logits.shape[2:])
    if tuple(target.shape) != expected:
        raise ValueError(
            f"target: expected shape {expected} to match logits of shape {tuple(logits.shape)} "
            f"(batch sizes must agree), got {tuple(target.shape)}"
        )
    if logits.shape[1] < 1:
        raise ValueError("logits: expected at least one class (C >= 1)")
    if target.numel() == 0:
        raise ValueError("target: expected a non-empty batch")
    if weight is not None:
        if not isinstance(weight, Tensor) or not weight.is_floating_point():
            raise TypeError("weight: expected a floating-point tensor of shape (C,)")
        if tuple(weight.shape) != (logits.shape[1],):
            raise ValueError(f"weight: expected shape ({logits.shape[1]},), got {tuple(weight.shape)}")
        if not bool(torch.isfinite(weight).all()) or bool((weight < 0).any()):
            raise ValueError("weight: expected finite non-negative class weights")


def penex_loss(
    logits: Tensor,
    target: Tensor,
    *,
    sensitivity: float = 1.0,
    penalty: float | None = None,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    clip: float | None = DEFAULT_CLIP,
) -> Tensor:
    """PENEX loss ``exp(-alpha f_y) + rho sum_j exp(f_j)`` (arXiv 2510.02107, eq. PENEX).

    Args:
        logits: ``(N, C)`` or ``(N, C, d1, ...)`` unnormalised scores ``f``.
        target: ``(N,)`` or ``(N, d1, ...)`` integer class indices in ``[0, C)`` or ``ignore_index``.
        sensitivity: ``alpha > 0``.
        penalty: ``rho > 0``; None means ``rho = alpha`` (see :func:`resolve_penalty`).
        weight: optional ``(C,)`` class weights; sample ``i`` is weighted by ``weight[y_i]`` and the
            mean divides by the summed weights, as in :class:`torch.nn.CrossEntropyLoss`.
        ignore_index: targets equal to it contribute nothing (and do not count in the mean).
        reduction: ``"mean"``, ``"sum"`` or ``"none"`` (shape of ``target``).
        clip: exponent above which each exponential is continued linearly; None for the exact form.

    Returns:
        The reduced loss, in the logits' dtype (float32 for float16/bfloat16 logits).
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction: expected one of {_REDUCTIONS}, got {reduction!r}")
    rho = resolve_penalty(sensitivity, penalty)
    alpha = float(sensitivity)
    if clip is not None and (isinstance(clip, bool) or not math.isfinite(clip)):
        raise ValueError(f"clip: expected a finite float or None, got {clip!r}")
    _validate(logits, target, weight)

    f = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits
    n_classes = f.shape[1]
    if f.dim() > 2:  # (N, C, d1, ...) -> (N * d1 * ..., C)
        f = f.movedim(1, -1).reshape(-1, n_classes)
    t = target.reshape(-1).long()
    lo, hi = torch.aminmax(t)
    lo, hi = int(lo), int(hi)
    any_ignored = lo <= ignore_index <= hi and bool((t == ignore_index).any())
    valid = t != ignore_index if any_ignored else None
    if lo < 0 or hi >= n_classes:
        bad = (t < 0) | (t >= n_classes)
        if valid is not None:
            bad &= valid
        if bool(bad.any()):
            raise ValueError(
                f"target: expected class indices in [0, {n_classes - 1}] (or ignore_index={ignore_index}), "
                f"got {int(t[bad][0])}"
            )
    t_safe = torch.where(valid, t, torch.zeros_like(t)) if any_ignored else t

    per_sample = _PENEXPerSample.apply(f, t_safe, alpha, rho, clip)

    w = None
    if weight is not None:
        w = weight.to(device=per_sample.device, dtype=per_sample.dtype)[t_safe]
    if any_ignored:
        w = valid.to(per_sample.dtype) if w is None else w * valid
    if w is not None:
        per_sample = per_sample * w
        if any_ignored:  # an ignored row contributes exactly 0, even if its loss is inf
            per_sample = torch.where(valid, per_sample, torch.zeros_like(per_sample))

    if reduction == "none":
        return per_sample.reshape(target.shape)
    if reduction == "sum":
        return per_sample.sum()
    return per_sample.mean() if w is None else per_sample.sum() / w.sum()


class PENEXLoss(nn.Module):
    """PENEX as a drop-in for :class:`torch.nn.CrossEntropyLoss` (arXiv 2510.02107, Section 2).

    ``PENEXLoss(sensitivity=alpha, penalty=rho)(logits, target)``: logits ``(N, C)`` or
    ``(N, C, d1, ...)``, target ``(N,)`` or ``(N, d1, ...)`` class indices. Probabilities are read out
    with :func:`paperworks.penex.penex_probabilities` (softmax of ``(1 + alpha) * logits``), not with a
    plain softmax.
    """

    def __init__(
        self,
        sensitivity: float = 1.0,
        penalty: float | None = None,
        *,
        weight: Tensor | None = None,
        ignore_index: int = -100,
        reduction: str = "mean",
        clip: float | None = DEFAULT_CLIP,
    ) -> None:
        super().__init__()
        self.penalty = resolve_penalty(sensitivity, penalty)
        self.sensitivity = float(sensitivity)
        if reduction not in _REDUCTIONS:
            raise ValueError(f"reduction: expected one of {_REDUCTIONS}, got {reduction!r}")
        if clip is not None and (isinstance(clip, bool) or not math.isfinite(clip)):
            raise ValueError(f"clip: expected a finite float or None, got {clip!r}")
        if weight is not None and (not isinstance(weight, Tensor) or weight.dim() != 1):
            raise ValueError("weight: expected a 1-D tensor of class weights")
        self.register_buffer("weight", weight)
        self.ignore_index = int(ignore_index)
        self.reduction = reduction
        self.clip = clip

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return penex_loss(
            logits,
            target,
            sensitivity=self.sensitivity,
            penalty=self.penalty,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            clip=self.clip,
        )

    def extra_repr(self) -> str:
        return (
            f"sensitivity={self.sensitivity}, penalty={self.penalty}, reduction={self.reduction!r}, "
            f"clip={self.clip}"
        )
