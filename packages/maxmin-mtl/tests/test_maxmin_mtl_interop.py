"""Heads on their own losses, the LibMTL adapter (against a minimal stand-in of ``AbsWeighting``), and
the Nash-MTL weights against the published algorithm (its sequence of convex programs, in cvxpy)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from paperworks.maxmin_mtl import (
    METHODS,
    LibMTLMaxMin,
    cagrad_weights,
    libmtl_weighting,
    make_method,
    maxmin_weights,
    nash_mtl_weights,
)


def _problem(seed: int = 0):
    torch.manual_seed(seed)
    trunk = torch.nn.Linear(4, 6, dtype=torch.float64)
    heads = torch.nn.ModuleList(torch.nn.Linear(6, 1, dtype=torch.float64) for _ in range(3))
    x = torch.randn(16, 4, dtype=torch.float64)
    ys = [torch.randn(16, dtype=torch.float64) * s for s in (0.1, 1.0, 10.0)]

    def losses():
        z = torch.tanh(trunk(x))
        return torch.stack([((h(z)[:, 0] - y) ** 2).mean() for h, y in zip(heads, ys)])

    return trunk, heads, losses


@pytest.mark.parametrize("name", METHODS)
def test_task_specific_parameters_get_their_own_loss_gradient(name):
    trunk, heads, losses = _problem()
    L = losses()
    own = [torch.autograd.grad(L[i], list(heads[i].parameters()), retain_graph=True) for i in range(3)]
    G = torch.stack(
        [
            torch.cat(
                [
                    g.reshape(-1)
                    for g in torch.autograd.grad(L[i], list(trunk.parameters()), retain_graph=True)
                ]
            )
            for i in range(3)
        ]
    )
    _, info = make_method(name, 3).backward(L, trunk.parameters(), heads.parameters())
    beta = info["weights"].double()
    shared = torch.cat([p.grad.reshape(-1) for p in trunk.parameters()])
    torch.testing.assert_close(shared, beta @ G, rtol=1e-5, atol=1e-10)
    for i in range(3):  # unweighted, whatever beta_i is
        for p, g in zip(heads[i].parameters(), own[i]):
            torch.testing.assert_close(p.grad, g)


def test_without_task_specific_parameters_heads_get_weighted_gradients():
    trunk, heads, losses = _problem(1)
    L = losses()
    own = torch.autograd.grad(L[2], list(heads[2].parameters()), retain_graph=True)
    _, info = make_method("mgda", 3).backward(L, trunk.parameters())
    b = float(info["weights"][2])
    for p, g in zip(heads[2].parameters(), own):
        torch.testing.assert_close(p.grad, b * g, rtol=1e-5, atol=1e-12)


class _StandInAbsWeighting(torch.nn.Module):
    """The part of LibMTL 1.1.5's ``AbsWeighting`` + architecture that a weighting sees: ``task_num``,
    ``device``, ``rep_grad``, ``get_share_params`` and ``zero_grad_share_params``; the model is combined
    with the weighting by multiple inheritance, as LibMTL's Trainer does."""

    def __init__(self) -> None:
        super().__init__()
        self.task_num = 3
        self.device = torch.device("cpu")
        self.rep_grad = False
        trunk, heads, losses = _problem(2)
        self.trunk, self.heads, self.losses = trunk, heads, losses

    def get_share_params(self):
        return self.trunk.parameters()

    def zero_grad_share_params(self):
        self.trunk.zero_grad(set_to_none=False)


def test_libmtl_adapter_on_a_stand_in_of_its_interface():
    MaxMin = libmtl_weighting(_StandInAbsWeighting)
    assert issubclass(MaxMin, LibMTLMaxMin) and issubclass(MaxMin, _StandInAbsWeighting)
    model = MaxMin()
    model.init_param()
    L = model.losses()
    G = torch.stack(
        [
            torch.cat(
                [
                    g.reshape(-1)
                    for g in torch.autograd.grad(L[i], list(model.trunk.parameters()), retain_graph=True)
                ]
            )
            for i in range(3)
        ]
    )
    own = [torch.autograd.grad(L[i], list(model.heads[i].parameters()), retain_graph=True) for i in range(3)]
    w = model.backward(list(L), loss_floor=0.0)  # LibMTL passes a list of losses and weight_args
    assert isinstance(w, np.ndarray) and w.shape == (3,)
    expect = maxmin_weights(G.detach(), L.detach().numpy())
    np.testing.assert_allclose(w, expect.weights, rtol=1e-10)
    shared = torch.cat([p.grad.reshape(-1) for p in model.trunk.parameters()])
    torch.testing.assert_close(shared, expect.update)
    for i in range(3):  # LibMTL's convention: heads on their own losses
        for p, g in zip(model.heads[i].parameters(), own[i]):
            torch.testing.assert_close(p.grad, g)
    model.rep_grad = True
    with pytest.raises(ValueError, match="rep_grad"):
        model.backward(list(model.losses()))


def _nash_published(K: np.ndarray, iters: int = 60) -> np.ndarray:
    """Nash-MTL's published solver (Navon et al. 2022, Sec. 3.2): a sequence of convex programs. With
    phi_i(a) = log a_i + log (K a)_i, each program minimises sum_i (K a)_i plus the linearisation of
    sum_i phi_i at the previous iterate, subject to phi_i(a) >= 0, a >= 0 (a concave-convex procedure)."""
    cp = pytest.importorskip("cvxpy")
    k = K.shape[0]
    a_prev = np.ones(k)
    for _ in range(iters):
        a = cp.Variable(k, nonneg=True)
        Ka = K @ a
        grad = 1.0 / a_prev + K.T @ (1.0 / (K @ a_prev))
        cons = [cp.log(a[i]) + cp.log(Ka[i]) >= 0 for i in range(k)]
        cp.Problem(cp.Minimize(cp.sum(Ka) + grad @ (a - a_prev)), cons).solve(solver=cp.CLARABEL)
        if a.value is None:  # the reference also keeps its last iterate when a program fails
            break
        if np.linalg.norm(a.value - a_prev) < 1e-9:
            break
        a_prev = a.value
    return a_prev


@pytest.mark.parametrize("seed", range(3))
def test_nash_mtl_matches_the_published_algorithm(seed):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(3, 6)) * np.array([[0.3], [1.0], [3.0]])
    G[:, 0] += 3.0
    K = G @ G.T
    Kt = K / np.linalg.norm(K)
    assert np.all(K @ np.ones(3) > 0)  # the published start (a = 1) is then feasible
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ref = _nash_published(Kt)
    ours = nash_mtl_weights(K)
    np.testing.assert_allclose(ours, ref, rtol=1e-4)
    np.testing.assert_allclose(Kt @ ours, 1.0 / ours, rtol=1e-5)  # the bargaining solution (ridge 1e-8)


@pytest.mark.parametrize("seed", range(20))
def test_cagrad_pair_closed_form_matches_a_dense_search(seed):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(2, 3)) * np.exp(rng.normal(size=(2, 1)))
    K = G @ G.T
    _, w = cagrad_weights(K, 0.4)
    g0 = np.full(2, 0.5)
    s = 0.4 * np.sqrt(g0 @ K @ g0) + 1e-8
    grid = np.linspace(0.0, 1.0, 200_001)
    W = np.stack([grid, 1 - grid], 1)
    vals = W @ K @ g0 + s * np.sqrt(np.einsum("ij,jk,ik->i", W, K, W) + 1e-8)
    mine = w @ K @ g0 + s * np.sqrt(w @ K @ w + 1e-8)
    assert mine <= vals.min() + 1e-9
