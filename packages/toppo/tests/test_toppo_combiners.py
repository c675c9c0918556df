import itertools

import numpy as np
import pytest
import torch

from paperworks.toppo.combiners import (
    GradientCombiner,
    cagrad,
    combine,
    fairgrad,
    mean_combiner,
    pcgrad,
    per_task_gradients,
)


def test_pcgrad_removes_negative_cosines_and_keeps_aligned_gradients():
    g1, g2 = torch.tensor([1.0, 0.0]), torch.tensor([-1.0, 1.0])
    G = torch.stack([g1, g2])
    d = pcgrad(G)
    # hand computation: g1' = g1 - (g1.g2/|g2|^2) g2 = (0.5, 0.5); g2' = g2 - (g2.g1) g1 = (0, 1)
    torch.testing.assert_close(d, (torch.tensor([0.5, 0.5]) + torch.tensor([0.0, 1.0])) / 2)
    assert float(d @ g1) >= 0 and float(d @ g2) >= 0  # the combined step conflicts with neither task
    assert float(g1 @ g2) < 0  # a real conflict between the two tasks
    aligned = torch.tensor([[1.0, 2.0, 0.0], [0.5, 1.0, 3.0], [2.0, 0.0, 1.0]])
    assert (aligned @ aligned.T >= 0).all()
    torch.testing.assert_close(pcgrad(aligned), aligned.mean(0))


def test_pcgrad_projected_rows_never_conflict_for_two_tasks():
    gen = torch.Generator().manual_seed(0)
    for _ in range(50):
        G = torch.randn(2, 6, generator=gen)
        g1, g2 = G
        d2 = pcgrad(G) * 2
        p1 = g1 - min(float(g1 @ g2), 0.0) / float(g2 @ g2) * g2
        p2 = g2 - min(float(g2 @ g1), 0.0) / float(g1 @ g1) * g1
        torch.testing.assert_close(d2, p1 + p2)
        assert float(p1 @ g2) >= -1e-6 and float(p2 @ g1) >= -1e-6


def _cagrad_brute(G: np.ndarray, c: float, n: int = 401) -> np.ndarray:
    """Minimise the CAGrad dual on a grid over the simplex (vectorised), then form the direction."""
    g0 = G.mean(0)
    k = G.shape[0]
    grid = np.linspace(0, 1, n)
    W = np.array([w for w in itertools.product(grid, repeat=k - 1) if sum(w) <= 1 + 1e-12])
    W = np.hstack([W, 1 - W.sum(1, keepdims=True)])
    GW = W @ G
    f = GW @ g0 + c * np.linalg.norm(g0) * np.linalg.norm(GW, axis=1)
    gw = GW[np.argmin(f)]
    return (g0 + c * np.linalg.norm(g0) / np.linalg.norm(gw) * gw) / (1 + c**2)


def test_cagrad_closed_forms_and_brute_force():
    G = torch.tensor([[2.0, 0.0, 1.0], [0.0, 1.0, -1.0]], dtype=torch.float64)
    torch.testing.assert_close(cagrad(G, c=0.0), G.mean(0))
    same = torch.tensor([[1.0, 2.0], [1.0, 2.0]], dtype=torch.float64)  # g_w = g_0: d = (1 + c) g / (1 + c^2)
    torch.testing.assert_close(cagrad(same, c=0.4), same[0] * 1.4 / 1.16)
    np.testing.assert_allclose(cagrad(G, c=0.4).numpy(), _cagrad_brute(G.numpy(), 0.4), atol=2e-3)
    G3 = torch.tensor([[3.0, 0.0], [0.0, 0.5], [-1.0, 1.0]], dtype=torch.float64)
    np.testing.assert_allclose(cagrad(G3, c=0.5).numpy(), _cagrad_brute(G3.numpy(), 0.5), atol=5e-3)


