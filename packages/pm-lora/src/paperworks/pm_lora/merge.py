"""The spectral side of PM-LoRA: principal subspaces of a low-rank update and progressive merging.

A LoRA update is ``delta_W = B @ A`` with ``B`` of shape ``(out, r)`` and ``A`` of shape ``(r, in)``.
Every routine here works on the factors and never forms the dense ``(out, in)`` matrix, so its cost
is ``O((out + in) * r**2)``: the merge step does not grow with the layer size squared, nor with the
number of tasks merged so far.
"""

from __future__ import annotations

import torch

from paperworks.core.validate import finite_float, fraction, positive_int

__all__ = ["lowrank_svd", "merge_lowrank", "project_out", "spectral_basis"]


def _check_factors(B: torch.Tensor, A: torch.Tensor, *, name: str = "B, A") -> None:
    if not isinstance(B, torch.Tensor) or not isinstance(A, torch.Tensor):
        raise TypeError(f"{name}: expected torch tensors")
    if B.ndim != 2 or A.ndim != 2:
        raise ValueError(
            f"{name}: expected 2-d factors B (out, r) and A (r, in), got {tuple(B.shape)}, {tuple(A.shape)}"
        )
    if B.shape[1] != A.shape[0]:
        raise ValueError(f"{name}: inner ranks differ: B is {tuple(B.shape)}, A is {tuple(A.shape)}")
    if B.dtype != A.dtype or B.device != A.device:
        raise ValueError(
            f"{name}: B and A must share dtype and device, got {B.dtype}/{B.device} and {A.dtype}/{A.device}"
        )
    if not (torch.isfinite(B).all() and torch.isfinite(A).all()):
        raise ValueError(f"{name}: factors contain NaN or inf")


def lowrank_svd(B: torch.Tensor, A: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Thin SVD of ``B @ A`` from its factors: ``B @ A = U @ diag(S) @ Vh``.

    ``B``: (out, r), ``A``: (r, in). Returns ``U`` (out, q), ``S`` (q,), ``Vh`` (q, in) with
    ``q = min(r, out, in)``, singular values in descending order. Route: QR of ``B`` and of ``A.T``,
    then the SVD of the small ``r x r`` core ``R_B @ R_A.T``.
    """
    _check_factors(B, A)
    Qb, Rb = torch.linalg.qr(B)  # (out, q1), (q1, r)
    Qa, Ra = torch.linalg.qr(A.T)  # (in, q2), (q2, r)
    core = Rb @ Ra.T  # (q1, q2)
    Uc, S, Vhc = torch.linalg.svd(core, full_matrices=False)
    return Qb @ Uc, S, Vhc @ Qa.T


def spectral_basis(
    B: torch.Tensor, A: torch.Tensor, energy: float = 0.95, *, tol: float = 1e-6
) -> torch.Tensor:
    """Orthonormal basis of the principal input-side (row) subspace of ``B @ A``.

    Keeps the fewest leading right singular vectors whose squared singular values hold at least
    ``energy`` of the total (our reading of the paper's "spectral" subspace); singular values below
    ``tol * S[0]`` are never kept. Returns ``V`` of shape (in, p), ``V.T @ V = I_p``; ``p = 0``
    when the update is zero.
    """
    energy = fraction(energy, "energy")
    if energy == 0.0:
        raise ValueError("energy: expected a number in (0, 1], got 0.0")
    tol = finite_float(tol, "tol")
    _, S, Vh = lowrank_svd(B, A)
    if S.numel() == 0 or float(S[0]) == 0.0:
        return A.new_zeros((A.shape[1], 0))
    s2 = S.square()
    cum = torch.cumsum(s2, 0) / s2.sum()
    p = (
        int(torch.searchsorted(cum, torch.tensor(energy, dtype=cum.dtype, device=cum.device) - 1e-12).item())
        + 1
    )
    p = min(p, int((S > tol * S[0]).sum().item()))
    return Vh[:p].T.contiguous()


def project_out(A: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """``A @ (I - V @ V.T)``: rows of ``A`` (k, in) made orthogonal to the columns of ``V`` (in, p).

    This is the spectral orthogonal parametrisation of the task adapter: whatever ``A`` is,
    ``project_out(A, V) @ V == 0`` up to rounding, so the task update ``B_t @ A_t`` leaves the merged
    adapter's principal input directions untouched.
    """
    if not isinstance(A, torch.Tensor) or not isinstance(V, torch.Tensor):
        raise TypeError("A, V: expected torch tensors")
    if A.ndim != 2 or V.ndim != 2:
        raise ValueError(f"A, V: expected 2-d tensors, got shapes {tuple(A.shape)} and {tuple(V.shape)}")
    if V.shape[1] == 0:
        return A
    if V.shape[0] != A.shape[1]:
        raise ValueError(f"V: expected {A.shape[1]} rows (the input dimension of A), got {tuple(V.shape)}")
    return A - (A @ V) @ V.T


def merge_lowrank(
    B1: torch.Tensor, A1: torch.Tensor, B2: torch.Tensor, A2: torch.Tensor, rank: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Progressive merge: the best rank-``rank`` factorisation of ``B1 @ A1 + B2 @ A2``.

    ``B1`` (out, r1), ``A1`` (r1, in), ``B2`` (out, r2), ``A2`` (r2, in). Returns ``B`` (out, rank),
    ``A`` (rank, in) with ``B @ A`` the truncated SVD of the sum (Eckart-Young optimal in Frobenius
    norm) and the singular values split evenly, ``B = U sqrt(S)``, ``A = sqrt(S) Vh``. Zero columns
    pad the result when the sum has rank below ``rank``, so the adapter's shape never changes.
    """
    rank = positive_int(rank, "rank")
    _check_factors(B1, A1, name="B1, A1")
    _check_factors(B2, A2, name="B2, A2")
    if B1.dtype != B2.dtype or B1.device != B2.device:
        raise ValueError(
            "merge_lowrank: the two updates must share dtype and device, "
            f"got {B1.dtype}/{B1.device} and {B2.dtype}/{B2.device}"
        )
    if B1.shape[0] != B2.shape[0] or A1.shape[1] != A2.shape[1]:
        raise ValueError(
            "merge_lowrank: updates have different shapes: "
            f"{(B1.shape[0], A1.shape[1])} vs {(B2.shape[0], A2.shape[1])}"
        )
    if rank > min(B1.shape[0], A1.shape[1]):
        raise ValueError(f"rank: {rank} exceeds min(out, in) = {min(B1.shape[0], A1.shape[1])}")
    U, S, Vh = lowrank_svd(torch.cat([B1, B2], 1), torch.cat([A1, A2], 0))
    q = min(rank, S.numel())
    root = S[:q].sqrt()
    B = B1.new_zeros((B1.shape[0], rank))
    A = A1.new_zeros((rank, A1.shape[1]))
    B[:, :q] = U[:, :q] * root
    A[:q] = root[:, None] * Vh[:q]
    return B, A
