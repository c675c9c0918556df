"""The penalized multi-class exponential loss (PENEX), arXiv 2510.02107, Section 2.

For logits ``f(x) in R^K`` and a label ``y`` the per-sample loss is

    l(f, y) = exp(-alpha * f_y) + rho * sum_j exp(f_j)                         (PENEX)

with sensitivity ``alpha > 0`` and penalty ``rho > 0``. The SumExp penalty replaces the
sum-to-zero constraint ``sum_j f_j = 0`` of Zhu et al.'s constrained exponential loss (CONEX), so
the objective is unconstrained and can be minimised with SGD/Adam.

Penalty. The authors' public code (github.com/rudolfwilliam/penex, ``penex/losses.py``) does not fix
``rho``: it estimates it from the batch, detached from the graph,

    rho_hat = alpha * mean_i exp(-alpha f_{y_i}) / (mean_i sum_j exp(f_ij) + 1e-12),

clamped to ``[penalty_min, penalty_max]`` (``1e-10``, ``100``), either afresh on every call
(``"auto"``) or as an exponential moving average with weight ``ema = 0.1`` (``"running"``, their
default, with sensitivity ``alpha = 0.1``). ``rho_hat`` is exactly the penalty at which the current
logits are stationary under a common shift ``f -> f + c`` of all classes (the shift derivative
``-alpha mean exp(-alpha f_y) + rho mean sum_j exp(f_j)`` vanishes), so the penalty stops pulling the
logits' overall level and only their differences are trained. A float ``penalty`` fixes ``rho``.

Numerics: the loss is accumulated in float32 (float64 stays float64; float16/bfloat16 logits are
computed in float32). By default (``clip=None``, as the authors' code) the exact formula is evaluated,
which overflows float32 above logits of about 88 as the mathematics says it must. With ``clip`` each
exponential ``exp(z)`` is continued *linearly* above it (``exp(z)`` for ``z <= clip``,
``exp(clip) * (1 + z - clip)`` above): C^1, convex, exact up to ``clip``.

Autograd: the exact form is plain torch operations; the clipped form is one
``torch.autograd.Function`` (``setup_context`` style, vmap rule generated) whose backward recomputes
its derivatives from the saved input with differentiable operations when it is itself differentiated.
Double backward, ``torch.func.grad``/``vmap``/``jacrev`` and ``torch.compile`` (no graph break) work
in both. The hot path reads nothing back to the host; value checks
(NaN/inf logits, target range) run only when ``validate`` asks (default: on CPU tensors outside
``torch.compile``).
"""

from __future__ import annotations

import inspect
import math

import torch
from torch import Tensor, nn

from paperworks.core.validate import fraction, one_of, positive_float

from ._checks import (
    check_values_now,
    class_scores,
    class_targets,
    float_tensor,
    ignore_index_arg,
    validate_flag,
)

__all__ = [
    "DEFAULT_CLIP",
    "DEFAULT_EMA",
    "DEFAULT_SENSITIVITY",
    "STABLE_CLIP",
    "PENALTY_MAX",
    "PENALTY_MIN",
    "PENALTY_MODES",
    "PENEXLoss",
    "adaptive_penalty",
    "penex_loss",
]

DEFAULT_SENSITIVITY = 0.1  # the authors' PENEX class default
DEFAULT_EMA = 0.1  # the authors' weight of the newest estimate in the running penalty
PENALTY_MIN, PENALTY_MAX = 1e-10, 100.0  # the authors' clamp of the estimated penalty
PENALTY_MODES = ("running", "auto")
DEFAULT_CLIP = None  # the authors' default (no Huberization): the exact loss
STABLE_CLIP = 10.0  # ours: a threshold that keeps loss and gradients finite at logits of magnitude 100
_REDUCTIONS = ("mean", "sum", "none")
_EPS = 1e-12  # the authors' guard in the penalty estimate's denominator


def _exp_c(z: Tensor, clip: float) -> Tensor:
    """``exp(z)`` continued linearly above ``clip`` (C^1, convex): ``exp(min(z, c)) + e^c max(z - c, 0)``."""
    return torch.exp(z.clamp(max=clip)) + math.exp(clip) * (z - clip).clamp(min=0.0)


