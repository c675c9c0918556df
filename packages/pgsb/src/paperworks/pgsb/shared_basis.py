"""Stage 1 of PGSB: the shared output directions of K LoRA updates, with support calibrated against chance.

For one layer with task updates ``Delta_k = s_k B_k A_k`` (``d_out x d_in``), let ``Q_k`` (``d_out x r_k``)
be an orthonormal basis of the column (output) space of ``Delta_k`` and ``P_k = Q_k Q_k^T`` its projector.
The eigenvectors ``u_i`` of ``sum_k P_k`` (the *flag mean* of the K subspaces, Draper et al. 2014; for
K = 2 its eigenvalues are ``1 +- cos theta_j`` of the principal angles, Bjorck & Golub 1973) form an
orthonormal basis ``U`` of the union of the output spaces, and each eigenvalue

    ``lambda_i = sum_k ||Q_k^T u_i||^2 = sum_k m_ik``,  ``m_ik = cos^2(angle(u_i, span Q_k))`` in [0, 1],

counts how many task subspaces contain ``u_i``: about 1 for a direction of one task, about ``c`` for a
direction that ``c`` tasks share, whatever the size of the update along it (a weak shared direction
counts as much as a strong one). It is computed from the SVD of the stacked bases
``[Q_1 | ... | Q_K] = U diag(sqrt(lambda)) V^T`` without forming any dense update.

Chance calibration (the null): K subspaces drawn independently and uniformly (Haar) with the same
dimensions in ``R^{d_out}`` also overlap, more so as ``sum_k r_k`` approaches ``d_out``. Two thresholds
come from that null, by Monte Carlo (a fixed seed, cached per shape):

- directions: ``lambda_null``, the ``1 - significance`` quantile of the *largest* eigenvalue of
  ``sum_k P_k`` (``n_null`` draws). Direction ``i`` is *shared* when ``lambda_i > lambda_null`` and at
  least two tasks support it; on unrelated adapters the chance that any direction of a layer is called
  shared is then at most ``significance``;
- supporters: task ``k`` supports direction ``i`` when ``m_ik`` exceeds ``mu_null(r_k)``, the
  ``1 - significance`` quantile of the membership of a direction in a random ``r_k``-dimensional
  subspace (a Beta(r_k / 2, (d_out - r_k) / 2) variable), or a fixed ``support_threshold``
  when one is given.

Per-task coefficients ``C_k = U^T Delta_k`` (``R x d_in``) reconstruct each update exactly:
``Delta_k = U C_k``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from paperworks.core.validate import fraction, int_in_range, nonnegative_int, positive_int

from .lora import LoRAAdapter

__all__ = [
    "SharedBasis",
    "clear_null_cache",
    "null_membership_threshold",
    "null_overlap_threshold",
    "shared_basis",
]

_REL_TOL = 1e-6  # singular values below this fraction of the largest are numerical zeros
_EPS = 1e-6  # lambda_i must exceed the null quantile by this much (a forced intersection gives exactly 2)


@dataclass(frozen=True)
class SharedBasis:
    """The shared basis of K updates of one layer (see the module docstring).

    ``U``: ``(d_out, R)`` orthonormal columns, sorted by ``overlap`` (descending); ``overlap``: ``(R,)``
    eigenvalues ``lambda_i`` of ``sum_k P_k``; ``membership``: ``(R, K)`` the ``m_ik`` (rows sum to
    ``overlap``); ``coeffs``: ``(K, R, d_in)`` with ``Delta_k = U @ coeffs[k]``; ``supporters``:
    ``(R, K)`` bool, ``m_ik`` above the task's support level; ``support``: ``(R,)`` supporter counts;
    ``shared``: ``(R,)`` bool; ``null_threshold``: the chance level ``lambda_null`` the overlaps were
    compared with.
    """

    U: torch.Tensor
    overlap: torch.Tensor
    membership: torch.Tensor
    coeffs: torch.Tensor
    supporters: torch.Tensor
    support: torch.Tensor
    shared: torch.Tensor
    null_threshold: float

    @property
    def n_tasks(self) -> int:
        return int(self.coeffs.shape[0])

    def reconstruct(self, k: int) -> torch.Tensor:
        """Task ``k``'s dense update ``U @ coeffs[k]``, shape ``(d_out, d_in)``; ``0 <= k < K``."""
        k = int_in_range(k, "k", 0, self.n_tasks - 1)
        return self.U @ self.coeffs[k]


def _output_basis(ad: LoRAAdapter, dtype: torch.dtype) -> torch.Tensor:
    """Orthonormal basis ``(d_out, r')`` of the column space of ``Delta = s B A`` (``r' <= r``)."""
    Qb, Rb = torch.linalg.qr(ad.B.to(dtype), mode="reduced")
    core = Rb @ ad.A.to(dtype)  # Delta / s = Qb @ core, core (r, d_in)
    Uc, S, _ = torch.linalg.svd(core, full_matrices=False)
    keep = S > _REL_TOL * S.max() if S.numel() and S.max() > 0 else torch.zeros_like(S, dtype=torch.bool)
    return Qb @ Uc[:, keep]


