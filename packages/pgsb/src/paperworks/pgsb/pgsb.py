"""PGSB: merging K LoRA updates of one layer on a pretrained-guided shared basis.

Stage 1 (shared basis, :mod:`.shared_basis`): an orthonormal basis ``U`` of the tasks' output spaces, each
task's coefficients ``C_k = U^T Delta_k`` (rows = directions), and for each direction its supporting
tasks ``S_i`` (``c_i = |S_i|``) and whether it is *shared* beyond chance (its overlap exceeds the
random-subspace null and ``c_i >= min_support``); the other directions are task-specific.

Stage 2 (pretrained-guided re-parameterisation, our reading): a shared output direction ``u_i`` meets
the pretrained weight through ``w_i = W0^T u_i`` (``d_in``), the input pattern that ``W0`` already maps
onto ``u_i``. Each supporting task's coefficient row is re-parameterised against it,
``C_k[i] = a_ik * w_i / ||w_i|| + r_ik`` with ``r_ik`` orthogonal to ``w_i``: ``a_ik`` re-scales a feature
the pretrained layer already computes (a gain), ``r_ik`` reads a new input pattern. Row ``i`` of the merge:

- gains: a sign is elected (sign of ``sum_{k in S_i} a_ik``) and the agreeing supporters' gains are
  averaged (a TIES-style elect-and-average on one scalar per task and direction);
- residuals: the supporters' mean ``sum_{k in S_i} r_ik / c_i`` (a direction written by ``c`` tasks is
  averaged over them instead of counted ``c`` times, as Task Arithmetic does);
- non-supporters' rows ``C_k[i]``, ``k not in S_i``, and every task-specific direction: summed at full
  strength, as no other task writes there.

The merged update is ``lam * U @ C_merged``, of rank at most ``sum_k r_k``, returned as LoRA factors.
With one adapter every direction is task-specific and the adapter is returned unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from paperworks.core.validate import fraction, int_in_range, nonnegative_int, positive_float

from .lora import LoRAAdapter, check_bool, check_matrix
from .shared_basis import check_adapters, shared_basis

__all__ = ["PGSBConfig", "pgsb_merge"]


@dataclass(frozen=True)
class PGSBConfig:
    """Options of :func:`pgsb_merge` (no public text of the paper: these defaults are ours).

    ``significance``: chance level of the stage-1 null (the probability that a layer of unrelated
    adapters gets any shared direction), in (0, 1); ``support_threshold``: the membership ``m_ik`` a
    supporting task needs, in (0, 1], or None for the chance level of the random-subspace null;
    ``min_support``: supporters a shared direction needs (an int >= 2); ``lam``: global scale of the
    merged update (> 0); ``n_null``, ``null_seed``: the Monte Carlo of the null thresholds;
    ``use_shared_basis``: if False (ablation), every direction counts as shared by all K tasks;
    ``use_pretrained``: if False (ablation), shared rows are the supporters' mean without the
    gain/residual re-parameterisation against ``W0``.
    """

    significance: float = 0.05
    support_threshold: float | None = None
    min_support: int = 2
    lam: float = 1.0
    n_null: int = 1000
    null_seed: int = 0
    use_shared_basis: bool = True
    use_pretrained: bool = True

    def __post_init__(self) -> None:
        fraction(self.significance, "significance", open_low=True, open_high=True)
        if self.support_threshold is not None:
            fraction(self.support_threshold, "support_threshold", open_low=True)
        int_in_range(self.min_support, "min_support", 2)
        object.__setattr__(self, "lam", positive_float(self.lam, "lam"))
        int_in_range(self.n_null, "n_null", 20)
        nonnegative_int(self.null_seed, "null_seed")
        check_bool(self.use_shared_basis, "use_shared_basis")
        check_bool(self.use_pretrained, "use_pretrained")


def pgsb_merge(
    W0: torch.Tensor, adapters: Sequence[LoRAAdapter], config: PGSBConfig | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Merge one layer's adapters; returns LoRA-style factors ``(B_merged, A_merged)`` with
    ``Delta_merged = B_merged @ A_merged`` (``(d_out, R)`` and ``(R, d_in)``, scaling already applied).

    ``W0``: ``(d_out, d_in)`` pretrained weight (floating point, finite); ``adapters``: K >= 1 adapters
    of that shape.
    """
    if config is None:
        config = PGSBConfig()
    elif not isinstance(config, PGSBConfig):
        raise TypeError(f"config: expected a PGSBConfig, got {type(config).__name__}")
    check_matrix("W0", W0)
    shape = check_adapters(adapters)
    if tuple(W0.shape) != shape:
        raise ValueError(f"W0: expected shape {shape} of the adapters, got {tuple(W0.shape)}")
    basis = shared_basis(
        adapters,
        significance=config.significance,
        support_threshold=config.support_threshold,
        n_null=config.n_null,
        seed=config.null_seed,
    )
    C, U = basis.coeffs, basis.U  # (K, R, d_in), (d_out, R)
    K = C.shape[0]
    if config.use_shared_basis:
        supporters = basis.supporters.T  # (K, R)
        shared = basis.shared & (basis.support >= config.min_support)
    else:  # ablation: all K tasks support every direction
        supporters = torch.ones(K, C.shape[1], dtype=torch.bool, device=C.device)
        shared = torch.full((C.shape[1],), K > 1, dtype=torch.bool, device=C.device)
    sup = supporters[..., None].to(C.dtype)  # (K, R, 1)
    c = supporters.sum(0).clamp_min(1).to(C.dtype)[:, None]  # (R, 1)
    plain = C.sum(0)  # task-specific rows: plain sum
    others = (C * (1 - sup)).sum(0)  # non-supporters' part of each row, kept at full strength
    if config.use_pretrained:
        w = U.T @ W0.to(C.dtype)  # (R, d_in): pretrained interaction of each direction
        w_hat = w / w.norm(dim=1, keepdim=True).clamp_min(torch.finfo(C.dtype).tiny)
        gains = torch.einsum("krd,rd->kr", C, w_hat)  # (K, R)
        resid = C - gains[..., None] * w_hat[None]
        g_sup = gains * supporters
        sign = torch.sign(g_sup.sum(0))
        agree = (torch.sign(g_sup) == sign[None]) & supporters
        gain = (g_sup * agree).sum(0) / agree.sum(0).clamp_min(1)
        shared_rows = gain[:, None] * w_hat + (resid * sup).sum(0) / c + others
    else:
        shared_rows = (C * sup).sum(0) / c + others
    merged = torch.where(shared[:, None], shared_rows, plain)
    return config.lam * U, merged