class _ClippedTerms(torch.autograd.Function):
    """The two per-sample terms of PENEX with every exponential continued linearly above ``clip``.

    ``f``: ``(M, C)``; ``t``: ``(M,)`` indices in ``[0, C)``. Returns ``a = phi(-alpha f_y)`` and
    ``s = sum_j phi(f_j)`` (``(M,)`` each), plus the derivatives ``phi'(f) = exp(min(f, clip))``
    ``(M, C)`` and ``phi'(-alpha f_y)`` ``(M,)`` as non-differentiable outputs kept for backward, which
    is ``grad_f = g_s phi'(f) - alpha g_a phi'(-alpha f_y) e_y``. When the backward is itself
    recorded (double backward, ``create_graph=True``), the derivatives are recomputed from the saved
    input with differentiable operations.
    """

    generate_vmap_rule = True

    @staticmethod
    def forward(f: Tensor, t: Tensor, alpha: float, clip: float):
        ec = math.exp(clip)
        z = f.gather(1, t.unsqueeze(1)).squeeze(1).mul(-alpha)
        e = f.clamp(max=clip).exp_()
        s = e.sum(dim=1).add_((f - clip).clamp(min=0.0).sum(dim=1), alpha=ec)
        ez = z.clamp(max=clip).exp_()
        a = ez + ec * (z - clip).clamp(min=0.0)
        return a, s, e, ez

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        f, t, alpha, clip = inputs
        _, _, e, ez = output
        ctx.mark_non_differentiable(e, ez)
        ctx.save_for_backward(f, t, e, ez)
        ctx.alpha, ctx.clip = alpha, clip

    @staticmethod
    def backward(ctx, g_a: Tensor, g_s: Tensor, _g_e: Tensor, _g_ez: Tensor):
        f, t, e, ez = ctx.saved_tensors
        alpha, clip = ctx.alpha, ctx.clip
        idx = t.unsqueeze(1)
        if torch.is_grad_enabled():  # the backward is being differentiated: recompute from f
            e = torch.exp(f.clamp(max=clip))
            ez = torch.exp((-alpha * f.gather(1, idx).squeeze(1)).clamp(max=clip))
        grad = g_s.unsqueeze(1) * e
        on_target = (-alpha * g_a * ez).unsqueeze(1)
        return grad.scatter_add(1, idx, on_target), None, None, None


# ``Function.apply`` binds its arguments with ``inspect.signature(forward)`` on every call (setup_context
# style); a precomputed ``__signature__`` is what ``inspect.signature`` returns first, which saves tens of
# microseconds per call on a small batch.
_ClippedTerms.forward.__signature__ = inspect.signature(_ClippedTerms.forward)


def _terms(f: Tensor, t: Tensor, alpha: float, clip: float | None) -> tuple[Tensor, Tensor]:
    """``a = exp(-alpha f_y)`` and ``s = sum_j exp(f_j)``, ``(M,)`` each, for ``(M, C)`` logits."""
    if clip is None:  # the exact form: plain torch operations, differentiated by autograd
        return torch.exp(f.gather(1, t.unsqueeze(1)).squeeze(1) * -alpha), torch.exp(f).sum(dim=1)
    a, s, _, _ = _ClippedTerms.apply(f, t, alpha, clip)
    return a, s


# -- arguments ------------------------------------------------------------------------------------
def _clip_arg(clip: object) -> float | None:
    return None if clip is None else positive_float(clip, "clip")


def _penalty_arg(penalty: object, *, module: bool) -> str | float | Tensor:
    """``"running"`` (module only), ``"auto"``, a positive float, or (functional only) a 0-d tensor."""
    if isinstance(penalty, str):
        if penalty == "running" and not module:
            raise ValueError(
                "penalty: 'running' keeps a moving average across calls; use PENEXLoss(penalty='running'), "
                "or pass 'auto', a positive float or a 0-d tensor to penex_loss"
            )
        if penalty not in PENALTY_MODES:
            raise ValueError(
                f"penalty: expected one of {list(PENALTY_MODES)} or a positive float, got {penalty!r}"
            )
        return penalty
    if isinstance(penalty, Tensor):
        if module:
            raise TypeError("penalty: expected 'running', 'auto' or a positive float, got a torch.Tensor")
        if not penalty.is_floating_point() or penalty.dim() != 0:
            raise ValueError(
                f"penalty: expected a 0-d floating-point tensor, got dtype {penalty.dtype}, shape "
                f"{tuple(penalty.shape)}"
            )
        return penalty
    return positive_float(penalty, "penalty")


