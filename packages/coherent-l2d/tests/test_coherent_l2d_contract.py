import itertools

import numpy as np
import pytest
import torch

from paperworks.coherent_l2d import (
    COMPATIBLE,
    DEFER,
    NEG,
    POS,
    Taxonomy,
    coherent_projection,
    is_coherent,
    joint_utility,
    random_taxonomy,
    tbp_expected_utility,
    tbp_log_partition,
    tbp_marginals,
    violations,
)

CHAIN = Taxonomy.from_edges([("a", "b"), ("b", "c")])  # a -> b -> c


def small_taxonomies():
    rng = np.random.default_rng(0)
    out = []
    while len(out) < 12:
        tax = random_taxonomy(2, (1, 3), rng, n_roots=int(rng.integers(1, 3)))
        if tax.n <= 7:
            out.append(tax)
    return out


def all_actions(n):
    return np.array(list(itertools.product(range(3), repeat=n)))


@pytest.mark.parametrize(
    ("actions", "kind"),
    [
        ((NEG, POS, POS), "taxonomic"),  # a absent, b present
        ((NEG, NEG, POS), "taxonomic"),  # across two levels
        ((DEFER, POS, DEFER), "delegation"),  # asserting inside a delegated subtree
        ((DEFER, DEFER, NEG), "delegation"),
        ((NEG, DEFER, DEFER), "implied_deferral"),  # b is implied absent by a
    ],
)
def test_checker_counts_each_violation_type(actions, kind):
    v = violations(CHAIN, np.array([actions]))
    assert v[kind][0] >= 1
    assert not is_coherent(CHAIN, np.array([actions]))[0]


def test_checker_counts_pairs_and_passes_coherent_cases():
    v = violations(CHAIN, np.array([[NEG, POS, POS]]))
    assert v["taxonomic"][0] == 2  # (a, b) and (a, c)
    for ok in (
        (POS, POS, POS),
        (POS, NEG, NEG),
        (POS, DEFER, DEFER),
        (DEFER, DEFER, DEFER),
        (POS, POS, DEFER),
    ):
        assert is_coherent(CHAIN, np.array([ok]))[0]


@pytest.mark.parametrize("tax", small_taxonomies(), ids=lambda t: f"n{t.n}")
def test_checker_equals_the_parent_child_table(tax):
    A = all_actions(tax.n)
    edge_ok = np.ones(len(A), bool)
    for v in range(tax.n):
        if tax.parent[v] >= 0:
            edge_ok &= COMPATIBLE[A[:, tax.parent[v]], A[:, v]]
    np.testing.assert_array_equal(is_coherent(tax, A), edge_ok)


@pytest.mark.parametrize("tax", small_taxonomies(), ids=lambda t: f"n{t.n}")
def test_projection_equals_brute_force_over_coherent_actions(tax):
    A = all_actions(tax.n)
    coherent = A[is_coherent(tax, A)]
    U = np.random.default_rng(tax.n).normal(size=(6, tax.n, 3))
    best = coherent_projection(tax, U)
    assert is_coherent(tax, best).all()
    for i in range(6):
        values = U[i][np.arange(tax.n), coherent].sum(1)
        assert joint_utility(U[i : i + 1], best[i : i + 1])[0] == pytest.approx(values.max(), abs=1e-12)


@pytest.mark.parametrize("tax", small_taxonomies()[:6], ids=lambda t: f"n{t.n}")
def test_tbp_partition_marginals_and_expected_utility_equal_enumeration(tax):
    A = all_actions(tax.n)
    coherent = A[is_coherent(tax, A)]
    rng = np.random.default_rng(tax.n + 100)
    S = torch.tensor(rng.normal(size=(3, tax.n, 3)))
    U = torch.tensor(rng.normal(size=(3, tax.n, 3)))
    T = 0.7
    logz, eu, marg = (
        tbp_log_partition(tax, S, T),
        tbp_expected_utility(tax, S, U, T),
        tbp_marginals(tax, S, T),
    )
    for i in range(3):
        score = S[i].numpy()[np.arange(tax.n), coherent].sum(1) / T
        w = np.exp(score - score.max())
        p = w / w.sum()
        assert logz[i].item() == pytest.approx(np.log(w.sum()) + score.max(), abs=1e-9)
        assert eu[i].item() == pytest.approx(
            (p * U[i].numpy()[np.arange(tax.n), coherent].sum(1)).sum(), abs=1e-9
        )
        for v in range(tax.n):
            for a in range(3):
                assert marg[i, v, a].item() == pytest.approx(p[coherent[:, v] == a].sum(), abs=1e-9)


def test_rpo_gradient_matches_finite_differences():
    tax = CHAIN
    rng = np.random.default_rng(5)
    S = torch.tensor(rng.normal(size=(1, tax.n, 3)), requires_grad=True)
    U = torch.tensor(rng.normal(size=(1, tax.n, 3)))
    assert torch.autograd.gradcheck(lambda s: tbp_expected_utility(tax, s, U), (S,), eps=1e-6, atol=1e-6)
    assert torch.autograd.gradgradcheck(lambda s: tbp_log_partition(tax, s), (S,), eps=1e-6, atol=1e-6)


def test_bad_input():
    with pytest.raises(ValueError, match="actions: expected shape"):
        violations(CHAIN, np.zeros((2, 4), int))
    with pytest.raises(ValueError, match="actions: expected integers"):
        violations(CHAIN, np.full((1, 3), 3))
    with pytest.raises(ValueError, match="U: expected shape"):
        coherent_projection(CHAIN, np.zeros((1, 3, 2)))
    with pytest.raises(ValueError, match="U: expected finite"):
        coherent_projection(CHAIN, np.full((1, 3, 3), np.nan))
    with pytest.raises(ValueError, match="scores: expected a tensor of shape"):
        tbp_log_partition(CHAIN, torch.zeros(1, 4, 3))
    with pytest.raises(ValueError, match="temperature"):
        tbp_log_partition(CHAIN, torch.zeros(1, 3, 3), temperature=0.0)
