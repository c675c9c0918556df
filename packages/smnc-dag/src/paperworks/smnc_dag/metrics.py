"""Structure-recovery metrics: SHD, TPR, FDR (the NOTEARS/DAGMA conventions) and SID.

The structural intervention distance (Peters and Buehlmann 2015) counts the ordered pairs ``(i, j)``
whose interventional distribution ``p(x_j | do(x_i))`` is wrong when it is computed from the estimated
graph by adjusting for the estimated parents of ``i``. :func:`sid` uses ``gadjid`` (Henckel, Wuertzen and
Weichwald 2024, arXiv 2402.08616; Rust, reachability-based) when it is installed, else
:func:`sid_reference`, our implementation of the definition through the adjustment criterion (Shpitser,
VanderWeele and Robins 2010), tested against ``gadjid`` and against interventional distributions computed
in closed form on small linear Gaussian SEMs.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from paperworks.core.validate import finite_array

__all__ = ["StructureMetrics", "count_accuracy", "sid", "sid_reference"]


def _bool_square(B, name: str) -> np.ndarray:
    B = np.asarray(B)
    if B.ndim != 2 or B.shape[0] != B.shape[1] or B.shape[0] == 0:
        raise ValueError(f"{name}: expected a non-empty square (d, d) adjacency, got shape {B.shape}")
    return finite_array(B, name, dtype_kind=None) != 0


def _dag(B, name: str) -> np.ndarray:
    B = _bool_square(B, name)
    if not nx.is_directed_acyclic_graph(nx.DiGraph(B)):
        raise ValueError(f"{name}: expected the adjacency of a DAG, found a cycle")
    return B


def _pair(B_true, B_est) -> tuple[np.ndarray, np.ndarray]:
    T, E = _dag(B_true, "B_true"), _dag(B_est, "B_est")
    if T.shape != E.shape:
        raise ValueError(f"B_est: expected shape {T.shape} like B_true, got {E.shape}")
    return T, E


def sid(B_true, B_est) -> int:
    """Structural intervention distance of the DAG ``B_est`` from the true DAG ``B_true`` (both
    ``(d, d)``, ``B[i, j]``: ``i -> j``): the number of ordered pairs in ``[0, d (d - 1)]``."""
    T, E = _pair(B_true, B_est)
    try:
        import gadjid
    except ImportError:
        return sid_reference(T, E)
    return int(gadjid.sid(T.astype(np.int8), E.astype(np.int8), edge_direction="from row to column")[1])


def sid_reference(B_true, B_est) -> int:
    """:func:`sid` by the definition, in pure Python (networkx d-separation): for each ``i``, ``Z =``
    the parents of ``i`` in ``B_est``; the pair ``(i, j)`` is correct when ``j`` is in ``Z`` and is not
    a descendant of ``i`` in ``B_true``, or when ``j`` is not in ``Z`` and ``Z`` is an adjustment set
    for ``(i, j)`` in ``B_true`` (no ``Z`` descends from a node on a causal path ``i -> ... -> j``, and
    ``Z`` blocks every non-causal path). ``O(d^2)`` d-separation tests: for small graphs."""
    T, E = _pair(B_true, B_est)
    d = T.shape[0]
    g = nx.DiGraph(T)
    g.add_nodes_from(range(d))
    desc = [nx.descendants(g, i) for i in range(d)]
    anc = [nx.ancestors(g, j) for j in range(d)]
    errors = 0
    for i in range(d):
        Z = set(np.flatnonzero(E[:, i]).tolist())
        for j in range(d):
            if j == i:
                continue
            if j in Z:
                errors += j in desc[i]
                continue
            causal = (desc[i] & (anc[j] | {j})) if j in desc[i] else set()
            forbidden = set().union(*(desc[c] | {c} for c in causal)) if causal else set()
            if Z & forbidden:
                errors += 1
                continue
            pbd = g.copy()  # proper back-door graph: drop the first edge of every causal path
            pbd.remove_edges_from([(i, c) for c in causal if pbd.has_edge(i, c)])
            errors += not nx.is_d_separator(pbd, {i}, {j}, Z)
    return errors


def count_accuracy(B_true, B_est) -> dict[str, float]:
    """SHD, TPR, FDR and edge counts of an estimated graph against the truth, both ``(d, d)``.

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
