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

from paperworks.core.validate import fraction, one_of, positive_float

from .lora import LoRAAdapter
from .shared_basis import check_adapters

__all__ = ["dare_merge", "joint_svd", "knots_merge", "task_arithmetic_merge", "ties_merge"]

_REL_TOL = 1e-6


def _check_deltas(deltas: object) -> torch.Tensor:
    if not isinstance(deltas, torch.Tensor):
        raise TypeError(
            f"deltas: expected a torch.Tensor of shape (K, d_out, d_in), got {type(deltas).__name__}"
        )
    if deltas.ndim != 3:
        raise ValueError(f"deltas: expected a tensor of shape (K, d_out, d_in), got {tuple(deltas.shape)}")
    if not deltas.is_floating_point():
        raise TypeError(f"deltas: expected a floating-point tensor, got dtype {deltas.dtype}")
    if deltas.shape[0] == 0:
        raise ValueError("deltas: expected at least one task update (K >= 1), got K = 0")
    if deltas.numel() == 0:
        raise ValueError(f"deltas: expected non-empty layers, got shape {tuple(deltas.shape)}")
    if not torch.isfinite(deltas).all():
        raise ValueError("deltas: contains NaN or inf")
    return deltas


def _density(density: object) -> float:
    return fraction(density, "density", open_low=True)


def task_arithmetic_merge(deltas: torch.Tensor, *, lam: float = 1.0) -> torch.Tensor:
    """``lam * sum_k deltas[k]``; ``deltas``: ``(K, d_out, d_in)``; ``lam > 0``."""
    lam = positive_float(lam, "lam")
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
    """TIES-merging (trim, elect sign, disjoint mean) of ``deltas`` ``(K, d_out, d_in)``;
    ``density`` in (0, 1], ``lam > 0``."""
    deltas = _check_deltas(deltas)
    density, lam = _density(density), positive_float(lam, "lam")
    return lam * _elect_disjoint_mean(_trim(deltas, density))


def dare_merge(
    deltas: torch.Tensor,
    *,
    density: float = 0.5,
    lam: float = 1.0,
    combine: str = "linear",
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """DARE: random drop with keep probability ``density`` and rescale, then ``combine`` ("linear"|"ties").

    ``generator``: a ``torch.Generator`` for the drop mask (drawn on the generator's device, then moved
    to the updates' device), or None for torch's global generator.
    """
    deltas = _check_deltas(deltas)
    density, lam = _density(density), positive_float(lam, "lam")
    combine = one_of(combine, "combine", ("linear", "ties"))
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator: expected a torch.Generator or None, got {type(generator).__name__}")
    where = generator.device if generator is not None else deltas.device
    keep = torch.rand(deltas.shape, generator=generator, dtype=deltas.dtype, device=where) < density
    rescaled = deltas * keep.to(deltas.device) / density
    if combine == "linear":
        return lam * rescaled.sum(0)
    return lam * _elect_disjoint_mean(rescaled)


def joint_svd(adapters: Sequence[LoRAAdapter]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """KnOTS's aligned basis: ``(U (d_out, R), sigma (R,), coeffs (K, R, d_in))`` with
    ``[Delta_1 | ... | Delta_K] = U diag(sigma) [V_1^T | ... | V_K^T]`` and ``coeffs[k] = diag(sigma) V_k^T
    = U^T Delta_k``. Computed from the low-rank factors (QR of the stacked ``s_k B_k``, then an
    eigen-decomposition of the ``sum r_k``-sized Gram matrix); no dense update is formed."""
    check_adapters(adapters)
    dtype = torch.promote_types(adapters[0].A.dtype, torch.float32)
    As = [ad.A.to(dtype) for ad in adapters]
    Bs = [ad.scaling * ad.B.to(dtype) for ad in adapters]
    Q, _ = torch.linalg.qr(torch.cat(Bs, dim=1), mode="reduced")  # (d_out, m)
    coeffs = torch.stack([(Q.T @ B) @ A for A, B in zip(As, Bs, strict=True)])  # (K, m, d_in)
    gram = torch.einsum("kid,kjd->ij", coeffs, coeffs)
    evals, evecs = torch.linalg.eigh(gram)
    order = torch.argsort(evals, descending=True)
    sigma = evals[order].clamp_min(0.0).sqrt()
    evecs = evecs[:, order]
    keep = sigma > _REL_TOL * sigma.max().clamp_min(torch.finfo(dtype).tiny)
    evecs, sigma = evecs[:, keep], sigma[keep]
    return Q @ evecs, sigma, torch.einsum("ij,kid->kjd", evecs, coeffs)


def knots_factors(
    adapters: Sequence[LoRAAdapter], *, density: float = 0.2, lam: float = 1.0, combine: str = "ties"
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`knots_merge` as factors ``(lam * U (d_out, R), diag(sigma) V_merged^T (R, d_in))``."""
    combine = one_of(combine, "combine", ("ties", "mean"))
    density, lam = _density(density), positive_float(lam, "lam")
    U, sigma, coeffs = joint_svd(adapters)
    if sigma.numel() == 0:
        return lam * U, coeffs.sum(0)
    v = coeffs / sigma[None, :, None]  # (K, R, d_in): the V_k^T blocks
    v_merged = _elect_disjoint_mean(_trim(v, density)) if combine == "ties" else v.mean(0)
    return lam * U, sigma[:, None] * v_merged


def knots_merge(
    adapters: Sequence[LoRAAdapter], *, density: float = 0.2, lam: float = 1.0, combine: str = "ties"
) -> torch.Tensor:
    """KnOTS: merge the task blocks ``V_k`` of the joint SVD by TIES (``combine="ties"``) or by their
    mean (``"mean"``), returning ``lam * U diag(sigma) V_merged^T`` ``(d_out, d_in)``."""
    B, A = knots_factors(adapters, density=density, lam=lam, combine=combine)
    return B @ A