def test_fairgrad_orthogonal_closed_form_and_least_squares():
    # orthogonal gradients: GG = diag(n^2), so n_i^2 w_i = w_i^(-1/alpha): w_i = n_i^(-2 alpha/(1 + alpha))
    n = np.array([3.0, 0.5, 1.0])
    G = torch.tensor(np.diag(n), dtype=torch.float64)
    for alpha in (0.5, 1.0, 2.0):
        w = n ** (-2 * alpha / (1 + alpha))
        np.testing.assert_allclose(fairgrad(G, alpha).numpy(), w * n, rtol=1e-6)
    from scipy.optimize import least_squares

    rng = np.random.default_rng(0)
    Gr = rng.normal(size=(4, 10)) * np.array([[5.0], [1.0], [0.2], [1.0]])
    GG = Gr @ Gr.T
    ref = least_squares(
        lambda w: GG @ w - 1 / w, np.ones(4), bounds=(1e-12, np.inf), xtol=1e-14, ftol=1e-14
    ).x
    np.testing.assert_allclose(fairgrad(torch.tensor(Gr), 1.0).numpy(), ref @ Gr, rtol=1e-5)


def test_missing_tasks_single_task_and_bad_input():
    g = torch.tensor([[1.0, -2.0]])
    for m in ("mean", "pcgrad", "cagrad", "fairgrad"):
        d = combine(g, m)
        if m == "fairgrad":  # |g|^2 w = 1/w: w = 1/|g|
            torch.testing.assert_close(d, g[0] / g[0].norm())
        else:
            torch.testing.assert_close(d, g[0])
    with pytest.raises(ValueError, match="method"):
        combine(g, "mgda")
    with pytest.raises(ValueError, match="G"):
        mean_combiner(torch.zeros(0, 3))
    with pytest.raises(ValueError, match="G"):
        pcgrad(torch.tensor([[float("nan"), 1.0]]))
    with pytest.raises(ValueError, match="alpha"):
        fairgrad(g, alpha=0.0)
    with pytest.raises(ValueError, match="c"):
        cagrad(g, c=-1.0)


def test_per_task_gradients_and_optimizer_wrapper():
    torch.manual_seed(0)
    body, heads = torch.nn.Linear(3, 4), torch.nn.Linear(4, 2)
    x, ids = torch.randn(12, 3), torch.tensor([0, 1] * 6)
    out = heads(torch.tanh(body(x)))[torch.arange(12), ids]
    losses = torch.stack([(out[ids == k] ** 2).mean() for k in range(2)])
    G = per_task_gradients(losses, list(body.parameters()), retain_graph=True)
    for k in range(2):
        manual = torch.autograd.grad(losses[k], list(body.parameters()), retain_graph=True)
        torch.testing.assert_close(G[k], torch.cat([m.reshape(-1) for m in manual]))
    opt = torch.optim.SGD([*body.parameters(), *heads.parameters()], lr=0.1)
    comb = GradientCombiner(opt, "pcgrad", body.parameters())
    comb.zero_grad()
    G2 = comb.backward(losses)
    torch.testing.assert_close(G2, G)
    flat = torch.cat([p.grad.reshape(-1) for p in body.parameters()])
    torch.testing.assert_close(flat, pcgrad(G))
    head_grad = torch.autograd.grad(
        torch.stack(
            [(heads(torch.tanh(body(x)))[torch.arange(12), ids][ids == k] ** 2).mean() for k in range(2)]
        ).mean(),
        heads.weight,
    )[0]
    torch.testing.assert_close(heads.weight.grad, head_grad)
    comb.step()
    with pytest.raises(ValueError, match="method"):
        GradientCombiner(opt, "nope")
    with pytest.raises(ValueError, match="shared_params"):
        GradientCombiner(opt, "mean", [torch.nn.Parameter(torch.zeros(1))])
    with pytest.raises(ValueError, match="task_losses"):
        comb.backward(torch.tensor(1.0))
    state = comb.state_dict()
    comb.load_state_dict(state)
    assert comb.method == "pcgrad"
