"""Structure-recovery metrics: SHD, TPR, FDR (the NOTEARS/DAGMA conventions)."""

from __future__ import annotations

import numpy as np

__all__ = ["StructureMetrics", "count_accuracy"]


def _bool_square(B, name: str) -> np.ndarray:
    B = np.asarray(B)
    if B.ndim != 2 or B.shape[0] != B.shape[1]:
        raise ValueError(f"{name}: expected a square (d, d) adjacency, got shape {B.shape}")
    return B != 0


def count_accuracy(B_true, B_est) -> dict[str, float]:
    """SHD, TPR, FDR and edge counts of an estimated DAG against the truth, both ``(d, d)``.

    A reversed edge counts once in SHD (as NOTEARS' ``count_accuracy``) and as a false discovery.
    """
    T, E = _bool_square(B_true, "B_true"), _bool_square(B_est, "B_est")
    if T.shape != E.shape:
        raise ValueError(f"B_est: expected shape {T.shape} like B_true, got {E.shape}")
    tp = int((E & T).sum())
    reversed_ = int((E & T.T & ~T).sum())
    extra_und = int((E & ~T & ~T.T).sum())
    missing_und = int((T & ~E & ~E.T).sum())
    n_est, n_true = int(E.sum()), int(T.sum())
    return {
        "shd": float(extra_und + missing_und + reversed_),
        "tpr": tp / max(n_true, 1),
        "fdr": (n_est - tp) / max(n_est, 1),
        "nnz": float(n_est),
    }


class StructureMetrics:
    """Accumulates :func:`count_accuracy` over graphs: ``update(B_true, B_est)``, ``compute()`` -> means."""

    def __init__(self) -> None:
        self._rows: list[dict[str, float]] = []

    def update(self, B_true, B_est) -> None:
        self._rows.append(count_accuracy(B_true, B_est))

    def compute(self) -> dict[str, float]:
        if not self._rows:
            raise RuntimeError("StructureMetrics: update() was never called")
        return {k: float(np.mean([r[k] for r in self._rows])) for k in self._rows[0]}

    def reset(self) -> None:
        self._rows.clear()
