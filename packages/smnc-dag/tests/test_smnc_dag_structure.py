"""The barrier's domain, and the NumPy gradients of the full objective against torch autograd."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.smnc_dag import (
    SMNC,
    SeparatedLinearSEM,
    SeparatedMLPSEM,
    SMNCClosure,
    cycle_loss,
    logdet_acyclicity,
    relation_loss,
)
from paperworks.smnc_dag._fast import Cues, central_path, logdet_h_and_grad, minimize_stage, mmatrix_inverse


def _power_series_h(A: np.ndarray, s: float, terms: int = 4000) -> float:
    """h_s(A) = -log det(I - B / s) = sum_k tr((B / s)^k) / k, B = A o A (valid for rho(B) < s)."""
    B = A * A / s
    P, total = np.eye(len(A)), 0.0
    for k in range(1, terms + 1):
        P = P @ B
        total += np.trace(P) / k
    return total


def test_two_disjoint_two_cycles_outside_the_domain_give_inf():
    # det(I - A o A) = (1 - 1.2^4)^2 > 0: the sign of the determinant alone would accept it
    A = np.zeros((4, 4))
    A[0, 1] = A[1, 0] = A[2, 3] = A[3, 2] = 1.2
    assert np.linalg.slogdet(np.eye(4) - A * A)[0] > 0
    assert math.isinf(float(logdet_acyclicity(torch.tensor(A))))
    assert logdet_h_and_grad(A, 1.0) is None
    assert float(logdet_acyclicity(torch.tensor(A), s=1.2**2 + 0.01)) < math.inf


@settings(max_examples=40, deadline=None)
@given(d=st.integers(2, 6), seed=st.integers(0, 10_000), radius=st.floats(0.05, 1.95))
def test_domain_is_spectral_radius_below_s_and_h_is_the_power_series(d, seed, radius):
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1, 1, (d, d))
    np.fill_diagonal(A, 0)
    rho = max(abs(np.linalg.eigvals(A * A)))
    if rho < 1e-9:
        return
    A *= math.sqrt(radius / rho)  # spectral radius of A o A is now `radius`
    s = 1.0
    h = float(logdet_acyclicity(torch.tensor(A), s))
    if abs(radius - s) < 1e-3:
        return  # too close to the boundary to ask either answer
    if radius < s:
        assert mmatrix_inverse(s * np.eye(d) - A * A) is not None
        if radius < 0.9:
            assert h == pytest.approx(_power_series_h(A, s), rel=1e-6, abs=1e-9)
        assert h >= -1e-12
    else:
        assert math.isinf(h) and logdet_h_and_grad(A, s) is None


def test_h_is_zero_on_dags_and_matches_numpy_and_autograd():
    rng = np.random.default_rng(0)
    A = np.triu(rng.uniform(-0.8, 0.8, (5, 5)), 1)
    assert float(logdet_acyclicity(torch.tensor(A))) == pytest.approx(0.0, abs=1e-12)
    A[4, 0] = 0.5  # a cycle
    At = torch.tensor(A, requires_grad=True)
    h = logdet_acyclicity(At, 0.9)
    h.backward()
    value, grad = logdet_h_and_grad(A, 0.9)
    assert float(h.detach()) == pytest.approx(value, rel=1e-12) and value > 0
    np.testing.assert_allclose(At.grad.numpy(), grad, rtol=1e-10, atol=1e-12)


def test_logdet_acyclicity_errors():
    with pytest.raises(ValueError, match=r"^A: .*square"):
        logdet_acyclicity(torch.zeros(2, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"^s: "):
        logdet_acyclicity(torch.zeros(2, 2, dtype=torch.float64), s=0.0)
    with pytest.raises(ValueError, match=r"^A: .*finite"):
        logdet_acyclicity(torch.tensor([[0.0, float("nan")], [0.0, 0.0]]))
    with pytest.raises(TypeError, match=r"^A: "):
        logdet_acyclicity(np.zeros((2, 2)))


# -- the full objective: NumPy gradient == autograd --------------------------------------------------


def _torch_objective(p: dict, cov, cfg, d, factorization, cues, mu, s, model="linear", X=None):
    """An independent torch writing of the full objective (estimator docstring), for autograd."""
    off = 1 - torch.eye(d, dtype=torch.float64)
    if model == "linear":
        if factorization == "none":
            A = p["W"] * off
            G = (1 - torch.exp(-((A / cfg.w_threshold) ** 2))) * off
        else:
            Z = p["Z"] if factorization == "full" else p["U"] @ p["V"].T + p["b"]
            G = torch.sigmoid(Z) * off
            A = cfg.beta * torch.tanh(p["M"]) * G
        R = torch.eye(d, dtype=torch.float64) - A
        fit = 0.5 * torch.trace(R.T @ cov @ R)
    else:
        if factorization == "none":
            theta = p["M"] * off.T[:, None, :]
        else:
            G = torch.sigmoid(p["Z"]) * off
            theta = cfg.beta * torch.tanh(p["M"]) * G.T[:, None, :] * off.T[:, None, :]
        A = torch.sqrt((theta**2).sum(1).T + 1e-18) * off
        if factorization == "none":
            G = (1 - torch.exp(-((A / cfg.w_threshold) ** 2))) * off
        hid = torch.sigmoid(torch.einsum("ni,jhi->njh", X, theta) + p["b1"])
        Xhat = (hid * p["w2"]).sum(-1) + p["b2"]
        n = X.shape[0]
        fit = 0.5 * d * torch.log(((Xhat - X) ** 2).sum() / n)
        fit = fit + 0.5 * cfg.lambda2 * sum((p[k] ** 2).sum() for k in ("M", "b1", "w2", "b2"))
    obj = mu * (fit + cfg.lambda1 * A.abs().sum() + cfg.lambda_gate * G.mean())
    if cfg.closure != "off":
        logits = SMNCClosure(normalize=cfg.closure == "smnc", tau=cfg.tau)(G)
        closure = cfg.gamma_cycle * cycle_loss(logits)
        if cues is not None:
            closure = closure + cfg.gamma_relation * relation_loss(
                logits, torch.tensor(cues.positive), torch.tensor(cues.negative)
            )
        obj = obj + mu * closure
    return obj + logdet_acyclicity(A, s)


def _random_params(model, rng, scale=0.4):
    return {k: np.asarray(scale * rng.standard_normal(np.shape(v))) for k, v in model.params.items()}


def _cues(d):
    pos = np.zeros((d, d), bool)
    neg = np.zeros((d, d), bool)
    pos[0, 3] = pos[1, 4] = True
    neg[3, 0] = neg[4, 1] = neg[2, 0] = True
    return Cues(pos, neg)


@pytest.mark.parametrize("factorization", ["full", "lowrank", "none"])
@pytest.mark.parametrize("closure", ["smnc", "product", "off"])
def test_linear_numpy_gradient_equals_autograd_on_the_full_objective(factorization, closure):
    d, rng = 5, np.random.default_rng(7)
    X = rng.standard_normal((40, d))
    X -= X.mean(0)
    cfg = SMNC(factorization=factorization, closure=closure, gamma_cycle=0.3, gamma_relation=0.7).config()
    model = SeparatedLinearSEM(d, factorization, rank=2, random_state=1)
    model.params = _random_params(model, rng)
    cues = None if closure == "off" else _cues(d)
    problem = model.problem(X, cfg, cues)
    mu, s = 0.3, 1.7
    value, grads = problem.objective_and_grad(mu, s)
    pt = {k: torch.tensor(v, requires_grad=True) for k, v in model.params.items()}
    ref = _torch_objective(pt, torch.tensor(X.T @ X / len(X)), cfg, d, factorization, cues, mu, s)
    ref.backward()
    assert value == pytest.approx(float(ref.detach()), rel=1e-10)
    for k, g in grads.items():
        np.testing.assert_allclose(g, pt[k].grad.numpy(), rtol=1e-7, atol=1e-10, err_msg=k)


@pytest.mark.parametrize("factorization", ["full", "none"])
def test_mlp_gradient_equals_autograd_on_the_full_objective(factorization):
    d, rng = 4, np.random.default_rng(3)
    X = rng.standard_normal((30, d))
    X -= X.mean(0)
    cfg = SMNC(model="mlp", factorization=factorization, gamma_cycle=0.5, gamma_relation=0.5).config()
    model = SeparatedMLPSEM(d, factorization, hidden=3, random_state=0)
    model.params = _random_params(model, rng, scale=0.3)
    cues = Cues(np.eye(d, k=2, dtype=bool), np.eye(d, k=-2, dtype=bool))
    value, grads = model.problem(X, cfg, cues).objective_and_grad(0.5, 2.0)
    pt = {k: torch.tensor(v, requires_grad=True) for k, v in model.params.items()}
    ref = _torch_objective(pt, None, cfg, d, factorization, cues, 0.5, 2.0, model="mlp", X=torch.tensor(X))
    ref.backward()
    assert value == pytest.approx(float(ref.detach()), rel=1e-10)
    for k, g in grads.items():
        np.testing.assert_allclose(g, pt[k].grad.numpy(), rtol=1e-7, atol=1e-10, err_msg=k)


def test_mlp_predict_matches_a_plain_torch_forward():
    rng = np.random.default_rng(0)
    model = SeparatedMLPSEM(3, hidden=2, random_state=0)
    X = rng.standard_normal((7, 3))
    p = {k: torch.tensor(v) for k, v in model.params.items()}
    off = 1 - torch.eye(3, dtype=torch.float64)
    theta = 2.5 * torch.tanh(p["M"]) * (torch.sigmoid(p["Z"]) * off).T[:, None, :] * off.T[:, None, :]
    ref = (torch.sigmoid(torch.einsum("ni,jhi->njh", torch.tensor(X), theta) + p["b1"]) * p["w2"]).sum(
        -1
    ) + p["b2"]
    np.testing.assert_allclose(model.predict(X), ref.numpy(), rtol=1e-12)


# -- DAGMA's retry schedule -------------------------------------------------------------------------


class _Box:
    """A toy problem whose domain is |x| < s - 0.95 (so s = 1 is too tight for the start x = 0.2)."""

    def __init__(self):
        self.params = {"x": np.array(0.2)}
        self.calls = []

    def objective_and_grad(self, mu, s):
        x = float(self.params["x"])
        self.calls.append(s)
        if abs(x) >= s - 0.95:
            return None
        return (x - 1) ** 2, {"x": np.array(2 * (x - 1))}


def test_central_path_raises_s_by_0_1_and_halves_the_step_as_dagma():
    box = _Box()
    _, used = central_path(
        box, T=1, mu_init=1.0, mu_factor=0.1, s=(1.0,), warm_iter=5, max_iter=5, lr=0.01, tol=0
    )
    assert used == [pytest.approx(1.2)]  # s = 1.0 and 1.1 fail at the first step; 1.2 holds x = 0.2
    assert sorted(set(np.round(box.calls, 6))) == [1.0, 1.1, 1.2]


def test_minimize_fails_on_first_step_or_small_s_and_backtracks_otherwise():
    box = _Box()
    box.params["x"] = np.array(0.0)
    ok, _ = minimize_stage(box, 1.0, 0.9, 3, lr=10.0, tol=0)  # s <= 0.9: leaving the domain fails
    assert not ok
    box = _Box()
    box.params["x"] = np.array(0.0)
    ok, _ = minimize_stage(box, 1.0, 1.0, 20, lr=0.04, tol=0)  # s = 1: the step halves and it succeeds
    assert ok and 0.04 < abs(float(box.params["x"])) < 1.0 - 0.95