def check_adapters(adapters: Sequence[LoRAAdapter], name: str = "adapters") -> tuple[int, int]:
    """K >= 1 LoRAAdapters of one layer shape; returns that shape."""
    if isinstance(adapters, LoRAAdapter) or not isinstance(adapters, Sequence):
        raise TypeError(f"{name}: expected a sequence of LoRAAdapter, got {type(adapters).__name__}")
    if len(adapters) == 0:
        raise ValueError(f"{name}: expected at least one adapter (K >= 1), got K = 0")
    for k, ad in enumerate(adapters):
        if not isinstance(ad, LoRAAdapter):
            raise TypeError(f"{name}[{k}]: expected a LoRAAdapter, got {type(ad).__name__}")
    shape = adapters[0].shape
    for k, ad in enumerate(adapters):
        if ad.shape != shape:
            raise ValueError(f"{name}[{k}]: expected layer shape {shape} like {name}[0], got {ad.shape}")
        if ad.A.device != adapters[0].A.device:
            raise ValueError(f"{name}[{k}]: on {ad.A.device}, {name}[0] on {adapters[0].A.device}")
    return shape


def _top_eig_direct(d_out: int, ranks: tuple[int, ...], n: int, rng: np.random.Generator) -> torch.Tensor:
    """Largest eigenvalue of ``sum_k P_k`` for ``n`` draws of Haar subspaces, from QRs of Gaussians."""
    g = torch.from_numpy(rng.standard_normal((n, d_out, sum(ranks))))
    Q = torch.cat([torch.linalg.qr(b, mode="reduced")[0] for b in g.split(list(ranks), dim=2)], dim=2)
    return torch.linalg.eigvalsh(Q.transpose(1, 2) @ Q)[:, -1]


def _top_eig_bartlett(d_out: int, ranks: tuple[int, ...], n: int, rng: np.random.Generator) -> torch.Tensor:
    """The same law without any ``d_out``-sized array (needs ``sum r_k <= d_out``): the Gram ``W = G^T G``
    of the Gaussian ``G = [G_1 | ... | G_K]`` (``d_out x m``) is Wishart(``d_out``, ``I_m``), drawn by the
    Bartlett decomposition ``W = L L^T`` (``L_ii^2 ~ chi2(d_out - i)``, ``L_ij ~ N(0, 1)`` below the
    diagonal), and ``Q_j^T Q_k = W_jj^{-1/2} W_jk W_kk^{-1/2}`` for ``Q_k = G_k (G_k^T G_k)^{-1/2}``."""
    m = sum(ranks)
    L = torch.from_numpy(rng.standard_normal((n, m, m))).tril(-1)
    idx = torch.arange(m)
    L[:, idx, idx] = torch.from_numpy(np.sqrt(rng.chisquare(d_out - np.arange(m), size=(n, m))))
    W = L @ L.transpose(1, 2)
    for a, b in zip(np.cumsum((0, *ranks))[:-1].tolist(), np.cumsum(ranks).tolist()):
        ev, V = torch.linalg.eigh(W[:, a:b, a:b])
        R = (V / ev.sqrt()[:, None, :]) @ V.transpose(1, 2)  # W_kk^{-1/2}
        W[:, a:b, :] = R @ W[:, a:b, :]
        W[:, :, a:b] = W[:, :, a:b] @ R
    return torch.linalg.eigvalsh(W)[:, -1]


