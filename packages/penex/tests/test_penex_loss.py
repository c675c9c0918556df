"""PENEX loss: float64 NumPy formula, gradients, autograd completeness, the adaptive penalty, options."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.penex import (
    DEFAULT_SENSITIVITY,
    STABLE_CLIP,
    PENEXLoss,
    adaptive_penalty,
    penex_loss,
    penex_minimiser,
    penex_probabilities,
)


def np_loss_and_grad(f, y, alpha, rho, weight=None, ignore_index=-100, reduction="mean"):
    """Loss and its gradient (rho held fixed) in float64 NumPy, one sample at a time."""
    f = np.asarray(f, dtype=np.float64)
    total, wsum, grad = 0.0, 0.0, np.zeros_like(f)
    for i in range(f.shape[0]):
        k = int(y[i])
        if k == ignore_index:
            continue
        w = 1.0 if weight is None else float(weight[k])
        total += w * (math.exp(-alpha * f[i, k]) + rho * np.exp(f[i]).sum())
        grad[i] = w * rho * np.exp(f[i])
        grad[i, k] -= w * alpha * math.exp(-alpha * f[i, k])
        wsum += w
    if reduction == "sum":
        return total, grad
    return total / wsum, grad / wsum


def np_adaptive(f, y, alpha, ignore_index=-100):
    """The authors' estimate alpha * mean exp(-alpha f_y) / (mean sum_j exp f_j + 1e-12), float64."""
    rows = [i for i in range(len(y)) if int(y[i]) != ignore_index]
    a = np.mean([math.exp(-alpha * f[i, int(y[i])]) for i in rows])
    s = np.mean([np.exp(f[i]).sum() for i in rows])
    return float(np.clip(alpha * a / (s + 1e-12), 1e-10, 100.0))


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(1, 6),
    c=st.integers(1, 7),
    alpha=st.floats(0.01, 3.0),
    rho=st.floats(0.05, 3.0),
    seed=st.integers(0, 10_000),
    reduction=st.sampled_from(["mean", "sum"]),
)
def test_loss_and_gradient_match_numpy_formula(n, c, alpha, rho, seed, reduction):
    g = torch.Generator().manual_seed(seed)
    f = (torch.randn(n, c, generator=g, dtype=torch.float64) * 3).requires_grad_()
    y = torch.randint(0, c, (n,), generator=g)
    for clip in (None, 50.0):  # clip far above the logits: the exact form
        got = penex_loss(f, y, sensitivity=alpha, penalty=rho, reduction=reduction, clip=clip)
        (grad,) = torch.autograd.grad(got, f)
        want, want_grad = np_loss_and_grad(f.detach().numpy(), y.numpy(), alpha, rho, reduction=reduction)
        assert math.isclose(float(got.detach()), want, rel_tol=1e-10)
        np.testing.assert_allclose(grad.numpy(), want_grad, rtol=1e-10, atol=1e-12)


def test_auto_penalty_is_the_authors_estimate_held_fixed_in_the_gradient():
    g = torch.Generator().manual_seed(2)
    f = (torch.randn(9, 5, generator=g, dtype=torch.float64) * 2).requires_grad_()
    y = torch.tensor([0, 1, 2, 3, 4, -100, 1, 0, 2])
    rho = np_adaptive(f.detach().numpy(), y.numpy(), 0.3)
    assert float(adaptive_penalty(f, y, sensitivity=0.3)) == pytest.approx(rho, rel=1e-12)
    got = penex_loss(f, y, sensitivity=0.3, penalty="auto")
    (grad,) = torch.autograd.grad(got, f)
    want, want_grad = np_loss_and_grad(f.detach().numpy(), y.numpy(), 0.3, rho)
    assert float(got.detach()) == pytest.approx(want, rel=1e-12)
    np.testing.assert_allclose(grad.numpy(), want_grad, rtol=1e-10, atol=1e-14)
    assert not adaptive_penalty(f, y).requires_grad


def test_defaults_are_the_authors():
    crit = PENEXLoss()
    assert crit.sensitivity == DEFAULT_SENSITIVITY == 0.1 and crit.penalty == "running"
    assert crit.ema == 0.1 and crit.clip is None and (crit.penalty_min, crit.penalty_max) == (1e-10, 100.0)
    f, y = torch.randn(6, 3, dtype=torch.float64), torch.tensor([0, 1, 2, 0, 1, 2])
    assert torch.equal(penex_loss(f, y), penex_loss(f, y, sensitivity=0.1, penalty="auto"))


