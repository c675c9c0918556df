"""PENEX loss: naive-formula agreement, gradients, stability, CrossEntropyLoss-like options, errors."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.penex import PENEXLoss, penex_loss


def naive(f, y, alpha, rho, weight=None, ignore_index=-100, reduction="mean"):
    """Straight from the paper's formula, one sample at a time (float64)."""
    losses, ws = [], []
    for i in range(f.shape[0]):
        if int(y[i]) == ignore_index:
            continue
        k = int(y[i])
        w = 1.0 if weight is None else float(weight[k])
        li = math.exp(-alpha * float(f[i, k])) + rho * sum(math.exp(float(v)) for v in f[i])
        losses.append(w * li)
        ws.append(w)
    if reduction == "sum":
        return sum(losses)
    return sum(losses) / sum(ws)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 6),
    c=st.integers(1, 7),
    alpha=st.floats(0.1, 3.0),
    rho=st.floats(0.05, 3.0),
    seed=st.integers(0, 10_000),
    reduction=st.sampled_from(["mean", "sum"]),
)
def test_matches_naive_formula(n, c, alpha, rho, seed, reduction):
    g = torch.Generator().manual_seed(seed)
    f = torch.randn(n, c, generator=g, dtype=torch.float64) * 3
    y = torch.randint(0, c, (n,), generator=g)
    got = penex_loss(f, y, sensitivity=alpha, penalty=rho, reduction=reduction, clip=None)
    assert math.isclose(float(got), naive(f, y, alpha, rho, reduction=reduction), rel_tol=1e-10)


def test_default_penalty_is_sensitivity_and_clip_is_exact_in_range():
    f = torch.randn(5, 4, dtype=torch.float64)
    y = torch.tensor([0, 1, 2, 3, 0])
    a = penex_loss(f, y, sensitivity=0.7)
    b = penex_loss(f, y, sensitivity=0.7, penalty=0.7, clip=None)
    assert torch.allclose(a, b, rtol=0, atol=1e-12)


def test_weights_and_ignore_index_match_naive():
    g = torch.Generator().manual_seed(1)
    f = torch.randn(9, 4, generator=g, dtype=torch.float64)
    y = torch.tensor([0, 1, -1, 3, 2, -1, 1, 0, 3])
    w = torch.tensor([0.5, 2.0, 1.0, 3.0], dtype=torch.float64)
    for red in ("mean", "sum"):
        got = penex_loss(f, y, sensitivity=1.3, penalty=0.2, weight=w, ignore_index=-1, reduction=red)
        assert math.isclose(float(got), naive(f, y, 1.3, 0.2, w, -1, red), rel_tol=1e-10)
    per = penex_loss(f, y, weight=w, ignore_index=-1, reduction="none")
    assert per.shape == (9,) and float(per[2]) == 0.0 and float(per[5]) == 0.0


def test_spatial_shape_equals_flattened():
    f = torch.randn(2, 3, 4, 5, dtype=torch.float64)
    y = torch.randint(0, 3, (2, 4, 5))
    flat = penex_loss(f.movedim(1, -1).reshape(-1, 3), y.reshape(-1), reduction="none")
    per = penex_loss(f, y, reduction="none")
    assert per.shape == (2, 4, 5)
    assert torch.allclose(per.reshape(-1), flat)


@pytest.mark.parametrize("clip", [None, 10.0, 1.5])
def test_gradcheck(clip):
    g = torch.Generator().manual_seed(3)
    f = (torch.randn(6, 4, generator=g, dtype=torch.float64) * 2).requires_grad_()
    y = torch.tensor([0, 1, 2, 3, -100, 1])
    w = torch.tensor([1.0, 0.5, 2.0, 1.5], dtype=torch.float64)
    assert torch.autograd.gradcheck(
        lambda a: penex_loss(a, y, sensitivity=0.8, penalty=0.4, weight=w, clip=clip), (f,)
    )


