"""Critic-gradient Gram diagnostics (the paper's D1 scale spread, D2 co-linear collapse; our reading).

For per-task gradients ``G (K, P)`` on the shared critic parameters, the Gram matrix is
``M = G G^T`` (``M_kl = <g_k, g_l>``):

- ``condition_number``: ``lambda_max(M) / lambda_min(M)`` (``lambda_min`` floored at ``1e-12 lambda_max``;
  inf-free), large when gradients differ in scale (D1) or are nearly co-linear (D2);
- ``diag_spread``: ``max_k M_kk / min_k M_kk`` (D1: the ratio of squared gradient norms);
- ``mean_cosine``: mean off-diagonal cosine ``M_kl / sqrt(M_kk M_ll)`` (D2: near 1 = co-linear).
"""

from __future__ import annotations

import numpy as np

__all__ = ["gram_diagnostics"]


def gram_diagnostics(G) -> dict[str, float]:
    """``G (K, P)`` (torch tensor or array, ``K >= 2``) -> condition number, diagonal spread, mean cosine."""
    g = np.asarray(G.detach().cpu().double().numpy() if hasattr(G, "detach") else G, dtype=float)
    if g.ndim != 2 or g.shape[0] < 2:
        raise ValueError(f"G: expected shape (K, P) with K >= 2, got {g.shape}")
    if not np.all(np.isfinite(g)):
        raise ValueError("G: expected finite gradients")
    M = g @ g.T
    ev = np.linalg.eigvalsh(M)
    top = max(float(ev[-1]), 1e-300)
    low = max(float(ev[0]), 1e-12 * top)
    d = np.clip(np.diag(M), 1e-300, None)
    cos = M / np.sqrt(np.outer(d, d))
    k = g.shape[0]
    off = cos[~np.eye(k, dtype=bool)]
    return {
        "condition_number": top / low,
        "diag_spread": float(d.max() / d.min()),
        "mean_cosine": float(off.mean()),
    }
