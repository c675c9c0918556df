"""Baselines, the shared backward, the toy's analytic gradients and seeded determinism."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from paperworks.maxmin_mtl import (
    FAMO,
    METHODS,
    MaxMinWeighting,
    cagrad_weights,
    load_diabetes_tasks,
    make_method,
    make_multitask_regression,
    maxmin_weights,
    mgda_weights,
    nash_mtl_weights,
    pareto_stationarity,
    pcgrad_weights,
    run_mtl,
    toy_losses,
    toy_losses_and_grads,
)


def _simplex_min(f, k):
    return minimize(
        f,
        np.full(k, 1.0 / k),
        method="SLSQP",
        bounds=[(0, 1)] * k,
        constraints=({"type": "eq", "fun": lambda w: w.sum() - 1},),
        options={"ftol": 1e-14, "maxiter": 500},
    ).x


def test_mgda_min_norm_matches_scipy():
    rng = np.random.default_rng(0)
    G = rng.normal(size=(4, 6))
    K = G @ G.T
    w = mgda_weights(K, max_iter=5000, tol=1e-12)
    ref = _simplex_min(lambda v: v @ K @ v, 4)
    assert w @ K @ w == pytest.approx(ref @ K @ ref, rel=1e-4, abs=1e-8)


def test_nash_weights_solve_bargaining_equation():
    rng = np.random.default_rng(1)
    G = rng.normal(size=(3, 8))
    K = G @ G.T
    a = nash_mtl_weights(K)
    Kt = K / np.linalg.norm(K)
    assert np.all(a > 0)
    np.testing.assert_allclose(Kt @ a, 1.0 / a, rtol=1e-5)


def test_pcgrad_two_conflicting_gradients():
    g1, g2 = np.array([1.0, 0.0]), np.array([-1.0, 1.0])
    G = np.stack([g1, g2])
    beta = pcgrad_weights(G @ G.T, np.random.default_rng(0))
    p1 = g1 - (g1 @ g2) / (g2 @ g2) * g2
    p2 = g2 - (g2 @ g1) / (g1 @ g1) * g1
    np.testing.assert_allclose(beta @ G, p1 + p2, atol=1e-12)


@pytest.mark.parametrize("k", [2, 4])
def test_cagrad_inner_problem_matches_scipy(k):
    rng = np.random.default_rng(k)
    G = rng.normal(size=(k, 5))
    K = G @ G.T
    c = 0.4
    beta, w = cagrad_weights(K, c)
    g0 = np.full(k, 1.0 / k)
    s = c * np.sqrt(g0 @ K @ g0) + 1e-8

    def obj(v):
        return v @ K @ g0 + s * np.sqrt(v @ K @ v + 1e-8)

    ref = _simplex_min(obj, k)
    assert obj(w) <= obj(ref) + 1e-5
    # CAGrad's direction: (g0 + s / ||g_w|| g_w) / (1 + c^2)
    gw = w @ G
    expect = (g0 @ G + s / (np.linalg.norm(gw) + 1e-8) * gw) / (1 + c**2)
    np.testing.assert_allclose(beta @ G, expect, rtol=1e-6)


def test_famo_weights_and_logit_update():
    f = FAMO(2)
    beta, _ = f.weights(None, np.array([2.0, 0.5]))
    np.testing.assert_allclose(beta, np.array([0.5 / 2.0, 0.5 / 0.5]) / (0.5 / 2.0 + 0.5 / 0.5), rtol=1e-6)
    f.update(np.array([1.0, 0.5]))  # task 0 improved, task 1 did not: task 1 gains weight
    assert f.logits[1] > f.logits[0]


@pytest.mark.parametrize("name", METHODS)
def test_backward_sets_shared_grad_to_weighted_gradient(name):
    torch.manual_seed(0)
    shared = torch.nn.Parameter(torch.randn(6, dtype=torch.float64))
    head = torch.nn.Parameter(torch.randn(3, dtype=torch.float64))
    X = torch.randn(3, 6, dtype=torch.float64)
    losses = torch.stack([(X[i] @ shared - head[i]) ** 2 + 0.1 * (i + 1) for i in range(3)])
    G = torch.stack([torch.autograd.grad(losses[i], shared, retain_graph=True)[0] for i in range(3)])
    m = make_method(name, 3, seed=0)
    _, info = m.backward(losses, [shared], [head])
    beta = info["weights"].double()
    np.testing.assert_allclose(shared.grad.numpy(), (beta @ G).numpy(), rtol=1e-5, atol=1e-8)
    assert torch.isfinite(head.grad).all()


def test_torch_and_numpy_functional_forms_agree():
    rng = np.random.default_rng(2)
    G = rng.normal(size=(3, 10))
    L = np.array([1.0, 2.0, 3.0])
    a = maxmin_weights(G, L)
    b = maxmin_weights(torch.tensor(G), L)
    np.testing.assert_allclose(b.update.numpy(), a.update, rtol=1e-12)
    u, _beta = MaxMinWeighting(3).combine(torch.tensor(G), L)
    np.testing.assert_allclose(u.numpy(), a.update, rtol=1e-12)


def test_toy_analytic_gradients_match_autograd():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-10, 10, size=(40, 2)), [[1.0, 0.3], [-2.0, -0.7]]])
    F, G = toy_losses_and_grads(x)
    xt = torch.tensor(x, requires_grad=True)
    Ft = toy_losses(xt)
    np.testing.assert_allclose(F, Ft.detach().numpy(), rtol=1e-10)
    for t in range(2):
        gt = torch.autograd.grad(Ft[:, t].sum(), xt, retain_graph=True)[0].numpy()
        np.testing.assert_allclose(G[:, t], gt, rtol=1e-7, atol=1e-9)


def test_pareto_stationarity_extremes():
    g1 = np.array([[1.0, 0.0], [1.0, 0.0]])
    g2 = np.array([[-3.0, 0.0], [2.0, 0.0]])
    np.testing.assert_allclose(pareto_stationarity(g1, g2), [0.0, 1.0], atol=1e-12)


def test_data_shapes_and_units():
    d = make_multitask_regression(n_train=50, n_test=20, seed=0)
    assert d.X_train.shape == (50, 12) and len(d.Y_train) == 5
    stds = [y.std() for y in d.Y_train]
    assert stds[-1] / stds[0] > 1e3  # heads of very different scales
    db = load_diabetes_tasks(seed=0)
    assert db.kinds[-1] == "classification" and db.n_classes[-1] == 2
    assert db.X_train.shape[0] + db.X_test.shape[0] == 442


def test_seeded_training_is_deterministic():
    d = make_multitask_regression(n_train=60, n_test=40, n_tasks=3, seed=1)
    a = run_mtl(d, "maxmin", steps=15, seed=3)
    b = run_mtl(d, "maxmin", steps=15, seed=3)
    np.testing.assert_array_equal(a.metrics, b.metrics)
    assert a.worst_rate == b.worst_rate