def _bounds_arg(lo: object, hi: object) -> tuple[float, float]:
    lo_, hi_ = positive_float(lo, "penalty_min"), positive_float(hi, "penalty_max")
    if lo_ > hi_:
        raise ValueError(f"penalty_min: expected a value <= penalty_max={hi_}, got {lo_}")
    return lo_, hi_


def _weight_arg(weight: object, n_classes: int | None = None) -> Tensor | None:
    if weight is None:
        return None
    w = float_tensor(weight, "weight", min_dim=1, what="shape (C,)")
    if w.dim() != 1 or (n_classes is not None and w.shape[0] != n_classes):
        want = "(C,)" if n_classes is None else f"({n_classes},)"
        raise ValueError(f"weight: expected shape {want}, got {tuple(w.shape)}")
    return w


# -- the computation --------------------------------------------------------------------------------
def _prepare(logits, target, alpha, clip, weight, ignore_index, validate):
    """Checks, flattening to ``(M, C)``, the two terms, their per-sample weights ``w`` and the sums.

    ``w`` is 0 on ignored rows (whose target is replaced by an in-range index), ``weight[y]`` or 1
    elsewhere. Returns ``a, s, w, (A, S, W)`` with ``A = sum_i w_i a_i``, ``S = sum_i w_i s_i``,
    ``W = sum_i w_i``. No value is read back to the host unless the value checks run.
    """
    class_scores(logits)
    class_targets(target, logits)
    n_classes = logits.shape[1]
    weight = _weight_arg(weight, n_classes)
    if weight is not None and weight.device != logits.device:
        raise ValueError(f"weight: expected a tensor on {logits.device} like the logits, got {weight.device}")
    f = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits
    if f.dim() > 2:  # (N, C, d1, ...) -> (N * d1 * ..., C)
        f = f.movedim(1, -1).reshape(-1, n_classes)
    t = target.reshape(-1).long()
    valid = t != ignore_index
    t_safe = t.clamp(0, n_classes - 1)  # every index in range; ignored rows get weight 0 below
    a, s = _terms(f, t_safe, alpha, clip)
    w = valid.to(a.dtype)
    if weight is not None:
        w = w * weight.to(a.dtype)[t_safe]
    sums = torch.dot(w, a), torch.dot(w, s), w.sum()
    if check_values_now(validate, f, t):
        _check_values(f, t, t_safe, valid, sums, n_classes, ignore_index, weight, clip)
    return a, s, w, sums


def _check_values(f, t, t_safe, valid, sums, n_classes, ignore_index, weight, clip) -> None:
    """One host read: a finite loss, targets in range (or ignored), finite non-negative weights.

    The loss is finite unless a logit is NaN or +inf, a target's logit is -inf, or (``clip=None``) an
    exponential overflows; a -inf logit of another class is allowed (its term is exactly 0). Logits of
    ignored rows must be finite too (they enter the weighted sums with weight 0). On a failure the
    detailed checks find the cause.
    """
    bad_target = (t_safe != t) & valid
    flags = [sums[0].detach() + sums[1].detach(), bad_target.any().to(f.dtype)]
    if weight is not None:
        flags.append((~(torch.isfinite(weight) & (weight >= 0)).all()).to(f.dtype))
    total, *bad = torch.stack(flags).tolist()
    if math.isfinite(total) and not any(bad):
        return
    if bad[0]:
        first = int(t[bad_target][0])
        raise ValueError(
            f"target: expected class indices in [0, {n_classes - 1}] (or ignore_index={ignore_index}), "
            f"got {first}"
        )
    if len(bad) > 1 and bad[1]:
        raise ValueError("weight: expected finite non-negative class weights")
    n_nan, n_inf = int(f.isnan().sum()), int(f.isposinf().sum())
    if n_nan or n_inf:
        raise ValueError(f"logits: expected finite values, found {n_nan} NaN and {n_inf} +inf")
    if bool(f.gather(1, t_safe.unsqueeze(1)).isneginf().any()):
        raise ValueError("logits: expected a finite logit for each target class, found -inf")
    if clip is None:
        raise ValueError(
            f"logits: the loss overflows {f.dtype} (largest logit {float(f.max()):.4g}; exp overflows "
            f"above about {math.log(torch.finfo(f.dtype).max):.4g}); pass clip (for example clip=10) to "
            "continue each exponential linearly above it"
        )
    raise ValueError(f"logits: the loss overflows {f.dtype} even with clip={clip}")


