"""Edge-recovery and reliability metrics on ``(n_phases, R, R)`` score arrays (off-diagonal entries)."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata, spearmanr

from paperworks.core.validate import finite_array

__all__ = ["auroc", "edge_auroc", "off_diagonal", "phase_distances", "split_half_spearman"]


def off_diagonal(A: np.ndarray) -> np.ndarray:
    """The off-diagonal entries of ``(..., R, R)`` as ``(..., R*(R-1))`` (row-major order)."""
    R = A.shape[-1]
    mask = ~np.eye(R, dtype=bool)
    return A[..., mask]


def auroc(truth: object, score: object) -> float:
    """Area under the ROC curve of ``score`` for binary ``truth`` (Mann-Whitney U with mid-ranks for ties)."""
    y = finite_array(truth, "truth", ndim=1, dtype_kind=None).astype(bool)
    s = finite_array(score, "score", shape=(y.size,))
    n1, n0 = int(y.sum()), int((~y).sum())
    if n1 == 0 or n0 == 0:
        raise ValueError("truth: expected both edges and non-edges")
    r = rankdata(s)
    return float((r[y].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def edge_auroc(truth: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """AUROC of each phase's off-diagonal scores against the truth: ``(n_phases,)``."""
    t, s = off_diagonal(np.asarray(truth)), off_diagonal(np.asarray(scores, float))
    return np.array([auroc(t[b], s[b]) for b in range(t.shape[0])])


def phase_distances(scores: np.ndarray) -> np.ndarray:
    """Frobenius distance between the off-diagonal scores of every pair of phases, ``(P, P)``."""
    s = off_diagonal(np.asarray(scores, float))
    return np.linalg.norm(s[:, None] - s[None, :], axis=-1)


def split_half_spearman(scores_a: np.ndarray, scores_b: np.ndarray) -> float:
    """Spearman correlation of two fits' off-diagonal edge weights, pooled over phases."""
    a, b = (
        off_diagonal(np.asarray(scores_a, float)).ravel(),
        off_diagonal(np.asarray(scores_b, float)).ravel(),
    )
    return float(spearmanr(a, b).statistic)