@functools.lru_cache(maxsize=256)
def _null_quantile(d_out: int, ranks: tuple[int, ...], significance: float, n_null: int, seed: int) -> float:
    ranks = tuple(r for r in ranks if r > 0)
    if len(ranks) <= 1:
        return 1.0 if ranks else 0.0
    rng = np.random.default_rng(seed)
    draw = _top_eig_bartlett if sum(ranks) <= d_out else _top_eig_direct
    # each draw costs O(m^3), m = sum r_k: fewer draws beyond m = 64, where the top eigenvalue concentrates
    n_null = min(n_null, max(100, int(n_null * (64 / sum(ranks)) ** 3)))
    chunk = max(1, min(n_null, int(4e6 // sum(ranks) ** 2)))  # bounded memory per batch
    top = torch.cat([draw(d_out, ranks, min(chunk, n_null - a), rng) for a in range(0, n_null, chunk)])
    return float(torch.quantile(top, 1.0 - significance))


@functools.lru_cache(maxsize=256)
def _null_membership(d_out: int, r: int, significance: float, seed: int, n: int = 20000) -> float:
    if r >= d_out:
        return 1.0
    m = np.random.default_rng(seed + 1).beta(r / 2, (d_out - r) / 2, size=n)  # ||P u||^2, Haar P
    return float(np.quantile(m, 1.0 - significance))


def clear_null_cache() -> None:
    """Forget the cached chance levels (they are recomputed, identically, on the next call)."""
    _null_quantile.cache_clear()
    _null_membership.cache_clear()


def null_membership_threshold(d_out: int, rank: int, *, significance: float = 0.05, seed: int = 0) -> float:
    """``mu_null``: the ``1 - significance`` quantile of ``||P u||^2`` for a fixed unit ``u`` and the
    projector ``P`` of a uniformly random ``rank``-dimensional subspace of ``R^{d_out}``, a
    Beta(rank / 2, (d_out - rank) / 2) variable (20000 draws from ``seed``; cached)."""
    d_out = positive_int(d_out, "d_out")
    rank = int_in_range(rank, "rank", 1, d_out)
    significance = fraction(significance, "significance", open_low=True, open_high=True)
    return _null_membership(d_out, rank, significance, nonnegative_int(seed, "seed"))


def null_overlap_threshold(
    d_out: int, ranks: Sequence[int], *, significance: float = 0.05, n_null: int = 1000, seed: int = 0
) -> float:
    """``lambda_null``: the ``1 - significance`` quantile of the largest eigenvalue of ``sum_k P_k`` for K
    independent uniformly random subspaces of dimensions ``ranks`` in ``R^{d_out}`` (Monte Carlo with
    ``n_null`` draws from ``seed``, by the Bartlett route when ``sum ranks <= d_out``; cached). A draw costs
    ``O(m^3)`` with ``m = sum ranks``, so beyond ``m = 64`` it takes ``max(100, n_null (64 / m)^3)`` draws.
    K = 1 gives 1 (nothing can be shared)."""
    d_out = positive_int(d_out, "d_out")
    if isinstance(ranks, str | bytes) or not isinstance(ranks, Sequence) or not ranks:
        raise ValueError(f"ranks: expected a non-empty sequence of subspace dimensions, got {ranks!r}")
    rs = tuple(int_in_range(r, f"ranks[{i}]", 0, d_out) for i, r in enumerate(ranks))
    significance = fraction(significance, "significance", open_low=True, open_high=True)
    n_null = int_in_range(n_null, "n_null", 20)
    seed = nonnegative_int(seed, "seed")
    return _null_quantile(d_out, tuple(sorted(rs)), significance, n_null, seed)


def shared_basis(
    adapters: Sequence[LoRAAdapter],
    *,
    significance: float = 0.05,
    support_threshold: float | None = None,
    n_null: int = 1000,
    seed: int = 0,
) -> SharedBasis:
    """The shared basis of one layer's adapters (module docstring): directions, overlaps, supporters and
    which directions are shared beyond chance.

    ``significance``: the chance level of calling any direction of unrelated adapters shared, in (0, 1);
    ``support_threshold``: ``m_ik`` a supporting task needs, in (0, 1], or None (default) for the chance
    level ``mu_null(r_k)`` of :func:`null_membership_threshold`; ``n_null``, ``seed``: the Monte Carlo of
    the null thresholds (:func:`null_overlap_threshold`).
    """
    check_adapters(adapters)
    significance = fraction(significance, "significance", open_low=True, open_high=True)
    if support_threshold is not None:
        support_threshold = fraction(support_threshold, "support_threshold", open_low=True)
    n_null = int_in_range(n_null, "n_null", 20)
    seed = nonnegative_int(seed, "seed")
    dtype = torch.promote_types(adapters[0].A.dtype, torch.float32)
    bases = [_output_basis(ad, dtype) for ad in adapters]
    ranks = [q.shape[1] for q in bases]
    K, d_out = len(adapters), adapters[0].shape[0]
    if sum(ranks) == 0:  # every update is zero: an empty basis
        U = torch.zeros(d_out, 0, dtype=dtype, device=adapters[0].A.device)
    else:
        U, S, _ = torch.linalg.svd(torch.cat(bases, dim=1), full_matrices=False)
        U = U[:, S > _REL_TOL * S.max()]
    membership = torch.stack([(q.T @ U).pow(2).sum(0) for q in bases], dim=1)  # (R, K)
    overlap = membership.sum(1)
    order = torch.argsort(overlap, descending=True)
    U, overlap, membership = U[:, order], overlap[order], membership[order]
    coeffs = torch.stack([(U.T @ (ad.scaling * ad.B.to(dtype))) @ ad.A.to(dtype) for ad in adapters])
    threshold = _null_quantile(d_out, tuple(sorted(ranks)), significance, n_null, seed)
    if support_threshold is None:
        levels = [_null_membership(d_out, r, significance, seed) if r else 2.0 for r in ranks]
    else:
        levels = [support_threshold] * K
    supporters = membership > torch.tensor(levels, dtype=membership.dtype, device=membership.device)
    support = supporters.sum(1)
    shared = (
        (overlap > threshold + _EPS) & (support >= 2)
        if K > 1
        else torch.zeros_like(support, dtype=torch.bool)
    )
    return SharedBasis(
        U=U,
        overlap=overlap,
        membership=membership,
        coeffs=coeffs,
        supporters=supporters,
        support=support,
        shared=shared,
        null_threshold=threshold,
    )
