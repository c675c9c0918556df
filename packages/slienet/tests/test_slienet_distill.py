import pytest
import torch
from torch.nn import functional as F

from paperworks.core import torch_threads
from paperworks.slienet import SelfDistillationLoss, sdn_ic_weights, self_distillation_loss


@pytest.fixture(autouse=True, scope="module")
def _one_thread():  # tiny models: one intra-op thread is much faster on a shared machine
    with torch_threads(1):
        yield


def _inputs(seed=0, k=3, b=5, c=4):
    g = torch.Generator().manual_seed(seed)
    final = torch.randn(b, c, generator=g, dtype=torch.float64, requires_grad=True)
    ics = torch.randn(k, b, c, generator=g, dtype=torch.float64, requires_grad=True)
    y = torch.randint(0, c, (b,), generator=g)
    w = torch.rand(k, generator=g, dtype=torch.float64) + 0.1
    return final, ics, y, w


def test_teacher_receives_no_gradient():
    final, ics, y, w = _inputs()
    self_distillation_loss(final, ics, y, w, alpha=0.7, temperature=3.0).backward()
    g_full = final.grad.clone()
    final.grad = None
    F.cross_entropy(final, y).backward()
    assert torch.allclose(g_full, final.grad)  # only the final CE reaches the final classifier


def test_matches_independent_formula():
    final, ics, y, w = _inputs(1)
    a, t = 0.3, 4.0
    got = self_distillation_loss(final, ics, y, w, alpha=a, temperature=t)
    ref = F.cross_entropy(final, y)
    for j in range(ics.shape[0]):
        kd = F.kl_div(F.log_softmax(ics[j] / t, -1), F.softmax(final.detach() / t, -1), reduction="batchmean")
        ref = ref + w[j] * ((1 - a) * F.cross_entropy(ics[j], y) + a * t * t * kd)
    assert torch.allclose(got, ref)


def test_alpha_zero_is_sdn_loss_and_gradcheck():
    final, ics, y, w = _inputs(2)
    sdn = F.cross_entropy(final, y) + sum(w[j] * F.cross_entropy(ics[j], y) for j in range(3))
    assert torch.allclose(self_distillation_loss(final, ics, y, w, alpha=0.0), sdn)
    # w.r.t. the IC logits the analytic gradient matches finite differences (the teacher is held fixed;
    # w.r.t. the final logits it must not, by design: the stop-gradient hides the teacher's dependence)
    f0 = final.detach()
    assert torch.autograd.gradcheck(
        lambda i: self_distillation_loss(f0, i, y, w, alpha=0.5, temperature=2.0), (ics,)
    )


def test_module_twin_and_weights():
    final, ics, y, w = _inputs(3)
    assert torch.equal(
        SelfDistillationLoss(0.3, 4.0)(final, ics, y, w), self_distillation_loss(final, ics, y, w)
    )
    ws = sdn_ic_weights([0.2, 0.5, 1.0], 1.0)
    assert torch.allclose(ws, torch.tensor([0.2, 0.5, 1.0]))
    assert torch.allclose(sdn_ic_weights([0.2, 0.5], 0.0), torch.tensor([0.01, 0.01]))


def test_errors():
    final, ics, y, w = _inputs()
    with pytest.raises(ValueError, match=r"ic_logits: expected shape \(K, 5, 4\)"):
        self_distillation_loss(final, ics[:, :3], y, w)
    with pytest.raises(ValueError, match="target"):
        self_distillation_loss(final, ics, y.float(), w)
    with pytest.raises(ValueError, match="alpha"):
        SelfDistillationLoss(alpha=1.5)
    with pytest.raises(ValueError, match="temperature"):
        self_distillation_loss(final, ics, y, w, temperature=0.0)
    with pytest.raises(ValueError, match="progress"):
        sdn_ic_weights([0.5], 2.0)
