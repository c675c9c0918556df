"""The Selective-Exclusion handoff contract (our reading, README Fidelity) and its incoherence checker.

Per node v an action ``a_v`` in {``POS`` (assert present), ``NEG`` (assert absent), ``DEFER`` (hand the
node to the expert)}. A joint action is coherent when it has none of the three violations, counted over
ancestor/descendant pairs (u an ancestor of w):

- **taxonomic contradiction**: ``a_u = NEG`` and ``a_w = POS`` (a finding asserted inside an absent one);
- **delegation violation**: ``a_u = DEFER`` and ``a_w`` in {POS, NEG} (the expert owns a delegated subtree);
- **implied deferral**: ``a_w = DEFER`` while the model's own assertions imply w: an ancestor asserted
  ``NEG`` (w is implied absent) or a descendant asserted ``POS`` (w is implied present).

Equivalently (checked in the tests) every parent/child pair is in :data:`COMPATIBLE`: under ``POS`` a child
may take any action, under ``NEG`` only ``NEG``, under ``DEFER`` only ``DEFER``; roots are free.
"""

from __future__ import annotations

import numpy as np

from .taxonomy import Taxonomy

__all__ = [
    "ACTIONS",
    "COMPATIBLE",
    "DEFER",
    "NEG",
    "POS",
    "VIOLATIONS",
    "check_actions",
    "is_coherent",
    "violations",
]

POS, NEG, DEFER = 0, 1, 2
ACTIONS = ("present", "absent", "defer")
VIOLATIONS = ("taxonomic", "delegation", "implied_deferral")

# COMPATIBLE[parent action, child action]
COMPATIBLE = np.array(
    [
        [True, True, True],  # parent present: the child is free
        [False, True, False],  # parent absent: the child is absent (asserted, not deferred)
        [False, False, True],  # parent deferred: the expert owns the subtree
    ]
)


def check_actions(taxonomy: Taxonomy, actions: object) -> np.ndarray:
    """Actions (m, n) with values in {0, 1, 2}; a single case (n,) becomes (1, n)."""
    a = np.asarray(actions)
    if a.ndim == 1:
        a = a[None]
    if a.ndim != 2 or a.shape[1] != taxonomy.n:
        raise ValueError(f"actions: expected shape (m, {taxonomy.n}), got {np.shape(actions)}")
    if a.dtype.kind not in "iu" or ((a < 0) | (a > 2)).any():
        raise ValueError("actions: expected integers in {0: present, 1: absent, 2: defer}")
    return a


def violations(taxonomy: Taxonomy, actions: object) -> dict[str, np.ndarray]:
    """Per case (m,), the number of violations of each type (module docstring)."""
    a = check_actions(taxonomy, actions)
    anc = taxonomy.ancestor  # (n, n): anc[u, w]
    pos, neg, dfr = (a == POS), (a == NEG), (a == DEFER)
    asserted = pos | neg

    def pairs(up: np.ndarray, down: np.ndarray) -> np.ndarray:
        # number of (u, w) with anc[u, w], up[:, u] and down[:, w]
        return np.einsum("mu,uw,mw->m", up.astype(np.int32), anc.astype(np.int32), down.astype(np.int32))

    taxonomic = pairs(neg, pos)
    delegation = pairs(dfr, asserted)
    below_neg = (neg.astype(np.int32) @ anc.astype(np.int32)) > 0  # (m, n): some ancestor asserted absent
    above_pos = (pos.astype(np.int32) @ anc.T.astype(np.int32)) > 0  # some descendant asserted present
    implied = (dfr & (below_neg | above_pos)).sum(1)
    return {"taxonomic": taxonomic, "delegation": delegation, "implied_deferral": implied}


def is_coherent(taxonomy: Taxonomy, actions: object) -> np.ndarray:
    """Per case (m,): no violation of any type."""
    v = violations(taxonomy, actions)
    return (v["taxonomic"] == 0) & (v["delegation"] == 0) & (v["implied_deferral"] == 0)
