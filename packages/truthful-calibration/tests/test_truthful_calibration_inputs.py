"""Bad input gets a clear error naming the argument."""

import numpy as np
import pytest

import paperworks.truthful_calibration as tc

P = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]])
Y = np.array([1, 0, 1])
FUNCS = [
    tc.truthful_classwise_error,
    tc.truthful_confidence_error,
    tc.top_label_ece,
    tc.classwise_ece,
    tc.smooth_ece,
]


@pytest.mark.parametrize("fn", FUNCS)
@pytest.mark.parametrize(
    ("probs", "labels", "exc", "match"),
    [
        (P * 1.1, Y, ValueError, "probs: expected every row to sum to 1"),
        (np.array([[1.2, -0.2], [0.6, 0.4], [0.5, 0.5]]), Y, ValueError, "probs: expected non-negative"),
        (np.array([[np.nan, 1.0], [0.6, 0.4], [0.5, 0.5]]), Y, ValueError, "probs: expected finite"),
        (P[:, :1], Y, ValueError, "at least 2 classes"),
        (P[0], Y, ValueError, r"probs: expected shape \(n_samples, n_classes\)"),
        (np.zeros((0, 2)), Y[:0], ValueError, "probs: expected at least one sample"),
        (P.astype(str), Y, TypeError, "probs: expected a real-valued"),
        (P, np.array([1, 0, 2]), ValueError, r"labels: expected class indices in \[0, 2\)"),
        (P, np.array([1, 0, -1]), ValueError, r"labels: expected class indices"),
        (P, Y[:2], ValueError, r"labels: expected shape \(3,\)"),
        (P, np.array([0.5, 1.0, 0.0]), TypeError, "labels: expected integer class indices"),
    ],
)
def test_bad_inputs(fn, probs, labels, exc, match):
    with pytest.raises(exc, match=match):
        fn(probs, labels)


def test_too_few_samples_and_bad_options():
    with pytest.raises(
        ValueError, match="n_bins: the estimator needs at least one sample per bin, got 3 samples"
    ):
        tc.truthful_classwise_error(P, Y, n_bins=4)
    with pytest.raises(ValueError, match="power of two"):
        tc.truthful_multiclass_error(np.tile(P, (4, 1)), np.tile(Y, 4), n_bins=6)
    with pytest.raises(ValueError, match="binning: expected one of"):
        tc.top_label_ece(P, Y, binning="quantile")
    with pytest.raises(ValueError, match="norm: expected one of"):
        tc.top_label_ece(P, Y, norm="max")
    with pytest.raises(TypeError, match="n_bins: expected a positive int"):
        tc.top_label_ece(P, Y, n_bins=2.5)
    with pytest.raises(ValueError, match=r"property_matrix: expected shape \(d, 2\)"):
        tc.truthful_property_error(P, Y, np.eye(3), n_bins=1)
    with pytest.raises(ValueError, match="probs: expected 2 classes"):
        m = tc.TopLabelECE(num_classes=2)
        m.update(np.full((2, 3), 1 / 3), np.array([0, 1]))
    with pytest.raises(ValueError, match="num_classes"):
        tc.TruthfulClasswiseError(num_classes=1)


def test_tolerance_is_adjustable():
    q = P + 1e-3
    with pytest.raises(ValueError):
        tc.top_label_ece(q, Y)
    assert tc.top_label_ece(q, Y, atol=1e-2) >= 0
