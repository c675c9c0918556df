import numpy as np
import pytest
import torch

from paperworks.core import torch_threads
from paperworks.slienet import (
    OnnxPlan,
    SliePlan,
    VanillaPlan,
    count_flops,
    export_onnx,
    export_program,
    mobilenet_v1,
    resnet56,
    vgg16,
)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():  # tiny models: one intra-op thread is much faster on a shared machine
    with torch_threads(1):
        yield


def _model(seed=0):
    torch.manual_seed(seed)
    m = resnet56(7, width=4, blocks_per_stage=2, image_size=8, in_channels=2, num_ics=4).eval()
    with torch.no_grad():  # non-trivial batch-norm statistics, so fusion errors would show
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.5, 0.5)
                mod.running_var.uniform_(0.5, 2.0)
                mod.weight.uniform_(0.5, 1.5)
    return m


def test_plan_equals_subset_average_of_ics():
    m = _model()
    x = torch.randn(5, 2, 8, 8)
    with torch.no_grad():
        _, ics = m(x)
        plan = SliePlan(m, (0, 2), depth=3)
        ref = torch.softmax(ics[[0, 2]], -1).mean(0)
        assert torch.allclose(plan(x), ref, atol=1e-6)
        van = VanillaPlan(m)
        assert torch.allclose(van(x), torch.softmax(m(x)[0], -1), atol=1e-6)
    # truncation: blocks past the deepest selected IC are not part of the plan
    assert len(plan.blocks) == m.ic_after[2] + 1
    assert count_flops(plan, x) < count_flops(van, x)


def test_exported_graphs_equal_eager():
    m = _model(1)
    x = torch.randn(1, 2, 8, 8)
    plan = SliePlan(m, (1, 3), depth=4).eval()
    with torch.no_grad():
        eager = plan(x)
        ep = export_program(plan)
        assert torch.allclose(ep.module()(x), eager, atol=1e-6)
        van = VanillaPlan(m).eval()
        assert torch.allclose(export_program(van).module()(x), van(x), atol=1e-6)


def test_onnx_graph_equals_eager(tmp_path):
    pytest.importorskip("onnxruntime")
    m = _model(2)
    plan = SliePlan(m, (0, 1, 3), depth=4).eval()
    sess = OnnxPlan(export_onnx(plan, tmp_path / "plan.onnx"))
    for seed in range(3):
        x = torch.randn(1, 2, 8, 8, generator=torch.Generator().manual_seed(seed))
        with torch.no_grad():
            np.testing.assert_allclose(sess(x.numpy()), plan(x).numpy(), atol=1e-5)
    with pytest.raises(ValueError, match=r"x: expected a float32 numpy array of shape \(1, 2, 8, 8\)"):
        sess(np.zeros((1, 2, 8, 9), np.float32))


def test_other_backbones_run_and_export():
    for build in (vgg16, mobilenet_v1):
        torch.manual_seed(0)
        m = build(5, width=0.0625, image_size=16, in_channels=3).eval()
        x = torch.randn(2, 3, 16, 16)
        with torch.no_grad():
            final, ics = m(x)
        assert final.shape == (2, 5) and ics.shape == (6, 2, 5)
        assert all(0 < c < 1 for c in m.ic_costs) and list(m.ic_costs) == sorted(m.ic_costs)
    plan = SliePlan(m, (0, 4), depth=5).eval()
    assert len(plan.heads) == 2 and len(plan.blocks) == m.ic_after[4] + 1


def test_bad_input_errors():
    m = _model()
    with pytest.raises(
        ValueError, match=r"x: expected images of shape \(batch, 2, 8, 8\), got \(1, 3, 8, 8\)"
    ):
        m(torch.randn(1, 3, 8, 8))
    with pytest.raises(ValueError, match="non-empty batch"):
        m(torch.randn(0, 2, 8, 8))
    with pytest.raises(TypeError, match="floating-point"):
        m(torch.zeros(1, 2, 8, 8, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"depth: expected an int in \[1, 4\]"):
        SliePlan(m, (0,), depth=5)
    with pytest.raises(ValueError, match="empty subset"):
        SliePlan(m, (), depth=2)
    with pytest.raises(ValueError, match=r"subset: expected distinct increasing IC indices in \[0, 1\]"):
        SliePlan(m, (0, 3), depth=2)
    with pytest.raises(ValueError, match="images of shape"):
        SliePlan(m, (0,), depth=1).predict_proba(torch.randn(1, 2, 4, 4))
    with pytest.raises(ValueError, match="ic_after"):
        resnet56(5, width=4, blocks_per_stage=1, image_size=8, ic_after=(2,))
    with pytest.raises(ValueError, match="width"):
        vgg16(5, width=0)
