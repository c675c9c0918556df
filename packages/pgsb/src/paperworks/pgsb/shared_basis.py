"""Stage 1 of PGSB: the joint (shared) basis of K LoRA updates and its support counts.

For one layer with task updates ``Delta_k = s_k B_k A_k`` (``d_out x d_in``, rank ``r_k``), the joint
SVD of the column-stacked updates ``[Delta_1 | ... | Delta_K] = U diag(sigma) [V_1^T | ... | V_K^T]``
gives an orthonormal output basis ``U`` shared by every task (the construction of KnOTS, Stoica et al.
2024) and per-task coefficients ``C_k = U^T Delta_k = diag(sigma) V_k^T``. It is computed without forming
any dense update: ``U`` lies in the span of the stacked ``B_k``, so a QR of ``[s_1 B_1 | ... | s_K B_K]``
(``d_out x sum r_k``) followed by an eigen-decomposition of the small Gram matrix ``sum_k C_k C_k^T``
gives it in ``O(d_out (sum r)^2 + (sum r)^2 d_in)``.

Support (our reading of "directions with reliable shared support across tasks"): task ``k`` supports
direction ``i`` when the share of its update energy in that direction,
``e_ik = ||C_k[i]||^2 / ||Delta_k||_F^2``, is at least ``tau / r_k`` (``tau`` times the share a rank-``r_k``
update spreading its energy uniformly would give). The support count ``c_i = #{k : e_ik >= tau / r_k}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .lora import LoRAAdapter

__all__ = ["SharedBasis", "shared_basis"]


@dataclass(frozen=True)
class SharedBasis:
    """The joint basis of K updates of one layer.

    ``U``: ``(d_out, R)`` orthonormal columns, sorted by ``sigma`` (descending); ``sigma``: ``(R,)``
    joint singular values; ``coeffs``: ``(K, R, d_in)`` with ``Delta_k = U @ coeffs[k]``;
    ``energy``: ``(R, K)`` energy shares ``e_ik``; ``support``: ``(R,)`` support counts ``c_i``.
    """

    U: torch.Tensor
    sigma: torch.Tensor
    coeffs: torch.Tensor
    energy: torch.Tensor
    support: torch.Tensor

    def reconstruct(self, k: int) -> torch.Tensor:
        """Task ``k``'s dense update ``U @ coeffs[k]``, shape ``(d_out, d_in)``."""
        return self.U @ self.coeffs[k]


def shared_basis(
    adapters: Sequence[LoRAAdapter], *, support_threshold: float = 0.1, rel_tol: float = 1e-6
) -> SharedBasis:
    """Joint SVD basis of one layer's adapters (see module docstring). Directions with joint singular
    value below ``rel_tol * sigma_max`` (numerical rank deficiency) are dropped."""
    if len(adapters) == 0:
        raise ValueError("adapters: expected at least one adapter (K >= 1), got K = 0")
    if not 0.0 <= support_threshold:
        raise ValueError(f"support_threshold: expected a non-negative number, got {support_threshold!r}")
    shape = adapters[0].shape
    for k, ad in enumerate(adapters):
        if ad.shape != shape:
            raise ValueError(f"adapters[{k}]: expected layer shape {shape} like adapters[0], got {ad.shape}")
    dtype = torch.promote_types(adapters[0].A.dtype, torch.float32)
    As = [ad.A.to(dtype) for ad in adapters]
    Bs = [ad.scaling * ad.B.to(dtype) for ad in adapters]
    Q, _ = torch.linalg.qr(torch.cat(Bs, dim=1), mode="reduced")  # (d_out, m)
    coeffs = torch.stack([(Q.T @ B) @ A for A, B in zip(As, Bs, strict=True)])  # (K, m, d_in)
    gram = torch.einsum("kid,kjd->ij", coeffs, coeffs)
    evals, evecs = torch.linalg.eigh(gram)
    order = torch.argsort(evals, descending=True)
    evals, evecs = evals[order].clamp_min(0.0), evecs[:, order]
    sigma = evals.sqrt()
    keep = sigma > rel_tol * sigma.max().clamp_min(torch.finfo(dtype).tiny)
    evecs, sigma = evecs[:, keep], sigma[keep]
    U = Q @ evecs
    coeffs = torch.einsum("ij,kid->kjd", evecs, coeffs)
    row_energy = coeffs.pow(2).sum(-1)  # (K, R)
    total = row_energy.sum(-1, keepdim=True).clamp_min(torch.finfo(dtype).tiny)
    energy = (row_energy / total).T  # (R, K)
    ranks = torch.tensor([ad.rank for ad in adapters], dtype=dtype)
    support = (energy >= support_threshold / ranks).sum(-1)
    return SharedBasis(U=U, sigma=sigma, coeffs=coeffs, energy=energy, support=support)
