"""The UFM: closed form vs numerical optimisation, InfoNCE gradients and the CLIP-loss identity."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from paperworks.clip_has import (
    balanced_tree,
    clip_loss,
    fit_infonce,
    has_margins,
    hierarchical_gaussian_embeddings,
    hierarchical_pairs,
    infonce_population_loss,
    linear_contrastive_loss,
    linear_loss_minimiser,
    linear_loss_minimum,
    minimise_linear_loss_lbfgs,
    pair_matrix,
    pair_statistics,
    random_tree,
)


def _problem(seed=0, unbalanced=False, noise=0.0):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, depth=3, branching=(2, 3), leaf_prob=0.4 if unbalanced else 0.0)
    U, labels = hierarchical_gaussian_embeddings(tree, rng, dim=8)
    i, c = hierarchical_pairs(labels, tree, noise=noise, rng=rng)
    return tree, U, pair_matrix(i, c, len(U), tree.n_nodes)


def test_pairs_are_the_path_of_each_leaf():
    tree = balanced_tree(2, 2)
    i, c = hierarchical_pairs(np.array([3, 6]), tree)
    assert list(zip(i.tolist(), c.tolist())) == [(0, 3), (0, 1), (0, 0), (1, 6), (1, 2), (1, 0)]
    i2, c2 = hierarchical_pairs(np.array([3, 6]), tree, include_root=False)
    assert 0 not in c2.tolist() and i2.size == 4
    P = pair_matrix(i, c, 2, tree.n_nodes)
    assert P.sum() == pytest.approx(1.0) and P[0, 3] == pytest.approx(1 / 6)


@pytest.mark.parametrize("unbalanced", [False, True])
def test_closed_form_against_lbfgs_and_conjugate_gradients(unbalanced):
    _tree, U, P = _problem(1, unbalanced, noise=0.1)
    lam = 0.7
    V = linear_loss_minimiser(U, P, lam)
    V_num = minimise_linear_loss_lbfgs(U, P, lam, rng=3)
    L_cf = linear_contrastive_loss(V, U, P, lam)
    assert abs(L_cf - linear_contrastive_loss(V_num, U, P, lam)) <= 1e-8
    assert L_cf == pytest.approx(linear_loss_minimum(U, P, lam), abs=1e-12)
    np.testing.assert_allclose(V_num, V, atol=1e-7)
    # an independent numerical route: scipy's CG on the loss written with explicit expectations
    p, q = P.sum(1), P.sum(0)

    def loss(x):
        W = x.reshape(V.shape)
        S = U @ W.T
        return -np.sum(P * S) + np.sum(np.outer(p, q) * S) + 0.5 * lam * np.sum(W * W)

    res = minimize(loss, np.zeros(V.size), method="CG", options={"gtol": 1e-10})
    assert res.fun == pytest.approx(L_cf, abs=1e-8)


def test_text_margins_equal_pair_centred_image_margins():
    tree, U, P = _problem(2, unbalanced=True)
    st = pair_statistics(U, P)
    V = linear_loss_minimiser(U, P, 0.3)
    np.testing.assert_allclose(has_margins(V, tree), has_margins(st.centred, tree), atol=1e-12)
    np.testing.assert_allclose(st.ubar, P.sum(1) @ U)


def test_infonce_gradient_matches_autograd_and_reaches_a_stationary_point():
    _tree, U, P = _problem(3)
    lam, tau = 0.05, 0.2
    V, info = fit_infonce(U, P, lam, tau=tau)
    Vt = torch.from_numpy(V).requires_grad_(True)
    loss = (
        infonce_population_loss(Vt, torch.from_numpy(U), torch.from_numpy(P), tau)
        + 0.5 * lam * (Vt * Vt).sum()
    )
    (g,) = torch.autograd.grad(loss, Vt)
    assert float(g.abs().max()) < 1e-6 and info["grad_norm"] < 1e-6
    assert float(loss.detach()) == pytest.approx(info["loss"], abs=1e-10)
    # gradcheck of the population loss itself
    W = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    Ux = torch.nn.functional.normalize(torch.randn(5, 3, dtype=torch.float64), dim=1)
    Px = torch.rand(5, 4, dtype=torch.float64)
    Px = Px / Px.sum()
    assert torch.autograd.gradcheck(lambda w: infonce_population_loss(w, Ux, Px, 0.5), (W,))


def test_infonce_approaches_the_linear_solution_under_strong_regularisation():
    _tree, U, P = _problem(4)
    tau, lam = 0.1, 1e3
    V, _ = fit_infonce(U, P, lam, tau=tau, gtol=1e-14)
    V_lin = linear_loss_minimiser(U, P, lam) / tau
    cos = np.sum(V * V_lin, 1)[1:] / np.linalg.norm(V, axis=1)[1:] / np.linalg.norm(V_lin, axis=1)[1:]
    assert cos.min() > 0.999


def test_population_infonce_with_a_diagonal_law_is_the_clip_loss_minus_log_b():
    B, d = 7, 5
    g = torch.Generator().manual_seed(0)
    U = torch.nn.functional.normalize(torch.randn(B, d, generator=g, dtype=torch.float64), dim=1)
    V = torch.randn(B, d, generator=g, dtype=torch.float64)
    P = torch.eye(B, dtype=torch.float64) / B
    pop = infonce_population_loss(V, U, P, tau=0.5)
    assert float(pop) == pytest.approx(float(clip_loss(U, V, 2.0)) - math.log(B), abs=1e-12)


def test_bad_input():
    tree, U, P = _problem(5)
    for lam in (-1.0, 0.0, float("nan")):
        with pytest.raises(ValueError, match="lam"):
            linear_loss_minimiser(U, P, lam)
        with pytest.raises(ValueError, match="lam"):
            fit_infonce(U, P, lam)
    with pytest.raises(ValueError, match="P: expected"):
        linear_loss_minimiser(U, P[:-1], 1.0)
    with pytest.raises(ValueError, match="V: expected shape"):
        linear_contrastive_loss(np.zeros((2, 2)), U, P, 1.0)
    with pytest.raises(ValueError, match="noise"):
        hierarchical_pairs(np.array([1]), tree, noise=1.5)
    with pytest.raises(ValueError, match="labels"):
        hierarchical_pairs(np.array([tree.n_nodes]), tree)