def _estimate(sums: tuple[Tensor, Tensor, Tensor], alpha: float, lo: float, hi: float) -> Tensor:
    """``alpha * (A / W) / (S / W + 1e-12)`` (detached), clamped to ``[lo, hi]``; a 0-d tensor."""
    big_a, big_s, big_w = (x.detach() for x in sums)
    return (big_a / big_s.add(big_w, alpha=_EPS)).mul(alpha).clamp(lo, hi)


def _reduce(a, s, w, sums, rho: float | Tensor, reduction: str, shape) -> Tensor:
    """``a + rho s`` per sample, weighted; for ``"sum"``/``"mean"`` from the sums (rho is one scalar)."""
    if reduction == "none":
        per = torch.add(a, s, alpha=rho) if isinstance(rho, float) else a + rho * s
        return (per * w).reshape(shape)
    big_a, big_s, big_w = sums
    total = torch.add(big_a, big_s, alpha=rho) if isinstance(rho, float) else big_a + rho * big_s
    return total if reduction == "sum" else total / big_w


def penex_loss(
    logits: Tensor,
    target: Tensor,
    *,
    sensitivity: float = DEFAULT_SENSITIVITY,
    penalty: str | float | Tensor = "auto",
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    clip: float | None = DEFAULT_CLIP,
    penalty_min: float = PENALTY_MIN,
    penalty_max: float = PENALTY_MAX,
    validate: bool | None = None,
) -> Tensor:
    """PENEX loss ``exp(-alpha f_y) + rho sum_j exp(f_j)`` (arXiv 2510.02107, eq. PENEX).

    Args:
        logits: ``(N, C)`` or ``(N, C, d1, ...)`` unnormalised scores ``f``.
        target: ``(N,)`` or ``(N, d1, ...)`` integer class indices in ``[0, C)`` or ``ignore_index``.
        sensitivity: ``alpha > 0`` (default 0.1, the authors' code).
        penalty: ``rho``: ``"auto"`` (default; the authors' batch estimate, see the module docstring),
            a positive float, or a 0-d tensor (gradients flow into it). ``"running"`` needs state:
            use :class:`PENEXLoss`.
        weight: optional ``(C,)`` class weights; sample ``i`` is weighted by ``weight[y_i]`` and the
            mean divides by the summed weights, as in :class:`torch.nn.CrossEntropyLoss`.
        ignore_index: targets equal to it contribute nothing (and do not count in the mean).
        reduction: ``"mean"``, ``"sum"`` or ``"none"`` (shape of ``target``).
        clip: exponent (> 0) above which each exponential is continued linearly; None (default, as the
            authors' code): the exact form, which overflows float32 above logits of about 88.
            :data:`STABLE_CLIP` (10) keeps loss and gradients finite at logits of magnitude 100.
        penalty_min, penalty_max: the clamp of the estimated penalty (``"auto"``).
        validate: read values to check them (finite logits, targets in range, valid weights): True,
            False, or None (default: on CPU tensors outside ``torch.compile``; never on an
            accelerator, where it would synchronise).

    Returns:
        The reduced loss, in the logits' dtype (float32 for float16/bfloat16 logits).
    """
    alpha = positive_float(sensitivity, "sensitivity")
    rho_spec = _penalty_arg(penalty, module=False)
    reduction = one_of(reduction, "reduction", _REDUCTIONS)
    clip = _clip_arg(clip)
    lo, hi = _bounds_arg(penalty_min, penalty_max)
    ignore_index = ignore_index_arg(ignore_index)
    validate = validate_flag(validate)
    a, s, w, sums = _prepare(logits, target, alpha, clip, weight, ignore_index, validate)
    if rho_spec == "auto":
        rho = _estimate(sums, alpha, lo, hi)
    elif isinstance(rho_spec, Tensor):
        if rho_spec.device != a.device:
            raise ValueError(
                f"penalty: expected a tensor on {a.device} like the logits, got {rho_spec.device}"
            )
        if check_values_now(validate, rho_spec) and not bool(torch.isfinite(rho_spec) & (rho_spec > 0)):
            raise ValueError(f"penalty: expected a positive finite value, got {float(rho_spec)}")
        rho = rho_spec.to(a.dtype)
    else:
        rho = rho_spec
    return _reduce(a, s, w, sums, rho, reduction, target.shape)


