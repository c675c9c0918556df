"""Taxonomic Belief Propagation: a Gibbs distribution over coherent joint actions, in torch.

Node scores ``s_v(a)`` (B, n, 3) define
``P(a) ∝ prod_v exp(s_v(a_v) / T) prod_{(u, v)} COMPATIBLE[a_u, a_v]``, a tree-structured model
whose support is exactly the coherent set (our reading of TBP, README Fidelity).
Sum-product runs upward level by level in log space:

    log Z_v(a) = s_v(a) / T + sum_{c child} logsumexp_b (log C[a, b] + log Z_c(b)),

and the expected utility rides the same recursion (an expectation semiring): with
``R_v(a) = E[utility of v's subtree | a_v = a]``,

    R_v(a) = U_v(a) + sum_c sum_b softmax_b(log C[a, b] + log Z_c(b)) R_c(b),
    E[U] = sum_a softmax_a(log Z_root) R_root(a)

summed over roots. Both are differentiable, so RPO (:mod:`.l2d`) trains the scores on the exact expected
utility. Marginals are the gradient of ``T log Z``; decoding is max-product
(:func:`~.projection.coherent_projection` on the scores) or the per-node argmax of the marginals.
"""

from __future__ import annotations

import torch

from .contract import COMPATIBLE
from .taxonomy import Taxonomy

__all__ = ["tbp_expected_utility", "tbp_log_partition", "tbp_marginals"]


def _log_compat(device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    c = torch.as_tensor(COMPATIBLE, device=device)
    return torch.where(
        c, torch.zeros((), dtype=dtype, device=device), torch.full((), -torch.inf, dtype=dtype)
    )


def _check(taxonomy: Taxonomy, scores: torch.Tensor) -> None:
    if not isinstance(scores, torch.Tensor) or scores.ndim != 3 or scores.shape[1:] != (taxonomy.n, 3):
        raise ValueError(
            f"scores: expected a tensor of shape (B, {taxonomy.n}, 3), got {tuple(scores.shape)}"
        )


def _upward(
    taxonomy: Taxonomy, scores: torch.Tensor, utilities: torch.Tensor | None, temperature: float
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per root: log Z_root (B, r, 3) and R_root (B, r, 3) (None without utilities)."""
    if temperature <= 0:
        raise ValueError(f"temperature: expected > 0, got {temperature}")
    B, n, _ = scores.shape
    logc = _log_compat(scores.device, scores.dtype)
    parent = torch.as_tensor(taxonomy.parent, device=scores.device)
    msg_z = scores.new_zeros(B, n, 3)  # sum over children of the log messages, per node and action
    msg_r = scores.new_zeros(B, n, 3) if utilities is not None else None
    levels = [torch.as_tensor(lv, device=scores.device) for lv in taxonomy.levels]
    logz_t = scores.new_zeros(B, n, 3)
    r_t = scores.new_zeros(B, n, 3)
    for nodes in reversed(levels):
        lz = scores[:, nodes] / temperature + msg_z[:, nodes]
        logz_t = logz_t.index_copy(1, nodes, lz)
        if utilities is not None:
            r = utilities[:, nodes] + msg_r[:, nodes]
            r_t = r_t.index_copy(1, nodes, r)
        par = parent[nodes]
        keep = par >= 0
        if not bool(keep.any()):
            continue
        kids, par = nodes[keep], par[keep]
        inner = logc[None, None] + logz_t[:, kids, None, :]  # (B, k, parent a, child b)
        msg_z = msg_z.index_add(1, par, torch.logsumexp(inner, dim=-1))
        if utilities is not None:
            w = torch.softmax(inner, dim=-1)
            msg_r = msg_r.index_add(1, par, (w * r_t[:, kids, None, :]).sum(-1))
    roots = torch.as_tensor(taxonomy.roots, device=scores.device)
    return logz_t[:, roots], (r_t[:, roots] if utilities is not None else None)


def tbp_log_partition(taxonomy: Taxonomy, scores: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """log Z (B,) of the coherent Gibbs distribution with node scores (B, n, 3)."""
    _check(taxonomy, scores)
    lz, _ = _upward(taxonomy, scores, None, temperature)
    return torch.logsumexp(lz, dim=-1).sum(-1)


def tbp_expected_utility(
    taxonomy: Taxonomy, scores: torch.Tensor, utilities: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """E_P[sum_v U_v(a_v)] (B,) under the coherent Gibbs distribution of ``scores``; U (B, n, 3)."""
    _check(taxonomy, scores)
    if utilities.shape != scores.shape:
        raise ValueError(f"utilities: expected shape {tuple(scores.shape)}, got {tuple(utilities.shape)}")
    lz, r = _upward(taxonomy, scores, utilities, temperature)
    return (torch.softmax(lz, dim=-1) * r).sum(-1).sum(-1)


def tbp_marginals(taxonomy: Taxonomy, scores: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """P(a_v = a) (B, n, 3): the gradient of ``T log Z`` with respect to the scores."""
    _check(taxonomy, scores)
    with torch.enable_grad():
        s = scores.detach().requires_grad_(True)
        (g,) = torch.autograd.grad(tbp_log_partition(taxonomy, s, temperature).sum(), s)
    return g * temperature
