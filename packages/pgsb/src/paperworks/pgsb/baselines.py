"""Baseline merges of K task updates of one layer: Task Arithmetic, TIES, DARE and KnOTS.

All take dense updates ``deltas`` of shape ``(K, d_out, d_in)`` (or, for KnOTS, the adapters) and
return the merged update ``(d_out, d_in)``; the caller adds it to the pretrained weight.

- Task Arithmetic (Ilharco et al. 2023): ``lam * sum_k Delta_k``.
- TIES (Yadav et al. 2023): per task keep the top-``density`` fraction of entries by magnitude, elect a
  sign per entry as the sign of the sum of the trimmed values, average the entries that agree with it
  (disjoint mean), times ``lam``.
- DARE (Yu et al. 2024): drop each entry with probability ``1 - density``, rescale survivors by
  ``1 / density``, then sum (``combine="linear"``) or TIES-merge (``combine="ties"``), times ``lam``.
- KnOTS (Stoica et al. 2024): joint SVD ``[Delta_1 | ... | Delta_K] = U Sigma [V_1^T | ... | V_K^T]``,
  TIES (or averaging) of the task blocks ``V_k`` in that aligned basis, ``U Sigma V_merged^T``, times ``lam``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .lora import LoRAAdapter
from .shared_basis import shared_basis

__all__ = ["dare_merge", "knots_merge", "task_arithmetic_merge", "ties_merge"]


def _check_deltas(deltas: torch.Tensor) -> torch.Tensor:
    if not isinstance(deltas, torch.Tensor) or deltas.ndim != 3:
        shape = tuple(deltas.shape) if isinstance(deltas, torch.Tensor) else type(deltas).__name__
        raise ValueError(f"deltas: expected a tensor of shape (K, d_out, d_in), got {shape}")
    if deltas.shape[0] == 0:
        raise ValueError("deltas: expected at least one task update (K >= 1), got K = 0")
    if not torch.isfinite(deltas).all():
        raise ValueError("deltas: contains NaN or inf")
    return deltas


def _check_density(density: float) -> float:
    if not 0.0 < density <= 1.0:
        raise ValueError(f"density: expected a fraction in (0, 1], got {density!r}")
    return float(density)


def task_arithmetic_merge(deltas: torch.Tensor, *, lam: float = 1.0) -> torch.Tensor:
    """``lam * sum_k deltas[k]``; ``deltas``: ``(K, d_out, d_in)``."""
    return lam * _check_deltas(deltas).sum(0)


def _trim(stack: torch.Tensor, density: float) -> torch.Tensor:
    """Keep, per task (first axis), the ``density`` fraction of entries largest in magnitude."""
    flat = stack.reshape(stack.shape[0], -1)
    n_keep = max(1, round(density * flat.shape[1]))
    if n_keep >= flat.shape[1]:
        return stack
    thresh = flat.abs().kthvalue(flat.shape[1] - n_keep + 1, dim=1, keepdim=True).values
    return (flat * (flat.abs() >= thresh)).reshape(stack.shape)


def _elect_disjoint_mean(trimmed: torch.Tensor) -> torch.Tensor:
    sign = torch.sign(trimmed.sum(0))
    agree = (torch.sign(trimmed) == sign) & (trimmed != 0)
    count = agree.sum(0).clamp_min(1)
    return (trimmed * agree).sum(0) / count


def ties_merge(deltas: torch.Tensor, *, density: float = 0.2, lam: float = 1.0) -> torch.Tensor:
    """TIES-merging (trim, elect sign, disjoint mean) of ``deltas`` ``(K, d_out, d_in)``."""
    deltas = _check_deltas(deltas)
    return lam * _elect_disjoint_mean(_trim(deltas, _check_density(density)))


def dare_merge(
    deltas: torch.Tensor,
    *,
    density: float = 0.5,
    lam: float = 1.0,
    combine: str = "linear",
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """DARE: random drop with keep probability ``density`` and rescale, then ``combine`` ("linear"|"ties")."""
    deltas = _check_deltas(deltas)
    density = _check_density(density)
    if combine not in ("linear", "ties"):
        raise ValueError(f"combine: expected 'linear' or 'ties', got {combine!r}")
    keep = torch.rand(deltas.shape, generator=generator, dtype=deltas.dtype) < density
    rescaled = deltas * keep / density
    if combine == "linear":
        return lam * rescaled.sum(0)
    return lam * _elect_disjoint_mean(rescaled)


def knots_merge(
    adapters: Sequence[LoRAAdapter], *, density: float = 0.2, lam: float = 1.0, combine: str = "ties"
) -> torch.Tensor:
    """KnOTS: merge the task blocks ``V_k`` of the joint SVD by TIES (``combine="ties"``) or by their
    mean (``"mean"``), returning ``lam * U diag(sigma) V_merged^T`` ``(d_out, d_in)``."""
    if combine not in ("ties", "mean"):
        raise ValueError(f"combine: expected 'ties' or 'mean', got {combine!r}")
    basis = shared_basis(adapters)
    v = basis.coeffs / basis.sigma[None, :, None]  # (K, R, d_in): the V_k^T blocks
    if combine == "ties":
        v_merged = _elect_disjoint_mean(_trim(v, _check_density(density)))
    else:
        v_merged = v.mean(0)
    return lam * basis.U @ (basis.sigma[:, None] * v_merged)
