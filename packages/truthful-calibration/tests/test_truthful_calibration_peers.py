"""Our binned ECE against torchmetrics on the same bins; tensors in; the smooth ECE's behaviour."""

import numpy as np
import pytest

import paperworks.truthful_calibration as tc

torch = pytest.importorskip("torch")
tm = pytest.importorskip("torchmetrics.functional.classification")


@pytest.mark.parametrize("norm", ["l1", "l2"])
@pytest.mark.parametrize("n_bins", [5, 15, 40])
def test_top_label_ece_equals_torchmetrics(norm, n_bins):
    rng = np.random.default_rng(n_bins)
    p = rng.dirichlet(np.full(7, 0.4), size=3000).astype(np.float32)
    p /= p.sum(1, keepdims=True)
    y = rng.integers(0, 7, size=3000)
    ours = tc.top_label_ece(p, y, n_bins=n_bins, norm=norm)
    theirs = tm.multiclass_calibration_error(
        torch.from_numpy(p), torch.from_numpy(y), num_classes=7, n_bins=n_bins, norm=norm
    )
    assert ours == pytest.approx(float(theirs), abs=2e-6)


def test_tensor_and_array_inputs_agree():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4), size=200)
    y = rng.integers(0, 4, size=200)
    for fn in (
        tc.truthful_classwise_error,
        tc.truthful_multiclass_error,
        tc.top_label_ece,
        tc.smooth_ece,
        tc.classwise_atb,
        tc.multiclass_atb,
    ):
        assert fn(torch.from_numpy(p), torch.from_numpy(y)) == pytest.approx(fn(p, y), rel=1e-12)


def test_smooth_ece_is_small_for_calibrated_and_large_for_overconfident():
    rng = np.random.default_rng(2)
    q = tc.softmax_problem(5000, 3, rng)
    y = tc.sample_labels(q, 1, rng)[0]
    assert tc.smooth_ece(q, y) < 0.03
    assert tc.smooth_ece(tc.distort(q, "temperature", 0.3), y) > 0.1


def test_half_precision_softmax_is_accepted_at_the_default_tolerance():
    logits = torch.randn(2000, 10, generator=torch.Generator().manual_seed(0)) * 3
    for dtype in (torch.float16, torch.bfloat16):
        p = torch.softmax(logits.to(dtype), dim=1)
        dev = (p.double().sum(1) - 1).abs().max().item()
        assert dev > 1e-4 or dtype == torch.bfloat16  # fp16 rows are off by more than the float32 tolerance
        y = torch.randint(0, 10, (2000,), generator=torch.Generator().manual_seed(1))
        ours = tc.top_label_ece(p, y)
        assert ours == pytest.approx(
            tc.top_label_ece(p.double() / p.double().sum(1, keepdim=True), y), abs=5e-3
        )
    with pytest.raises(ValueError, match=r"tolerance 0\.0001"):  # float32 keeps the strict tolerance
        tc.top_label_ece((torch.softmax(logits, 1) * 1.001).numpy(), torch.zeros(2000, dtype=torch.long))
