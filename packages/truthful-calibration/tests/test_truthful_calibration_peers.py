"""Our binned ECE against torchmetrics on the same bins; tensors in; stateful classes."""

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
    for fn in (tc.truthful_classwise_error, tc.truthful_multiclass_error, tc.top_label_ece, tc.smooth_ece):
        assert fn(torch.from_numpy(p), torch.from_numpy(y)) == pytest.approx(fn(p, y), rel=1e-12)


def test_metric_classes_accumulate_like_the_functions():
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(5), size=300)
    y = rng.integers(0, 5, size=300)
    pairs = [
        (tc.TruthfulClasswiseError(n_bins=10), tc.truthful_classwise_error, {"n_bins": 10}),
        (tc.TruthfulMulticlassError(n_bins=8), tc.truthful_multiclass_error, {"n_bins": 8}),
        (tc.TruthfulConfidenceError(5), tc.truthful_confidence_error, {}),
        (tc.TopLabelECE(binning="mass"), tc.top_label_ece, {"binning": "mass"}),
        (tc.ClasswiseECE(), tc.classwise_ece, {}),
        (tc.SmoothECE(), tc.smooth_ece, {}),
        (tc.TruthfulPropertyError(np.eye(5)[:2], n_bins=4), None, {}),
    ]
    for metric, fn, kw in pairs:
        batch_val = metric(torch.from_numpy(p[:100]), torch.from_numpy(y[:100]))
        metric.update(p[100:], y[100:])
        full = metric.compute()
        if fn is not None:
            assert full == pytest.approx(fn(p, y, **kw), rel=1e-12)
            assert batch_val == pytest.approx(fn(p[:100], y[:100], **kw), rel=1e-12)
        else:
            assert full == pytest.approx(tc.truthful_property_error(p, y, np.eye(5)[:2], n_bins=4))
        metric.reset()
        with pytest.raises(ValueError, match="no samples"):
            metric.compute()


def test_smooth_ece_is_small_for_calibrated_and_large_for_overconfident():
    rng = np.random.default_rng(2)
    q = tc.softmax_problem(5000, 3, rng)
    y = tc.sample_labels(q, 1, rng)[0]
    assert tc.smooth_ece(q, y) < 0.03
    assert tc.smooth_ece(tc.distort(q, "temperature", 0.3), y) > 0.1
