"""The HAS margin against a brute-force reading of its definition, its invariances, trees, bad input."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.clip_has import (
    Hierarchy,
    balanced_tree,
    concept_prototypes,
    has_margin,
    has_margins,
    has_permutation_null,
    has_rate,
    random_tree,
    satisfies_has,
)

# a hand-made tree:        0
#                       /  |  \
#                      1   2   3
#                     / \  |   (leaf)
#                    4   5 6
#                   / \
#                  7   8
PARENTS = [-1, 0, 0, 0, 1, 1, 2, 4, 4]


def brute_margins(E: np.ndarray, parents: list[int], off_branch: str = "disjoint") -> dict[int, float]:
    """The definition written out with explicit ancestor walks and Python loops."""
    n = len(parents)

    def ancestors(c: int) -> set[int]:
        out = set()
        while parents[c] != -1:
            c = parents[c]
            out.add(c)
        return out

    anc = {c: ancestors(c) for c in range(n)}
    desc = {c: {d for d in range(n) if c in anc[d]} for c in range(n)}
    En = E / np.linalg.norm(E, axis=1, keepdims=True)
    out = {}
    for c in range(n):
        off = {o for o in range(n) if o != c and o not in desc[c]}
        if off_branch == "disjoint":
            off -= anc[c]
        if not desc[c] or not off:
            continue
        near = min(float(En[c] @ En[d]) for d in desc[c])
        far = max(float(En[c] @ En[o]) for o in off)
        out[c] = near - far
    return out


def test_tree_structure_hand_made():
    t = Hierarchy(PARENTS)
    assert t.root == 0 and t.height == 3
    assert sorted(t.leaves.tolist()) == [3, 5, 6, 7, 8]
    assert sorted(t.descendants(1).tolist()) == [4, 5, 7, 8]
    assert t.ancestors(7) == [4, 1, 0]
    # the root has no off-branch concept; 2 has 1's branch and 3 off-branch
    assert t.evaluated().tolist() == [1, 2, 4]
    assert t.evaluated("complement").tolist() == [1, 2, 4]


@pytest.mark.parametrize("off_branch", ["disjoint", "complement"])
def test_margin_matches_brute_force_on_hand_made_trees(off_branch):
    rng = np.random.default_rng(0)
    for parents in (
        PARENTS,
        balanced_tree(2, 3).parents.tolist(),
        random_tree(1, depth=4, leaf_prob=0.4).parents.tolist(),
    ):
        t = Hierarchy(parents)
        for _ in range(5):
            E = rng.normal(size=(len(parents), 6))
            want = brute_margins(E, parents, off_branch)
            got = has_margins(E, t, off_branch=off_branch)
            assert list(want) == t.evaluated(off_branch).tolist()
            np.testing.assert_allclose(got, list(want.values()), atol=1e-12)
            assert has_margin(E, t, off_branch=off_branch) == pytest.approx(min(want.values()))
            assert has_rate(E, t, off_branch=off_branch) == pytest.approx(
                np.mean([v > 0 for v in want.values()])
            )


def test_a_designed_embedding_satisfies_has_and_a_swapped_one_does_not():
    t = Hierarchy(PARENTS)
    # each concept = sum of one-hot codes along its path: a perfect hierarchy
    E = np.zeros((9, 9))
    for c in range(9):
        for a in t.ancestors(c, inclusive=True):
            E[c, a] = 1.0
    assert satisfies_has(E, t) and has_rate(E, t) == 1.0
    assert satisfies_has(E, t, gamma=0.05) and not satisfies_has(E, t, gamma=10.0)
    E2 = E.copy()
    E2[[7, 6]] = E2[[6, 7]]  # a leaf of 1's branch swapped with 2's only child
    assert has_rate(E2, t) < 1.0 and not satisfies_has(E2, t)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), scale_lo=st.floats(0.01, 1.0), scale_hi=st.floats(1.0, 100.0))
def test_margins_are_invariant_to_rescaling_and_rotation(seed, scale_lo, scale_hi):
    rng = np.random.default_rng(seed)
    t = random_tree(rng, depth=3, branching=(2, 3), leaf_prob=0.3)
    E = rng.normal(size=(t.n_nodes, 5))
    base = has_margins(E, t)
    scales = rng.uniform(scale_lo, scale_hi, size=(t.n_nodes, 1))
    Q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    np.testing.assert_allclose(has_margins(E * scales, t), base, atol=1e-10)
    np.testing.assert_allclose(has_margins(E @ Q, t), base, atol=1e-10)


def test_torch_input_is_differentiable_and_matches_numpy():
    t = Hierarchy(PARENTS)
    E = torch.randn(9, 4, dtype=torch.float64, requires_grad=True)
    m = has_margins(E, t)
    assert isinstance(m, torch.Tensor)
    np.testing.assert_allclose(m.detach().numpy(), has_margins(E.detach().numpy(), t))
    m.sum().backward()
    assert E.grad is not None and torch.isfinite(E.grad).all()


def test_networkx_round_trip_and_named_nodes():
    g = nx.DiGraph(
        [
            ("entity", "animal"),
            ("entity", "vehicle"),
            ("animal", "dog"),
            ("animal", "cat"),
            ("vehicle", "car"),
            ("vehicle", "bus"),
        ]
    )
    t = Hierarchy.from_networkx(g)
    assert t.names[t.root] == "entity" and t.leaves.size == 4
    assert nx.utils.graphs_equal(t.to_networkx(), g)
    E = np.random.default_rng(0).normal(size=(t.n_nodes, 3))
    np.testing.assert_allclose(has_margins(E, g), has_margins(E, t))


def test_prototypes_subtree_and_node_modes():
    t = Hierarchy(PARENTS)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(12, 3))
    labels = np.array([3, 5, 6, 7, 8, 7, 8, 3, 5, 6, 7, 8])
    xn = x / np.linalg.norm(x, axis=1, keepdims=True)
    protos = concept_prototypes(x, labels, t)
    in_subtree_1 = np.isin(labels, [1, 4, 5, 7, 8])
    np.testing.assert_allclose(protos[1], xn[in_subtree_1].mean(0))
    np.testing.assert_allclose(protos[0], xn.mean(0))
    node = concept_prototypes(x, labels, t, mode="node")
    np.testing.assert_allclose(node[1], 0.0)  # nothing labelled 1 itself
    centred = concept_prototypes(x, labels, t, centre="root")
    np.testing.assert_allclose(centred[4], protos[4] - xn.mean(0))


def test_permutation_null_of_structured_prototypes_sits_below_the_real_rate():
    t = balanced_tree(2, 3)
    rng = np.random.default_rng(1)
    codes = rng.normal(size=(t.n_nodes, 16))
    leaf_means = np.array([codes[t.ancestors(int(c), inclusive=True)].sum(0) for c in t.leaves])
    labels = np.repeat(t.leaves, 5)
    x = np.repeat(leaf_means, 5, axis=0) + 0.1 * rng.normal(size=(labels.size, 16))
    real = has_rate(concept_prototypes(x, labels, t), t)
    null = has_permutation_null(x, labels, t, n_permutations=50, rng=0)
    assert real == 1.0 and np.quantile(null, 0.95) < real


def test_bad_input_gets_one_line_errors_naming_the_argument():
    with pytest.raises(ValueError, match=r"parents: .*cycle"):
        Hierarchy([-1, 2, 1])
    with pytest.raises(ValueError, match="exactly one root"):
        Hierarchy([-1, -1, 0])
    with pytest.raises(ValueError, match="outside"):
        Hierarchy([-1, 5])
    g = nx.DiGraph([("a", "c"), ("b", "c"), ("r", "a"), ("r", "b")])
    with pytest.raises(ValueError, match="2 parents"):
        Hierarchy.from_networkx(g)
    with pytest.raises(ValueError, match="cycle"):
        Hierarchy.from_networkx(nx.DiGraph([("a", "b"), ("b", "a")]))
    t = Hierarchy(PARENTS)
    with pytest.raises(ValueError, match="one row per concept"):
        has_margins(np.ones((8, 3)), t)
    E = np.random.default_rng(0).normal(size=(9, 3))
    E[5] = 0.0
    with pytest.raises(ValueError, match=r"row 5 .*zero vector"):
        has_margins(E, t)
    E[5] = np.nan
    with pytest.raises(ValueError, match=r"row 5 .*not finite"):
        has_margins(E, t)
    E0 = np.random.default_rng(0).normal(size=(9, 3))
    E0[0] = 0.0  # the root's row is not read under the default reading
    has_margins(E0, t)
    with pytest.raises(ValueError, match="no non-leaf concept"):
        has_margins(np.ones((4, 2)), Hierarchy([-1, 0, 0, 0]))
    with pytest.raises(ValueError, match="off_branch"):
        has_margins(E0, t, off_branch="siblings")
    with pytest.raises(ValueError, match="labels"):
        concept_prototypes(np.ones((3, 2)), [0, 1], t)
    with pytest.raises(ValueError, match="tree"):
        has_margins(E0, "not a tree")