def test_adaptive_penalty_makes_the_loss_stationary_under_a_common_shift():
    """rho_hat is the penalty at which d/dc L(f + c) = 0: the fixed point of the adaptive rule."""
    g = torch.Generator().manual_seed(4)
    f = torch.randn(20, 6, generator=g, dtype=torch.float64) * 1.5
    y = torch.randint(0, 6, (20,), generator=g)
    rho = float(adaptive_penalty(f, y, sensitivity=0.5))
    c = torch.zeros((), dtype=torch.float64, requires_grad=True)
    for penalty, stationary in ((rho, True), (2 * rho, False), (rho / 2, False)):
        (d,) = torch.autograd.grad(penex_loss(f + c, y, sensitivity=0.5, penalty=penalty), c)
        assert (abs(float(d)) < 1e-12) == stationary


def test_population_estimate_at_the_minimiser_equals_its_penalty():
    """At the population minimiser for any fixed rho, the population estimate returns that rho."""
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4), size=6)
    for alpha, rho in ((0.1, 0.02), (1.0, 3.0), (2.5, 0.7)):
        f = penex_minimiser(torch.from_numpy(p), alpha, rho).numpy()
        a = (p * np.exp(-alpha * f)).sum(1).mean()  # E_x E_{y|x} exp(-alpha f_y)
        s = np.exp(f).sum(1).mean()
        assert alpha * a / (s + 1e-12) == pytest.approx(rho, rel=1e-9)


def test_running_penalty_reaches_a_joint_fixed_point_with_calibrated_read_out():
    """Gradient descent with the running penalty: stationary logits whose read-out is the label
    frequencies, and a running penalty equal to the batch estimate at those logits."""
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(3) * 2, size=4)
    reps = 300
    y = torch.from_numpy(np.concatenate([rng.choice(3, size=reps, p=row) for row in p]))
    point = torch.arange(4).repeat_interleave(reps)
    freq = torch.stack([torch.bincount(y[point == i], minlength=3) for i in range(4)]).double() / reps
    alpha = 0.5
    crit = PENEXLoss(sensitivity=alpha, penalty="running")
    f = torch.zeros(4, 3, dtype=torch.float64, requires_grad=True)
    for _ in range(1500):
        (grad,) = torch.autograd.grad(crit(f[point], y), f)
        with torch.no_grad():
            f -= 2.0 * grad
    assert float(grad.abs().max()) < 1e-8
    assert torch.allclose(crit.probabilities(f.detach()), freq, atol=1e-6)
    rho = float(crit.running_penalty)
    assert rho == pytest.approx(float(adaptive_penalty(f.detach()[point], y, sensitivity=alpha)), rel=1e-6)
    assert torch.allclose(f.detach(), penex_minimiser(freq, alpha, rho), atol=1e-6)


def test_running_penalty_is_an_ema_frozen_in_eval_and_kept_in_state_dict():
    f, y = torch.randn(8, 4, dtype=torch.float64), torch.randint(0, 4, (8,))
    est = float(adaptive_penalty(f, y))
    crit = PENEXLoss().double()
    assert crit.penalty_value is None
    want = penex_loss(f, y, penalty=est)
    assert torch.allclose(crit(f, y), want) and float(crit.running_penalty) == pytest.approx(est)
    crit.running_penalty.fill_(5.0)
    for t in range(1, 4):
        crit(f, y)
        assert float(crit.running_penalty) == pytest.approx(est + 0.9**t * (5.0 - est), rel=1e-12)
    assert int(crit.num_penalty_updates) == 4
    frozen = float(crit.running_penalty)
    crit.eval()
    assert (
        torch.allclose(crit(f, y), penex_loss(f, y, penalty=frozen)) and float(crit.running_penalty) == frozen
    )
    twin = PENEXLoss().double()
    twin.load_state_dict(crit.state_dict())
    assert float(twin.penalty_value) == frozen
    crit.train()
    crit(f[:2], torch.full((2,), -100))  # every target ignored: the average stays
    assert float(crit.running_penalty) == frozen
    crit.reset_penalty()
    assert crit.penalty_value is None


def test_settings_are_read_at_call_time_and_checked_when_assigned():
    f, y = torch.randn(5, 3, dtype=torch.float64), torch.tensor([0, 1, 2, 0, 1])
    crit = PENEXLoss(sensitivity=0.1, penalty=0.5)
    crit.sensitivity = 2.0
    assert torch.equal(crit(f, y), penex_loss(f, y, sensitivity=2.0, penalty=0.5))
    assert torch.allclose(crit.probabilities(f), penex_probabilities(f, 2.0))
    assert torch.allclose(crit.log_probabilities(f).exp(), crit.probabilities(f))
    crit.penalty = "auto"
    assert torch.equal(crit(f, y), penex_loss(f, y, sensitivity=2.0, penalty="auto"))
    for name, bad in (
        ("sensitivity", 0.0),
        ("penalty", "fixed"),
        ("clip", -1.0),
        ("ema", 0.0),
        ("reduction", "avg"),
    ):
        with pytest.raises((TypeError, ValueError), match=f"^{name}:"):
            setattr(crit, name, bad)
    assert crit.sensitivity == 2.0


