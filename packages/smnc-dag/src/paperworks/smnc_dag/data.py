"""Synthetic DAGs and structural equation models (the benchmark family of NOTEARS and DAGMA).

Generative model (latent: the DAG ``B`` and its parameters; observed: ``X`` only):

- graph: Erdos-Renyi (``"ER"``, each of the ``d(d-1)/2`` pairs an edge with probability
  ``2 k / (d - 1)``, so ``k d`` expected edges) or scale-free (``"SF"``, Barabasi-Albert with ``k``
  edges per new node, each edge pointing from the newer to the older node), oriented along a random
  order, then nodes randomly permuted;
- linear Gaussian SEM: ``X = X W + N``, ``W_ij ~ U(+-[0.5, 2])`` on edges, ``N ~ N(0, noise_scale^2)``
  i.i.d. (equal variances, identifiable);
- nonlinear SEM: ``x_j = sum_h a_jh sigmoid(x_pa(j) . w_jh) + n_j`` with 100 hidden units and
  weights ``U(+-[0.5, 2])`` (NOTEARS' "mlp" model), ``n_j ~ N(0, 1)``.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

__all__ = [
    "simulate_dag",
    "simulate_linear_sem",
    "simulate_nonlinear_sem",
    "simulate_weights",
    "ancestry_pairs",
]


def _check_rng(rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, int | np.integer) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise TypeError(f"rng: expected a numpy Generator or a non-negative int seed, got {rng!r}")


def simulate_dag(d: int, k: int = 2, graph_type: str = "ER", rng=0) -> np.ndarray:
    """Random DAG, ``(d, d)`` bool adjacency with ``B[i, j]`` meaning ``i -> j``."""
    rng = _check_rng(rng)
    if isinstance(d, bool) or not isinstance(d, int) or d < 2:
        raise ValueError(f"d: expected an int >= 2, got {d!r}")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k < d:
        raise ValueError(f"k: expected an int in [1, d - 1], got {k!r}")
    if graph_type == "ER":
        p = min(1.0, 2 * k / (d - 1))
        B = np.tril(rng.random((d, d)) < p, k=-1)  # i > j: older j -> newer i after transpose below
        B = B.T
    elif graph_type == "SF":
        g = nx.barabasi_albert_graph(d, k, seed=int(rng.integers(2**31)))
        B = np.zeros((d, d), dtype=bool)
        for u, v in g.edges():
            B[max(u, v), min(u, v)] = True  # newer -> older
    else:
        raise ValueError(f"graph_type: expected 'ER' or 'SF', got {graph_type!r}")
    perm = rng.permutation(d)
    return B[np.ix_(perm, perm)]


def simulate_weights(B: np.ndarray, rng=0, low: float = 0.5, high: float = 2.0) -> np.ndarray:
    """Edge weights ``U(+-[low, high])`` on the support of ``B``: ``(d, d)`` float."""
    rng = _check_rng(rng)
    B = np.asarray(B, dtype=bool)
    mag = rng.uniform(low, high, size=B.shape)
    sign = np.where(rng.random(B.shape) < 0.5, -1.0, 1.0)
    return B * mag * sign


def simulate_linear_sem(W: np.ndarray, n: int, rng=0, noise_scale: float = 1.0) -> np.ndarray:
    """``n`` samples of ``X = X W + N``, Gaussian equal-variance noise: ``(n, d)``. Solved in closed form."""
    rng = _check_rng(rng)
    W = np.asarray(W, dtype=float)
    d = W.shape[0]
    if not nx.is_directed_acyclic_graph(nx.DiGraph(W != 0)):
        raise ValueError("W: expected the weights of a DAG")
    N = noise_scale * rng.standard_normal((n, d))
    return np.linalg.solve((np.eye(d) - W).T, N.T).T


def simulate_nonlinear_sem(B: np.ndarray, n: int, rng=0, hidden: int = 100) -> np.ndarray:
    """``n`` samples of the additive-noise MLP SEM on DAG ``B``: ``(n, d)``."""
    rng = _check_rng(rng)
    B = np.asarray(B, dtype=bool)
    d = B.shape[0]
    g = nx.DiGraph(B)
    if not nx.is_directed_acyclic_graph(g):
        raise ValueError("B: expected a DAG")
    X = np.zeros((n, d))
    for j in nx.topological_sort(g):
        pa = np.flatnonzero(B[:, j])
        x = rng.standard_normal(n)
        if pa.size:
            W1 = rng.uniform(0.5, 2.0, (pa.size, hidden)) * np.where(
                rng.random((pa.size, hidden)) < 0.5, -1, 1
            )
            w2 = rng.uniform(0.5, 2.0, hidden) * np.where(rng.random(hidden) < 0.5, -1, 1)
            x = x + (1 / (1 + np.exp(-X[:, pa] @ W1))) @ w2
        X[:, j] = x
    return X


def ancestry_pairs(B: np.ndarray) -> np.ndarray:
    """All ``(i, j)`` with ``i`` an ancestor of ``j`` in DAG ``B``: ``(m, 2)`` int array."""
    g = nx.DiGraph(np.asarray(B, dtype=bool))
    closure = nx.transitive_closure_dag(g)
    return np.array(sorted(closure.edges()), dtype=int).reshape(-1, 2)
