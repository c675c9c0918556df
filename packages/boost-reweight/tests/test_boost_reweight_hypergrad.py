import numpy as np
import pytest
import torch
from torch import nn

from paperworks.boost_reweight import ReweightingHead, TrajectoryReweighter, hypergradient, unrolled_val_loss


def _problem():
    g = torch.Generator().manual_seed(3)
    model = nn.Linear(3, 1).double()
    head = ReweightingHead(4, 5).double()
    for p in head.parameters():
        with torch.no_grad():
            p.copy_(0.5 * torch.randn(p.shape, generator=g, dtype=torch.double))
    x, y = torch.randn(8, 3, generator=g, dtype=torch.double), torch.randn(8, generator=g, dtype=torch.double)
    xv, yv = (
        torch.randn(6, 3, generator=g, dtype=torch.double),
        torch.randn(6, generator=g, dtype=torch.double),
    )
    f = torch.randn(8, 4, generator=g, dtype=torch.double)
    return model, head, (x, y), (xv, yv), f


def _loss(out, batch):
    return (out.squeeze(-1) - batch[1]) ** 2


@pytest.mark.parametrize("k", [1, 3])
def test_hypergradient_matches_finite_differences_on_a_linear_model(k):
    model, head, batch, val, f = _problem()
    g, value = hypergradient(model, _loss, head, f, batch, val, lookahead_lr=0.3, unroll_steps=k)
    params = {n: p.detach() for n, p in model.named_parameters()}

    def outer(phi):
        w = 8 * torch.softmax(torch.func.functional_call(head, phi, (f,)), 0)
        return unrolled_val_loss(model, _loss, params, w, batch, val, lookahead_lr=0.3, unroll_steps=k)

    phi = {n: p.detach().clone() for n, p in head.named_parameters()}
    assert float(value) == pytest.approx(float(outer(phi)))
    h, worst, scale = 1e-6, 0.0, 0.0
    for n in phi:
        for i in range(phi[n].numel()):
            plus = {a: b.clone() for a, b in phi.items()}
            minus = {a: b.clone() for a, b in phi.items()}
            plus[n].view(-1)[i] += h
            minus[n].view(-1)[i] -= h
            fd = float(outer(plus) - outer(minus)) / (2 * h)
            worst = max(worst, abs(fd - float(g[n].view(-1)[i])))
            scale = max(scale, abs(fd))
    assert scale > 1e-3  # the hypergradient is not trivially zero
    assert worst < 1e-7


def test_one_step_hypergradient_is_the_learning_to_reweight_formula():
    """K = 1: dL_val/dw_i = -(alpha / n) grad L_val(theta') . grad l_i(theta) (Ren et al. 2018)."""
    model, _, batch, val, _ = _problem()
    x, y = batch
    params = {n: p.detach() for n, p in model.named_parameters()}
    w = torch.ones(8, dtype=torch.double, requires_grad=True)
    v = unrolled_val_loss(model, _loss, params, w, batch, val, lookahead_lr=0.3)
    (gw,) = torch.autograd.grad(v, w)
    per = [
        torch.autograd.grad(_loss(model(x[i : i + 1]), (None, y[i : i + 1])).sum(), list(model.parameters()))
        for i in range(8)
    ]
    mean_grad = [sum(p[j] for p in per) / 8 for j in range(2)]
    moved = {n: (params[n] - 0.3 * mean_grad[j]).detach().requires_grad_() for j, n in enumerate(params)}
    vv = _loss(torch.func.functional_call(model, moved, (val[0],)), val).mean()
    gval = torch.autograd.grad(vv, [moved[n] for n in moved])
    expected = torch.stack(
        [-(0.3 / 8) * sum((gval[j] * per[i][j]).sum() for j in range(2)) for i in range(8)]
    )
    assert torch.allclose(gw, expected, atol=1e-10)


def test_reweighter_step_moves_the_head_and_exports_weights():
    model, _, batch, val, f = _problem()
    rw = TrajectoryReweighter(
        model.float(),
        _loss,
        [(val[0].float(), val[1].float())],
        feature_dim=4,
        head_lr=0.1,
        inputs_fn=lambda b: ((b[0],), {}),
    )
    fb = f.float()
    before = rw.weights(fb)
    assert torch.allclose(before, torch.ones(8))
    for _ in range(5):
        rw.step((batch[0].float(), batch[1].float()), fb)
    after = rw.weights(fb)
    assert float(after.mean()) == pytest.approx(1.0, abs=1e-5) and float(after.std()) > 1e-4
    ids = [f"syn{i}" for i in range(8)]
    exported = rw.export_weights(ids, fb)
    assert list(exported) == ids and np.mean(list(exported.values())) == pytest.approx(1.0, abs=1e-5)
    assert all(p.grad is None for p in model.parameters())  # the policy is never written


def test_reweighter_bad_input():
    model = nn.Linear(3, 1)
    with pytest.raises(ValueError, match="val_loader"):
        TrajectoryReweighter(model, _loss, [], feature_dim=4)
    with pytest.raises(ValueError, match="synthetic pool"):
        TrajectoryReweighter(model, _loss, [1], feature_dim=4, synthetic_ids=["a", "b"], val_ids=["b", "c"])
    with pytest.raises(ValueError, match="temperature"):
        TrajectoryReweighter(model, _loss, [1], feature_dim=4, temperature=0.0)
    rw = TrajectoryReweighter(model, _loss, [1], feature_dim=4)
    with pytest.raises(ValueError, match="features"):
        rw.weights(torch.tensor([[0.0, float("nan"), 0.0, 0.0]]))
    with pytest.raises(ValueError, match="features"):
        rw.weights(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="ids"):
        rw.export_weights(["a"], torch.zeros(2, 4))
    with pytest.raises(TypeError, match="model"):
        TrajectoryReweighter(object(), _loss, [1], feature_dim=4)
