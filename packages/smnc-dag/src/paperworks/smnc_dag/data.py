"""Synthetic DAGs and structural equation models (the benchmark family of NOTEARS and DAGMA).

Generative model (latent: the DAG ``B`` and its parameters; observed: ``X`` only):

- graph: Erdos-Renyi (``"ER"``, each of the ``d(d-1)/2`` pairs an edge with probability
  ``2 k / (d - 1)``, so ``k d`` expected edges) or scale-free (``"SF"``, Barabasi-Albert with ``k``
  edges per new node, each edge pointing from the newer to the older node), oriented along a random
  order, then nodes randomly permuted;
- linear Gaussian SEM: ``X = X W + N``, ``W_ij ~ U(+-[0.5, 2])`` on edges, ``N_j ~ N(0, sigma_j^2)``
  with one ``noise_scale`` for every node (equal variances: identifiable, and least squares recovers the
  graph) or one per node (unequal variances, :func:`noise_scales`: the harder, realistic case where a
  least-squares score may prefer a wrong orientation);
- nonlinear SEM: ``x_j = sum_h a_jh sigmoid(x_pa(j) . w_jh) + n_j`` with 100 hidden units and
  weights ``U(+-[0.5, 2])`` (NOTEARS' "mlp" model), ``n_j ~ N(0, 1)``.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from paperworks.core.validate import (
    as_generator,
    finite_array,
    int_in_range,
    one_of,
    positive_float,
    positive_int,
)

__all__ = [
    "noise_scales",
    "simulate_dag",
    "simulate_linear_sem",
    "simulate_nonlinear_sem",
    "simulate_weights",
    "ancestry_pairs",
]


def _check_rng(rng) -> np.random.Generator:
    if rng is None:
        raise TypeError("rng: expected a numpy Generator or a non-negative int seed, got None")
    return as_generator(rng, "rng")


def _check_dag(B, name: str) -> np.ndarray:
    B = np.asarray(B)
    if B.ndim != 2 or B.shape[0] != B.shape[1] or B.shape[0] < 2:
        raise ValueError(f"{name}: expected a square (d, d) adjacency with d >= 2, got shape {B.shape}")
    B = finite_array(B, name, dtype_kind=None)
    if not nx.is_directed_acyclic_graph(nx.DiGraph(B != 0)):
        raise ValueError(f"{name}: expected the adjacency of a DAG, found a cycle")
    return B


def noise_scales(d: int, rng=0, low: float = 0.5, high: float = 1.5) -> np.ndarray:
    """Unequal noise standard deviations ``sigma_j ~ U(low, high)``, one per node: ``(d,)``."""
    rng = _check_rng(rng)
    d = positive_int(d, "d")
    low, high = positive_float(low, "low"), positive_float(high, "high")
    if high < low:
        raise ValueError(f"high: expected a number >= low = {low}, got {high}")
    return rng.uniform(low, high, d)


def simulate_dag(d: int, k: int = 2, graph_type: str = "ER", rng=0) -> np.ndarray:
    """Random DAG, ``(d, d)`` bool adjacency with ``B[i, j]`` meaning ``i -> j``."""
    rng = _check_rng(rng)
    d = int_in_range(d, "d", 2)
    k = int_in_range(k, "k", 1, d - 1)
    graph_type = one_of(graph_type, "graph_type", ("ER", "SF"))
    if graph_type == "ER":
        p = min(1.0, 2 * k / (d - 1))
        B = np.tril(rng.random((d, d)) < p, k=-1)  # i > j: older j -> newer i after transpose below
        B = B.T
    elif graph_type == "SF":
        g = nx.barabasi_albert_graph(d, k, seed=int(rng.integers(2**31)))
        B = np.zeros((d, d), dtype=bool)
        for u, v in g.edges():
            B[max(u, v), min(u, v)] = True  # newer -> older
    perm = rng.permutation(d)
    return B[np.ix_(perm, perm)]


def simulate_weights(B: np.ndarray, rng=0, low: float = 0.5, high: float = 2.0) -> np.ndarray:
    """Edge weights ``U(+-[low, high])`` on the support of ``B``: ``(d, d)`` float."""
    rng = _check_rng(rng)
    B = _check_dag(B, "B") != 0
    low, high = positive_float(low, "low"), positive_float(high, "high")
    if high < low:
        raise ValueError(f"high: expected a number >= low = {low}, got {high}")
    mag = rng.uniform(low, high, size=B.shape)
    sign = np.where(rng.random(B.shape) < 0.5, -1.0, 1.0)
    return B * mag * sign


def simulate_linear_sem(W: np.ndarray, n: int, rng=0, noise_scale=1.0) -> np.ndarray:
    """``n`` samples of ``X = X W + N``, Gaussian noise: ``(n, d)``, solved in closed form.

    ``W``: ``(d, d)`` weights of a DAG; ``noise_scale``: a positive number (equal variances) or ``(d,)``
    positive standard deviations (:func:`noise_scales`).
    """
    rng = _check_rng(rng)
    W = finite_array(_check_dag(W, "W"), "W")
    d = W.shape[0]
    n = positive_int(n, "n")
    scale = finite_array(noise_scale, "noise_scale")
    if scale.ndim == 0:
        scale = np.full(d, float(scale))
    if scale.shape != (d,) or np.any(scale <= 0):
        raise ValueError(
            f"noise_scale: expected a positive number or ({d},) positive numbers, got shape {scale.shape}"
        )
    N = scale * rng.standard_normal((n, d))
    return np.linalg.solve((np.eye(d) - W).T, N.T).T


def simulate_nonlinear_sem(B: np.ndarray, n: int, rng=0, hidden: int = 100) -> np.ndarray:
    """``n`` samples of the additive-noise MLP SEM on DAG ``B``: ``(n, d)``."""
    rng = _check_rng(rng)
    B = _check_dag(B, "B") != 0
    n, hidden = positive_int(n, "n"), positive_int(hidden, "hidden")
    d = B.shape[0]
    g = nx.DiGraph(B)
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
    g = nx.DiGraph(_check_dag(B, "B") != 0)
    closure = nx.transitive_closure_dag(g)
    return np.array(sorted(closure.edges()), dtype=int).reshape(-1, 2)
