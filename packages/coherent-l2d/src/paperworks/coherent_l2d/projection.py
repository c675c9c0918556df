"""Expected utilities of the per-node actions, nodewise decisions, and the exact coherent projection.

With per-node probabilities ``p_v = P(y_v = 1 | x)``, expert accuracy ``e_v`` and deferral cost ``c_v``,
the expected utility of each action is ``U_v = (p_v, 1 - p_v, e_v - c_v)`` (an assertion scores 1 when
right; a deferral scores the expert's accuracy minus its cost). The utility of a joint action is the sum
over nodes, so its expectation depends on the marginals only, and the Bayes-optimal coherent rule is

    argmax over coherent a of  sum_v U_v(a_v)

solved exactly on a forest by dynamic programming: ``best_v(a) = U_v(a) + sum_{c child} max_{b:
COMPATIBLE[a, b]} best_c(b)``, O(|V| 9), batched over cases and level by level.
"""

from __future__ import annotations

import numpy as np

from paperworks.core.validate import finite_array

from .contract import COMPATIBLE
from .taxonomy import Taxonomy

__all__ = ["coherent_projection", "expected_utilities", "joint_utility", "nodewise_actions"]


def expected_utilities(p: object, accuracy: object, cost: object) -> np.ndarray:
    """U (m, n, 3) from probabilities ``p`` (m, n) in [0, 1], expert ``accuracy`` (n,) or (m, n) in [0, 1]
    and deferral ``cost`` (n,) >= 0."""
    p = finite_array(p, "p", ndim=2)
    if ((p < 0) | (p > 1)).any():
        raise ValueError("p: probabilities expected in [0, 1]")
    e = finite_array(accuracy, "accuracy")
    if e.shape not in ((p.shape[1],), p.shape):
        raise ValueError(f"accuracy: expected shape ({p.shape[1]},) or {p.shape}, got {e.shape}")
    e = np.broadcast_to(e, p.shape)
    if ((e < 0) | (e > 1)).any():
        raise ValueError("accuracy: expert accuracies expected in [0, 1]")
    c = finite_array(cost, "cost", shape=(p.shape[1],))
    if (c < 0).any():
        raise ValueError("cost: deferral costs expected >= 0")
    return np.stack([p, 1 - p, e - c], axis=-1)


def _check_utilities(taxonomy: Taxonomy, U: object) -> np.ndarray:
    U = finite_array(U, "U")
    if U.ndim == 2:
        U = U[None]
    if U.ndim != 3 or U.shape[1:] != (taxonomy.n, 3):
        raise ValueError(f"U: expected shape (m, {taxonomy.n}, 3), got {np.shape(U)}")
    return U


def nodewise_actions(U: object) -> np.ndarray:
    """Per-node argmax of U (m, n, 3): binary-relevance decisions, coherent or not (ties: lowest action)."""
    return np.argmax(np.asarray(U), axis=-1)


def joint_utility(U: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Sum over nodes of U[case, v, a_v]: (m,)."""
    return np.take_along_axis(U, actions[..., None], axis=-1)[..., 0].sum(-1)


def coherent_projection(taxonomy: Taxonomy, U: object) -> np.ndarray:
    """The coherent joint action (m, n) of largest total U (m, n, 3), by the tree DP (module docstring)."""
    U = _check_utilities(taxonomy, U)
    m, n, _ = U.shape
    best = np.zeros((m, n, 3))
    agg = np.zeros((m, n, 3))
    choice = np.zeros((m, n, 3), dtype=np.int8)  # choice[:, c, a]: child c's action under parent action a
    masked = np.where(COMPATIBLE[None, None], 0.0, -np.inf)  # (1, 1, parent a, child b)
    for nodes in reversed(taxonomy.levels):
        best[:, nodes] = U[:, nodes] + agg[:, nodes]
        par = taxonomy.parent[nodes]
        has = par >= 0
        if not has.any():
            continue
        kids = nodes[has]
        cand = best[:, kids, None, :] + masked  # (m, k, parent a, child b)
        choice[:, kids] = np.argmax(cand, axis=-1)
        np.add.at(agg, (slice(None), par[has]), cand.max(axis=-1))
    actions = np.zeros((m, n), dtype=np.int64)
    roots = taxonomy.roots
    actions[:, roots] = np.argmax(best[:, roots], axis=-1)
    for nodes in taxonomy.levels[1:]:
        actions[:, nodes] = np.take_along_axis(
            choice[:, nodes], actions[:, taxonomy.parent[nodes]][..., None], -1
        )[..., 0]
    return actions
