"""SMNC: scan-efficient multi-scale normalised closure over a structural gate.

Given a gate matrix ``G`` (shape ``(d, d)``, entries in ``[0, 1]``, zero diagonal), the dyadic
walk closure at scale ``k`` is the budgeted walk sum

    R_k = sum_{l=1}^{L_k} G^l,        L_k = 2^k,   k = 0, ..., K,

computed by doubling (two ``d x d`` matrix products per scale):
``R_{k+1} = R_k + G^{L_k} R_k`` and ``G^{L_{k+1}} = (G^{L_k})^2``. On a single path or cycle of
length ``L`` whose gates all equal ``p``, the evidence is ``p^L``: it decays exponentially in ``L``
(the unnormalised "product" closure).

SMNC normalises each scale by its path-length budget, giving the scale-normalised logits

    l_k = log(R_k) / L_k                                    (paper: "scale-normalised logits")

so that a length-``L`` cycle read at its covering scale (``L_{k-1} < L <= L_k``) scores
``(p^L)^{1/L_k}`` instead of ``p^L``, and the gradient with respect to each log-gate on the cycle is
``(1 / L_k) * score``: a polynomial, ``1/L``-type factor rather than ``L p^(L-1)``.
The all-scale readout is a soft maximum over scales with temperature ``tau``:
``l = tau * logsumexp_k(l_k / tau) - tau * log(K + 1)``.

Relation probabilities use the complementary log-log link ``rho = 1 - exp(-exp(l))`` (probability of
at least one path when path counts are Poisson with mean ``exp(l)``), so the binary cross-entropy of
a "not reachable" label is exactly ``exp(l)``. The link and the soft readout are our reading of the
abstract (no public text); see the package README, section Fidelity.
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = [
    "SMNCClosure",
    "dyadic_walk_sums",
    "n_scales_for",
    "reachability_probability",
    "smnc_logits",
    "smnc_readout",
]

_TINY = 1e-30


def n_scales_for(d: int) -> int:
    """Number of dyadic scales ``K + 1`` so that the largest budget ``2^K >= d`` covers every simple cycle."""
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise ValueError(f"d: expected a positive int, got {d!r}")
    return max(1, math.ceil(math.log2(d)) + 1) if d > 1 else 1


def _check_square(x, name: str, ndims: tuple[int, ...] = (2,)) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    shapes = " or ".join({2: "(d, d)", 3: "(K, d, d)"}[k] for k in ndims)
    if x.ndim not in ndims or x.shape[-1] != x.shape[-2] or x.shape[-1] == 0 or 0 in x.shape:
        raise ValueError(f"{name}: expected a non-empty square {shapes} tensor, got shape {tuple(x.shape)}")
    if not x.dtype.is_floating_point:
        raise TypeError(f"{name}: expected a floating dtype, got {x.dtype}")


def _check_gate(G: torch.Tensor, name: str = "G") -> None:
    """A ``(d, d)`` float tensor with entries in ``[0, 1]`` (checked outside ``torch.compile``)."""
    _check_square(G, name)
    if not torch.compiler.is_compiling():
        with torch.no_grad():
            lo, hi = torch.aminmax(G.detach())
        lo, hi = float(lo), float(hi)
        if not (math.isfinite(lo) and math.isfinite(hi)) or bool(torch.isnan(G.detach()).any()):
            raise ValueError(f"{name}: expected finite gate values, found NaN or inf")
        if lo < 0 or hi > 1:
            raise ValueError(f"{name}: expected gate values in [0, 1], got min {lo:.4g}, max {hi:.4g}")


def _check_scales(n_scales, name: str = "n_scales") -> int:
    if isinstance(n_scales, bool) or not isinstance(n_scales, int) or n_scales < 1:
        raise ValueError(f"{name}: expected a positive int, got {n_scales!r}")
    return n_scales


def dyadic_walk_sums(G: torch.Tensor, n_scales: int) -> torch.Tensor:
    """Budgeted walk sums ``R_k = sum_{l=1}^{2^k} G^l`` for ``k = 0..n_scales-1``.

    Args:
        G: ``(d, d)`` non-negative matrix (the structural gate, diagonal already masked).
        n_scales: number of dyadic scales ``K + 1``.

    Returns:
        ``(n_scales, d, d)`` tensor; ``out[k]`` sums the weights of every walk of length ``1..2^k``.
        Costs ``2 * (n_scales - 1)`` matrix products (the "scan-efficient" doubling).
    """
    _check_gate(G)
    _check_scales(n_scales)
    R, P = G, G
    out = [R]
    for _ in range(n_scales - 1):
        R = R + P @ R
        P = P @ P
        out.append(R)
    return torch.stack(out)


def smnc_logits(G: torch.Tensor, n_scales: int | None = None, *, normalize: bool = True) -> torch.Tensor:
    """Scale-wise closure logits ``l_k = log(R_k) / L_k`` (or ``log R_k`` when ``normalize=False``).

    Args:
        G: ``(d, d)`` gate in ``[0, 1]``; its diagonal is ignored (masked to zero).
        n_scales: number of dyadic scales; default :func:`n_scales_for` ``(d)``.
        normalize: divide by the path-length budget ``L_k = 2^k`` (SMNC); ``False`` gives the
            unnormalised product closure the paper ablates.

    Returns:
        ``(n_scales, d, d)`` logits; diagonal entries score self-reachability (cycles through ``i``),
        off-diagonal entries score ``i ->...-> j`` reachability.
    """
    _check_gate(G)
    d = G.shape[0]
    n_scales = n_scales_for(d) if n_scales is None else _check_scales(n_scales)
    eye = torch.eye(d, dtype=G.dtype, device=G.device)
    R = dyadic_walk_sums(G * (1 - eye), n_scales)
    logR = torch.log(R.clamp_min(_TINY))
    if not normalize:
        return logR
    budgets = 2.0 ** torch.arange(n_scales, dtype=G.dtype, device=G.device)
    return logR / budgets[:, None, None]


def smnc_readout(logits: torch.Tensor, tau: float = 0.1) -> torch.Tensor:
    """Soft readout ``tau * logsumexp_k(l_k / tau) - tau * log(K + 1)``: ``(K+1, d, d) -> (d, d)``."""
    _check_square(logits, "logits", (3,))
    if not (isinstance(tau, int | float) and tau > 0 and math.isfinite(tau)):
        raise ValueError(f"tau: expected a positive finite temperature, got {tau!r}")
    k = logits.shape[0]
    return tau * torch.logsumexp(logits / tau, dim=0) - tau * math.log(k)


def reachability_probability(logits: torch.Tensor) -> torch.Tensor:
    """Complementary log-log link ``rho = 1 - exp(-exp(l))``, elementwise, in ``[0, 1]``.

    ``logits``: ``(d, d)`` read-out logits or ``(K, d, d)`` per-scale logits; same shape out.
    """
    _check_square(logits, "logits", (2, 3))
    return -torch.expm1(-torch.exp(logits))


class SMNCClosure(nn.Module):
    """Module form of SMNC: gate ``(d, d)`` -> read-out logits ``(d, d)``.

    Args:
        n_scales: dyadic scales (default: enough to cover length ``d``).
        normalize: SMNC normalisation by path-length budget (``False``: product-closure ablation).
        tau: temperature of the all-scale soft readout.
    """

    def __init__(self, n_scales: int | None = None, *, normalize: bool = True, tau: float = 0.1) -> None:
        super().__init__()
        if n_scales is not None:
            _check_scales(n_scales)
        if not (isinstance(tau, int | float) and tau > 0 and math.isfinite(tau)):
            raise ValueError(f"tau: expected a positive finite temperature, got {tau!r}")
        self.n_scales = n_scales
        self.normalize = normalize
        self.tau = float(tau)

    def forward(self, G: torch.Tensor) -> torch.Tensor:
        return smnc_readout(smnc_logits(G, self.n_scales, normalize=self.normalize), self.tau)