def test_weights_and_ignore_index_match_numpy():
    g = torch.Generator().manual_seed(1)
    f = torch.randn(9, 4, generator=g, dtype=torch.float64)
    y = torch.tensor([0, 1, -1, 3, 2, -1, 1, 0, 3])
    w = torch.tensor([0.5, 2.0, 1.0, 3.0], dtype=torch.float64)
    for red in ("mean", "sum"):
        got = penex_loss(f, y, sensitivity=1.3, penalty=0.2, weight=w, ignore_index=-1, reduction=red)
        want, _ = np_loss_and_grad(f.numpy(), y.numpy(), 1.3, 0.2, w.numpy(), -1, red)
        assert math.isclose(float(got), want, rel_tol=1e-10)
    per = penex_loss(f, y, weight=w, ignore_index=-1, reduction="none")
    assert per.shape == (9,) and float(per[2]) == 0.0 and float(per[5]) == 0.0
    # an ignore_index inside the class range masks those samples too
    got = penex_loss(f, y.clamp(min=0), penalty=0.2, ignore_index=3)
    want, _ = np_loss_and_grad(f.numpy(), y.clamp(min=0).numpy(), 0.1, 0.2, ignore_index=3)
    assert math.isclose(float(got), want, rel_tol=1e-10)


def test_spatial_shape_equals_flattened():
    f = torch.randn(2, 3, 4, 5, dtype=torch.float64)
    y = torch.randint(0, 3, (2, 4, 5))
    flat = penex_loss(f.movedim(1, -1).reshape(-1, 3), y.reshape(-1), penalty=0.3, reduction="none")
    per = penex_loss(f, y, penalty=0.3, reduction="none")
    assert per.shape == (2, 4, 5) and torch.allclose(per.reshape(-1), flat)


@pytest.mark.parametrize("clip", [None, STABLE_CLIP, 1.5])
def test_gradcheck_and_double_backward_float64(clip):
    g = torch.Generator().manual_seed(3)
    f = (torch.randn(6, 4, generator=g, dtype=torch.float64) * 2).requires_grad_()
    y = torch.tensor([0, 1, 2, 3, -100, 1])
    w = torch.tensor([1.0, 0.5, 2.0, 1.5], dtype=torch.float64)
    rho = torch.tensor(0.4, dtype=torch.float64, requires_grad=True)  # a tensor penalty gets a gradient

    def fn(a, r):
        return penex_loss(a, y, sensitivity=0.8, penalty=r, weight=w, clip=clip)

    assert torch.autograd.gradcheck(fn, (f, rho))
    assert torch.autograd.gradgradcheck(fn, (f, rho))


@pytest.mark.parametrize("clip", [None, 1.5])
def test_torch_func_grad_vmap_and_hessian(clip):
    g = torch.Generator().manual_seed(5)
    x = torch.randn(3, 6, 4, generator=g, dtype=torch.float64) * 2
    y = torch.tensor([0, 1, 2, 3, 0, 1])

    def loss(a):
        return penex_loss(a, y, sensitivity=0.7, penalty=0.3, clip=clip)

    grads = torch.func.vmap(torch.func.grad(loss))(x)
    for i in range(3):
        xi = x[i].clone().requires_grad_()
        (ref,) = torch.autograd.grad(loss(xi), xi)
        assert torch.allclose(grads[i], ref, rtol=1e-12)
    hess = torch.func.jacrev(torch.func.grad(loss))(x[0])
    ref = torch.autograd.functional.hessian(loss, x[0])
    assert torch.allclose(hess, ref, rtol=1e-10, atol=1e-12)
    # auto penalty under vmap: the per-batch estimate inside each mapped call
    auto = torch.func.vmap(lambda a: penex_loss(a, y, penalty="auto", clip=clip))(x)
    assert torch.allclose(auto[1], penex_loss(x[1], y, penalty="auto", clip=clip))


