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
    export_onnx_module,
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
    with pytest.raises(ValueError, match=r"depth: expected an int >= 1 <= 4"):
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


@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
def test_dynamic_batch_onnx_equals_eager_for_batch_1_3_8(tmp_path, exporter):
    pytest.importorskip("onnxruntime")
    m = _model(3)
    plan = SliePlan(m, (0, 2), depth=3).eval()
    sess = OnnxPlan(export_onnx(plan, tmp_path / "plan.onnx", dynamic_batch=True, exporter=exporter))
    assert sess.input_shape[0] is None  # a symbolic batch axis
    for b in (1, 3, 8):
        x = torch.randn(b, 2, 8, 8, generator=torch.Generator().manual_seed(b))
        with torch.no_grad():
            np.testing.assert_allclose(sess(x.numpy()), plan(x).numpy(), atol=1e-5)
    fixed = OnnxPlan(export_onnx(plan, tmp_path / "fixed.onnx", batch_size=3))
    assert fixed.input_shape == (3, 2, 8, 8)
    with pytest.raises(ValueError, match=r"shape \(3, 2, 8, 8\)"):
        fixed(np.zeros((8, 2, 8, 8), np.float32))


def test_dynamic_batch_exported_program_equals_eager_for_batch_1_3_8():
    m = _model(4)
    plan = SliePlan(m, (1,), depth=2).eval()
    ep = export_program(plan, dynamic_batch=True).module()
    for b in (1, 3, 8):
        x = torch.randn(b, 2, 8, 8)
        with torch.no_grad():
            assert torch.allclose(ep(x), plan(x), atol=1e-6)


def test_execution_providers_are_configurable(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    plan = SliePlan(_model(), (0,), depth=1).eval()
    path = export_onnx(plan, tmp_path / "p.onnx")
    sess = OnnxPlan(path, providers=["CPUExecutionProvider"])
    assert sess.providers == ("CPUExecutionProvider",)
    with pytest.raises(ValueError, match=r"providers: 'NoSuchExecutionProvider' is not available"):
        OnnxPlan(path, providers=["NoSuchExecutionProvider"])
    assert "CPUExecutionProvider" in ort.get_available_providers()


class _Branchy(torch.nn.Module):
    """Data-dependent control flow: a trace freezes the branch taken on the example."""

    in_channels, image_size = 2, 8

    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


def test_tracer_warnings_reach_the_caller(tmp_path):
    pytest.importorskip("onnx")
    with pytest.warns(torch.jit.TracerWarning):
        export_onnx_module(_Branchy(), torch.ones(1, 2, 8, 8), tmp_path / "b.onnx")


def test_exporter_notices_are_filtered(tmp_path):
    import warnings

    pytest.importorskip("onnx")
    plan = SliePlan(_model(), (0,), depth=1).eval()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        export_onnx(plan, tmp_path / "q.onnx")
    assert not [w for w in seen if "legacy TorchScript-based ONNX export" in str(w.message)]


class _Unexportable(torch.nn.Module):
    in_channels, image_size = 2, 8

    def forward(self, x):
        return torch.linalg.eigvalsh(x[0, 0] @ x[0, 0].T)  # no ONNX symbolic for aten::linalg_eigvalsh


def test_export_failure_raises_and_is_not_retried(tmp_path, monkeypatch):
    pytest.importorskip("onnx")
    calls = []
    real = torch.onnx.export

    def counting(*args, **kwargs):
        calls.append(kwargs.get("dynamo"))
        return real(*args, **kwargs)

    monkeypatch.setattr(torch.onnx, "export", counting)
    with pytest.raises(RuntimeError, match="export_onnx: the torchscript exporter failed on _Unexportable"):
        export_onnx_module(_Unexportable(), torch.ones(1, 2, 8, 8), tmp_path / "u.onnx")
    assert calls == [False]  # one attempt, with the exporter asked for; no silent retry with the other


def test_ic_costs_exclude_the_stem_as_the_authors_count():
    """The authors' ``_compute_ic_costs``: per block 9 c_in c_out s^2 + 9 c_out^2 s^2 (+ c_in c_out s^2 for a
    projection shortcut), cumulative, over the sum of all blocks; the stem is not counted."""
    m = resnet56(100)  # ResNet-56, width 16, 32 x 32
    flops, cin = [], 16
    for stage, cout in enumerate((16, 32, 64)):
        for _ in range(9):
            s = 32 // (2**stage)
            f = 9 * cin * cout * s * s + 9 * cout * cout * s * s + (cin * cout * s * s if cin != cout else 0)
            flops.append(f)
            cin = cout
    cum = np.cumsum(flops) / sum(flops)
    assert m.ic_after == (4, 8, 12, 16, 20, 24)
    np.testing.assert_allclose(m.ic_costs, cum[list(m.ic_after)], rtol=1e-12)


def test_mixed_pool_starts_at_the_authors_value():
    from paperworks.slienet import MixedPoolIC

    head = MixedPoolIC(4, 8, 3)
    assert float(head.mix.detach()) == 0.5 and abs(float(torch.sigmoid(head.mix.detach())) - 0.6225) < 1e-4