def adaptive_penalty(
    logits: Tensor,
    target: Tensor,
    *,
    sensitivity: float = DEFAULT_SENSITIVITY,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    clip: float | None = DEFAULT_CLIP,
    penalty_min: float = PENALTY_MIN,
    penalty_max: float = PENALTY_MAX,
    validate: bool | None = None,
) -> Tensor:
    """The authors' batch estimate of the penalty, a detached 0-d tensor:

    ``rho_hat = alpha * mean_i exp(-alpha f_{y_i}) / (mean_i sum_j exp(f_ij) + 1e-12)``, clamped to
    ``[penalty_min, penalty_max]`` (means weighted as in :func:`penex_loss`). At ``rho = rho_hat`` the
    loss is stationary under a common shift of all logits.
    """
    alpha = positive_float(sensitivity, "sensitivity")
    clip = _clip_arg(clip)
    lo, hi = _bounds_arg(penalty_min, penalty_max)
    ignore_index = ignore_index_arg(ignore_index)
    validate = validate_flag(validate)
    with torch.no_grad():
        sums = _prepare(logits, target, alpha, clip, weight, ignore_index, validate)[3]
        return _estimate(sums, alpha, lo, hi)


def _check_ema(v: object) -> float:
    return fraction(v, "ema", open_low=True)


# each setting of PENEXLoss, checked when it is assigned (in __init__ and later), never per call
_SETTING_CHECKS = {
    "sensitivity": lambda v: positive_float(v, "sensitivity"),
    "penalty": lambda v: _penalty_arg(v, module=True),
    "reduction": lambda v: one_of(v, "reduction", _REDUCTIONS),
    "clip": _clip_arg,
    "ema": _check_ema,
    "penalty_min": lambda v: positive_float(v, "penalty_min"),
    "penalty_max": lambda v: positive_float(v, "penalty_max"),
    "ignore_index": ignore_index_arg,
    "validate": validate_flag,
}