def test_clip_is_linear_continuation_beyond_threshold():
    # one class, target 0: loss = exp(-a f) + rho * exp(f); take f beyond the clip on the penalty side
    f = torch.tensor([[12.0]], dtype=torch.float64)
    y = torch.tensor([0])
    got = float(penex_loss(f, y, sensitivity=1.0, penalty=1.0, clip=10.0))
    want = math.exp(-12.0) + math.exp(10.0) * (1 + 2.0)
    assert math.isclose(got, want, rel_tol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_stable_at_large_logits(dtype):
    g = torch.Generator().manual_seed(0)
    f = (torch.randn(16, 10, generator=g).sign() * 100).to(dtype).requires_grad_()
    y = torch.randint(0, 10, (16,), generator=g)
    loss = penex_loss(f, y)
    loss.backward()
    assert torch.isfinite(loss) and loss.dtype == (torch.float32 if dtype != torch.float32 else dtype)
    assert f.grad.dtype == dtype and torch.isfinite(f.grad.float()).all()
    # the gradient of a misclassified point still pushes its target logit up
    assert float(f.grad.float()[f.detach()[torch.arange(16), y] < 0, :].abs().sum()) > 0


def test_half_precision_agrees_with_float64_in_range():
    f64 = torch.randn(32, 5, dtype=torch.float64)
    y = torch.randint(0, 5, (32,))
    ref = float(penex_loss(f64, y))
    for dt in (torch.float16, torch.bfloat16):
        assert math.isclose(float(penex_loss(f64.to(dt), y)), ref, rel_tol=2e-2)


def test_module_matches_functional_and_repr():
    f = torch.randn(4, 3)
    y = torch.tensor([0, 2, 1, 2])
    w = torch.tensor([1.0, 2.0, 0.5])
    mod = PENEXLoss(sensitivity=2.0, penalty=0.5, weight=w, reduction="sum")
    assert torch.equal(mod(f, y), penex_loss(f, y, sensitivity=2.0, penalty=0.5, weight=w, reduction="sum"))
    assert "sensitivity=2.0" in repr(mod)
    assert "weight" in dict(mod.named_buffers())


def test_gradient_descent_reaches_a_stationary_linear_classifier():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 2, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long()
    torch.manual_seed(0)
    lin = torch.nn.Linear(2, 2)
    loss_fn = PENEXLoss()
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


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"target": torch.tensor([0, 3])}, ValueError, r"target: expected class indices in \[0, 2\]"),
        ({"target": torch.tensor([0, -2])}, ValueError, "target: expected class indices"),
        ({"target": torch.tensor([0.0, 1.0])}, TypeError, "target: expected integer class indices"),
        ({"logits": torch.ones(2, 3, dtype=torch.long)}, TypeError, "logits: expected a floating-point"),
        ({"logits": torch.tensor([[0.0, float("nan"), 1.0], [0.0, 0.0, 0.0]])}, ValueError, "NaN"),
        ({"target": torch.tensor([0, 1, 2])}, ValueError, "batch sizes must agree"),
        ({"penalty": -1.0}, ValueError, "penalty: expected a positive"),
        ({"sensitivity": 0.0}, ValueError, "sensitivity: expected a positive"),
        ({"reduction": "avg"}, ValueError, "reduction: expected one of"),
        ({"weight": torch.ones(4)}, ValueError, r"weight: expected shape \(3,\)"),
        ({"weight": torch.tensor([1.0, -1.0, 1.0])}, ValueError, "non-negative"),
        ({"logits": torch.ones(3)}, ValueError, "logits: expected shape"),
        ({"target": torch.zeros(0, dtype=torch.long), "logits": torch.ones(0, 3)}, ValueError, "non-empty"),
        ({"clip": float("inf")}, ValueError, "clip"),
    ],
)
def test_bad_input(kwargs, exc, match):
    args = {"logits": torch.zeros(2, 3), "target": torch.tensor([0, 1])}
    args.update(kwargs)
    logits, target = args.pop("logits"), args.pop("target")
    with pytest.raises(exc, match=match):
        penex_loss(logits, target, **args)


def test_module_rejects_bad_config():
    with pytest.raises(ValueError, match="penalty"):
        PENEXLoss(penalty=-0.1)
    with pytest.raises(ValueError, match="reduction"):
        PENEXLoss(reduction="mean ")