@pytest.mark.parametrize("clip", [None, STABLE_CLIP])
def test_torch_compile_without_graph_breaks(clip):
    import torch._dynamo

    f, y = torch.randn(8, 5), torch.randint(0, 5, (8,))
    for fn in (
        lambda a, b: penex_loss(a, b, penalty="auto", clip=clip),
        PENEXLoss(clip=clip),
        PENEXLoss(penalty=0.2, weight=torch.rand(5), clip=clip, reduction="none"),
    ):
        explanation = torch._dynamo.explain(fn)(f, y)
        assert explanation.graph_break_count == 0, explanation.break_reasons
        assert explanation.graph_count == 1
    torch._dynamo.reset()
    eager, compiled_crit = PENEXLoss(clip=clip), PENEXLoss(clip=clip)
    compiled = torch.compile(compiled_crit, backend="eager", fullgraph=True)
    for _ in range(2):
        a = torch.randn(8, 5, requires_grad=True)
        b = a.detach().clone().requires_grad_()
        la, lb = compiled(a, y), eager(b, y)
        la.backward()
        lb.backward()
        assert torch.allclose(la, lb) and torch.allclose(a.grad, b.grad)
    assert torch.equal(compiled_crit.running_penalty, eager.running_penalty)


def test_clip_is_exact_in_range_and_linear_beyond():
    f = torch.randn(5, 4, dtype=torch.float64)
    y = torch.tensor([0, 1, 2, 3, 0])
    assert torch.allclose(penex_loss(f, y, clip=10.0), penex_loss(f, y, clip=None), rtol=0, atol=1e-12)
    one = torch.tensor([[12.0]], dtype=torch.float64)
    got = float(penex_loss(one, torch.tensor([0]), sensitivity=1.0, penalty=1.0, clip=10.0))
    assert math.isclose(got, math.exp(-12.0) + math.exp(10.0) * (1 + 2.0), rel_tol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_stable_at_large_logits_with_clip(dtype):
    g = torch.Generator().manual_seed(0)
    f = (torch.randn(16, 10, generator=g).sign() * 100).to(dtype).requires_grad_()
    y = torch.randint(0, 10, (16,), generator=g)
    loss = penex_loss(f, y, sensitivity=1.0, penalty=1.0, clip=STABLE_CLIP)
    loss.backward()
    assert torch.isfinite(loss) and loss.dtype == (torch.float32 if dtype != torch.float32 else dtype)
    assert f.grad.dtype == dtype and torch.isfinite(f.grad.float()).all()
    assert float(f.grad.float()[f.detach()[torch.arange(16), y] < 0, :].abs().sum()) > 0
    with pytest.raises(ValueError, match=r"logits: the loss overflows.*pass clip"):
        penex_loss(f.detach().float(), y)  # the exact form overflows: a named error on the CPU


def test_half_precision_agrees_with_float64_in_range():
    f64 = torch.randn(32, 5, dtype=torch.float64)
    y = torch.randint(0, 5, (32,))
    ref = float(penex_loss(f64, y, penalty=0.5))
    for dt in (torch.float16, torch.bfloat16):
        assert math.isclose(float(penex_loss(f64.to(dt), y, penalty=0.5)), ref, rel_tol=2e-2)


def test_module_matches_functional_and_repr():
    f = torch.randn(4, 3)
    y = torch.tensor([0, 2, 1, 2])
    w = torch.tensor([1.0, 2.0, 0.5])
    mod = PENEXLoss(sensitivity=2.0, penalty=0.5, weight=w, reduction="sum")
    assert torch.equal(mod(f, y), penex_loss(f, y, sensitivity=2.0, penalty=0.5, weight=w, reduction="sum"))
    assert "sensitivity=2.0" in repr(mod) and "weight" in dict(mod.named_buffers())


def test_gradient_descent_reaches_a_stationary_linear_classifier():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 2, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long()
    torch.manual_seed(0)
    lin = torch.nn.Linear(2, 2)
    loss_fn = PENEXLoss(sensitivity=1.0, penalty=1.0)
    for _ in range(1000):  # plain gradient descent
        lin.zero_grad()
        loss_fn(lin(x), y).backward()
        with torch.no_grad():
            for p in lin.parameters():
                p -= 0.5 * p.grad
    # PENEX's penalty keeps the linear minimiser finite (unlike CE on separable data): GD reaches a
    # stationary point whose decision direction is the true one, w_1 - w_0 parallel to (1, 1)
    assert all(float(p.grad.abs().max()) < 1e-4 for p in lin.parameters())
    d = (lin.weight[1] - lin.weight[0]).detach()
    assert float(d @ torch.tensor([1.0, 1.0])) / float(d.norm() * 2**0.5) > 0.99
    assert float((lin(x).argmax(1) == y).float().mean()) > 0.9