class PENEXLoss(nn.Module):
    """PENEX as a drop-in for :class:`torch.nn.CrossEntropyLoss` (arXiv 2510.02107, Section 2).

    ``PENEXLoss(sensitivity=0.1, penalty="running")(logits, target)``: logits ``(N, C)`` or
    ``(N, C, d1, ...)``, target ``(N,)`` or ``(N, d1, ...)`` class indices; the defaults are the
    authors' code's. ``penalty``: ``"running"`` (an exponential moving average, weight ``ema``, of the
    batch estimate :func:`adaptive_penalty`, kept in the buffer ``running_penalty``; the first call
    takes the estimate as is; updated in training mode only, frozen by ``.eval()``), ``"auto"`` (the
    estimate of each batch) or a positive float (fixed ``rho``). Settings are plain attributes, checked
    when assigned and read on every call (changing ``.sensitivity`` takes effect at the next call).
    Probabilities are read out with :meth:`probabilities` (softmax of ``(1 + alpha) * logits``), not
    with a plain softmax. Other arguments as in :func:`penex_loss`.
    """

    def __init__(
        self,
        sensitivity: float = DEFAULT_SENSITIVITY,
        penalty: str | float = "running",
        *,
        weight: Tensor | None = None,
        ignore_index: int = -100,
        reduction: str = "mean",
        clip: float | None = DEFAULT_CLIP,
        ema: float = DEFAULT_EMA,
        penalty_min: float = PENALTY_MIN,
        penalty_max: float = PENALTY_MAX,
        validate: bool | None = None,
    ) -> None:
        super().__init__()
        self.sensitivity = sensitivity
        self.penalty = penalty
        self.reduction = reduction
        self.clip = clip
        self.ema = ema
        self.penalty_min = penalty_min
        self.penalty_max = penalty_max
        _bounds_arg(self.penalty_min, self.penalty_max)
        self.ignore_index = ignore_index
        self.validate = validate
        weight = _weight_arg(weight)
        if weight is not None and not bool((torch.isfinite(weight) & (weight >= 0)).all()):
            raise ValueError("weight: expected finite non-negative class weights")
        self.register_buffer("weight", weight)
        self.register_buffer("running_penalty", torch.ones(()))
        self.register_buffer("num_penalty_updates", torch.zeros((), dtype=torch.long))

    def __setattr__(self, name: str, value: object) -> None:
        check = _SETTING_CHECKS.get(name)
        super().__setattr__(name, value if check is None else check(value))

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        lo, hi = self.penalty_min, self.penalty_max
        if lo > hi:
            raise ValueError(f"penalty_min: expected a value <= penalty_max={hi}, got {lo}")
        alpha, spec = self.sensitivity, self.penalty
        a, s, w, sums = _prepare(
            logits, target, alpha, self.clip, self.weight, self.ignore_index, self.validate
        )
        if spec == "auto":
            rho = _estimate(sums, alpha, lo, hi)
        elif spec == "running":
            rho = self._running(_estimate(sums, alpha, lo, hi), sums[2], self.ema)
        else:
            rho = spec
        return _reduce(a, s, w, sums, rho, self.reduction, target.shape)

    def _running(self, estimate: Tensor, w_sum: Tensor, ema: float) -> Tensor:
        """The running penalty: the first training call takes ``estimate``, later ones
        ``(1 - ema) * old + ema * estimate``; a batch with every target ignored changes nothing."""
        old = self.running_penalty  # a buffer: no gradient, and the estimate is detached
        if old.dtype != estimate.dtype or old.device != estimate.device:
            old = old.to(device=estimate.device, dtype=estimate.dtype)
        started = self.num_penalty_updates > 0
        if not self.training:  # frozen: the stored average (the batch's estimate before any update)
            return torch.where(started, old, estimate)
        new = torch.lerp(estimate, old, started.to(estimate.dtype) * (1.0 - ema))
        new = torch.where(w_sum.detach() > 0, new, old)
        self.running_penalty.copy_(new)
        self.num_penalty_updates.add_(1)
        return new

    @property
    def penalty_value(self) -> float | Tensor | None:
        """The fixed ``rho``; for ``"running"`` the current average (None before its first update);
        for ``"auto"`` None (it depends on the batch)."""
        if self.penalty == "running":
            return None if int(self.num_penalty_updates) == 0 else self.running_penalty.clone()
        return None if self.penalty == "auto" else float(self.penalty)

    def reset_penalty(self) -> None:
        """Forget the running penalty (the next training call starts it from that batch's estimate)."""
        with torch.no_grad():
            self.running_penalty.fill_(1.0)
            self.num_penalty_updates.zero_()

    def probabilities(self, logits: Tensor) -> Tensor:
        """Calibrated probabilities ``softmax((1 + alpha) f)`` at this criterion's sensitivity."""
        from .readout import penex_probabilities

        return penex_probabilities(logits, self.sensitivity)

    def log_probabilities(self, logits: Tensor) -> Tensor:
        """``log_softmax((1 + alpha) f)`` at this criterion's sensitivity."""
        from .readout import penex_log_probabilities

        return penex_log_probabilities(logits, self.sensitivity)

    def extra_repr(self) -> str:
        return (
            f"sensitivity={self.sensitivity}, penalty={self.penalty!r}, reduction={self.reduction!r}, "
            f"clip={self.clip}, ema={self.ema}"
        )
