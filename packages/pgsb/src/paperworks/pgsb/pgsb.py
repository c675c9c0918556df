"""PGSB: merging K LoRA updates of one layer on a pretrained-guided shared basis.

Stage 1 (shared basis, :mod:`.shared_basis`): the joint SVD basis ``U`` of the task updates, each
task's coefficients ``C_k = U^T Delta_k`` (rows = directions) and each direction's support count ``c_i``.
Directions supported by at least ``min_support`` tasks are *shared*; the others are task-specific.

Stage 2 (pretrained-guided re-parameterisation, our reading): a shared output direction ``u_i`` meets
the pretrained weight through ``w_i = W0^T u_i`` (``d_in``), the input pattern that ``W0`` already maps
onto ``u_i``. Each task's coefficient row is re-parameterised against it,
``C_k[i] = a_ik * w_i / ||w_i|| + r_ik`` with ``r_ik`` orthogonal to ``w_i``: ``a_ik`` re-scales a feature
the pretrained layer already computes (a gain), ``r_ik`` reads a new input pattern. The merge is then:

- gains: a sign is elected per direction (sign of ``sum_k a_ik`` over the supporting tasks) and the
  agreeing gains are averaged (a TIES-style elect-and-average on one scalar per task and direction);
- residuals: the support-normalised sum ``sum_k r_ik / c_i`` (a direction supported by ``c`` tasks is
  averaged over them instead of counted ``c`` times, as Task Arithmetic does);
- task-specific directions (``c_i < min_support``): ``sum_k C_k[i]``, kept at full strength since no
  other task writes there.

The merged update is ``lam * U @ C_merged``, of rank at most ``sum_k r_k``, returned as a dense matrix or
as LoRA factors. With one adapter every direction is task-specific and the adapter is returned unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .lora import LoRAAdapter
from .shared_basis import shared_basis

__all__ = ["PGSBConfig", "pgsb_merge"]


@dataclass(frozen=True)
class PGSBConfig:
    """Options of :func:`pgsb_merge`.

    ``support_threshold``: ``tau`` of the support rule ``e_ik >= tau / r_k``; ``min_support``: tasks needed
    for a direction to count as shared; ``lam``: global scale of the merged update;
    ``use_shared_basis``: if False (ablation), every direction is treated as shared by all K tasks;
    ``use_pretrained``: if False (ablation), shared rows are merged by the support-normalised sum without
    the gain/residual re-parameterisation against ``W0``.
    """

    support_threshold: float = 0.1
    min_support: int = 2
    lam: float = 1.0
    use_shared_basis: bool = True
    use_pretrained: bool = True

    def __post_init__(self) -> None:
        if not self.support_threshold >= 0.0:
            raise ValueError(f"support_threshold: expected >= 0, got {self.support_threshold!r}")
        if self.min_support < 1:
            raise ValueError(f"min_support: expected an integer >= 1, got {self.min_support!r}")
        if not self.lam > 0.0:
            raise ValueError(f"lam: expected a positive scale, got {self.lam!r}")


def pgsb_merge(
    W0: torch.Tensor, adapters: Sequence[LoRAAdapter], config: PGSBConfig | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Merge one layer's adapters; returns LoRA-style factors ``(B_merged, A_merged)`` with
    ``Delta_merged = B_merged @ A_merged`` (``(d_out, R)`` and ``(R, d_in)``, scaling already applied).

    ``W0``: ``(d_out, d_in)`` pretrained weight; ``adapters``: K >= 1 adapters of that shape.
    """
    config = config or PGSBConfig()
    if not isinstance(W0, torch.Tensor) or W0.ndim != 2:
        raise ValueError(f"W0: expected a 2-D pretrained weight, got {getattr(W0, 'shape', type(W0))}")
    if not torch.isfinite(W0).all():
        raise ValueError("W0: contains NaN or inf")
    basis = shared_basis(adapters, support_threshold=config.support_threshold)
    if len(adapters) and tuple(W0.shape) != adapters[0].shape:
        raise ValueError(f"W0: expected shape {adapters[0].shape} of the adapters, got {tuple(W0.shape)}")
    C, U = basis.coeffs, basis.U  # (K, R, d_in), (d_out, R)
    K = C.shape[0]
    support = basis.support if config.use_shared_basis else torch.full_like(basis.support, K)
    supporters = basis.energy.T >= config.support_threshold / torch.tensor(
        [[ad.rank] for ad in adapters], dtype=C.dtype
    )  # (K, R)
    if not config.use_shared_basis:
        supporters = torch.ones_like(supporters)
    shared = support >= max(config.min_support, 2) if K > 1 else torch.zeros_like(support, dtype=torch.bool)
    c = support.clamp_min(1).to(C.dtype)[:, None]  # (R, 1)
    merged = C.sum(0)  # task-specific rows: plain sum
    if config.use_pretrained:
        w = U.T @ W0.to(C.dtype)  # (R, d_in): pretrained interaction of each direction
        w_hat = w / w.norm(dim=1, keepdim=True).clamp_min(torch.finfo(C.dtype).tiny)
        gains = torch.einsum("krd,rd->kr", C, w_hat)  # (K, R)
        resid = C - gains[..., None] * w_hat[None]
        g_sup = gains * supporters
        sign = torch.sign(g_sup.sum(0))
        agree = (torch.sign(g_sup) == sign[None]) & supporters
        gain = (g_sup * agree).sum(0) / agree.sum(0).clamp_min(1)
        shared_rows = gain[:, None] * w_hat + resid.sum(0) / c
    else:
        shared_rows = C.sum(0) / c
    merged = torch.where(shared[:, None], shared_rows, merged)
    return config.lam * U, merged
