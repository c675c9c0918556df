"""Bad input gets a clear one-line error from the package's own checks, naming the argument.

A battery: every exported function, called with each kind of invalid argument it can receive.
Every case must raise TypeError or ValueError whose message starts with ``<argument>: ``.
"""

import numpy as np
import pytest

import paperworks.truthful_calibration as tc

P = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]])
Y = np.array([1, 0, 1])
PROBS_LABELS = [
    tc.truthful_classwise_error,
    tc.truthful_multiclass_error,
    tc.truthful_confidence_error,
    tc.top_label_ece,
    tc.classwise_ece,
    tc.smooth_ece,
    tc.classwise_atb,
    tc.multiclass_atb,
    tc.confidence_atb,
    lambda p, y, **kw: tc.truthful_property_error(p, y, np.array([1.0, 0.0]), n_bins=1, **kw),
]
BAD_PROBS_LABELS = [
    (P * 1.1, Y, "probs", "expected every row to sum to 1"),
    (np.array([[1.2, -0.2], [0.6, 0.4], [0.5, 0.5]]), Y, "probs", "expected non-negative"),
    (np.array([[np.nan, 1.0], [0.6, 0.4], [0.5, 0.5]]), Y, "probs", "expected finite"),
    (np.array([[np.inf, 1.0], [0.6, 0.4], [0.5, 0.5]]), Y, "probs", "expected finite"),
    (P[:, :1], Y, "probs", "at least 2 classes"),
    (P[0], Y, "probs", r"expected shape \(n_samples, n_classes\)"),
    (np.zeros((0, 2)), Y[:0], "probs", "expected at least one sample"),
    (P.astype(str), Y, "probs", "expected a real-valued"),
    (P > 0.5, Y, "probs", "expected a real-valued"),
    (None, Y, "probs", "expected a real-valued"),
    ([[0.5, 0.5], [1.0]], Y, "probs", "expected an array"),
    (P, np.array([1, 0, 2]), "labels", r"expected class indices in \[0, 2\)"),
    (P, np.array([1, 0, -1]), "labels", r"expected class indices"),
    (P, Y[:2], "labels", r"expected shape \(3,\)"),
    (P, np.array([0.5, 1.0, 0.0]), "labels", "expected integer class indices"),
    (P, np.array(["a", "b", "c"]), "labels", "expected integer class indices"),
    (P, Y.astype(bool), "labels", "expected integer class indices"),
    (P, None, "labels", "expected integer class indices"),
]


def _raises(call, arg, match=""):
    with pytest.raises((TypeError, ValueError), match=rf"^{arg}: .*{match}") as info:
        call()
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("fn", PROBS_LABELS)
@pytest.mark.parametrize(("probs", "labels", "arg", "match"), BAD_PROBS_LABELS)
def test_bad_probs_and_labels(fn, probs, labels, arg, match):
    _raises(lambda: fn(probs, labels), arg, match)


@pytest.mark.parametrize("fn", PROBS_LABELS)
@pytest.mark.parametrize("atol", [-1.0, "a", float("nan")])
def test_bad_atol(fn, atol):
    _raises(lambda: fn(P, Y, atol=atol), "atol")


P8 = np.tile(P, (4, 1))
Y8 = np.tile(Y, 4)
BAD_OPTIONS = [
    (lambda: tc.truthful_classwise_error(P, Y, n_bins=4), "n_bins", "at least one sample per bin"),
    (lambda: tc.truthful_classwise_error(P, Y, n_bins=0), "n_bins", ">= 1"),
    (lambda: tc.truthful_classwise_error(P, Y, n_bins=2.5), "n_bins", "an int"),
    (lambda: tc.truthful_classwise_error(P, Y, n_bins=True), "n_bins", "an int"),
    (lambda: tc.truthful_multiclass_error(P8, Y8, n_bins=6), "n_bins", "power of two"),
    (lambda: tc.truthful_confidence_error(P, Y, corrected="yes"), "corrected", "a bool"),
    (lambda: tc.confidence_atb(P, Y, corrected=1), "corrected", "a bool"),
    (lambda: tc.top_label_ece(P, Y, binning="quantile"), "binning", "expected one of"),
    (lambda: tc.top_label_ece(P, Y, norm="max"), "norm", "expected one of"),
    (lambda: tc.top_label_ece(P, Y, n_bins=0), "n_bins", ">= 1"),
    (lambda: tc.top_label_ece(P, Y, binning="mass", n_bins=5), "n_bins", "at least one sample"),
    (lambda: tc.classwise_ece(P, Y, binning=3), "binning", "expected one of"),
    (lambda: tc.smooth_ece(P, Y, grid=3), "grid", ">= 8"),
    (lambda: tc.smooth_ece(P, Y, grid=64.0), "grid", "an int"),
    (lambda: tc.truthful_property_error(P, Y, np.eye(3), n_bins=1), "property_matrix", r"shape \(d, 2\)"),
    (lambda: tc.truthful_property_error(P, Y, [[np.nan, 1]], n_bins=1), "property_matrix", "finite"),
    (lambda: tc.truthful_property_error(P, Y, "A", n_bins=1), "property_matrix", "real-valued"),
    (lambda: tc.truthful_property_error(P8, Y8, np.eye(2), n_bins=3), "n_bins", "power of two"),
    (lambda: tc.multiclass_atb(P, Y, np.ones((1, 2))), "property_matrix", "constant"),
    (lambda: tc.multiclass_atb(P, Y, np.eye(3)), "property_matrix", "shape"),
    # binary ATB
    (lambda: tc.binary_atb(P, Y), "scores", "1-d"),
    (lambda: tc.binary_atb(np.array([0.2, np.nan, 0.1]), Y), "scores", "finite"),
    (lambda: tc.binary_atb(np.array([0.2, 1.5, 0.1]), Y), "scores", r"\[0, 1\]"),
    (lambda: tc.binary_atb(np.array(["a", "b"]), Y[:2]), "scores", "real-valued"),
    (lambda: tc.binary_atb(np.array([]), np.array([])), "scores", "non-empty"),
    (lambda: tc.binary_atb(P[:, 0], np.array([0, 2, 1])), "outcomes", "0/1"),
    (lambda: tc.binary_atb(P[:, 0], Y[:2]), "outcomes", "shape"),
    (lambda: tc.binary_atb(P[:, 0], np.array(["a", "b", "c"])), "outcomes", "0/1"),
    # binning helpers
    (lambda: tc.equal_width_bins(np.array([0.1, 0.5]), 0), "n_bins", ">= 1"),
    (lambda: tc.equal_width_bins(np.array([0.1, np.nan]), 5), "scores", "finite"),
    (lambda: tc.equal_width_bins(np.array([0.1, 1.2]), 5), "scores", r"\[0, 1\]"),
    (lambda: tc.equal_width_bins(np.array([-0.1, 0.2]), 5), "scores", r"\[0, 1\]"),
    (lambda: tc.equal_width_bins(np.array([]), 5), "scores", "non-empty"),
    (lambda: tc.equal_width_bins(np.array(["a"]), 5), "scores", "real-valued"),
    (lambda: tc.equal_mass_bins(np.array([0.1, 0.5]), 3), "n_bins", "at least one sample"),
    (lambda: tc.equal_mass_bins(np.array([0.1, np.nan]), 1), "scores", "finite"),
    (lambda: tc.equal_mass_bins(P, 2, axis=2), "axis", "<= 1"),
    (lambda: tc.equal_mass_bins(np.zeros((2, 2, 2)), 1), "scores", "shape"),
    (lambda: tc.equal_mass_bins(np.array([0.1, 0.5]), 1.0), "n_bins", "an int"),
    (lambda: tc.kd_bins(P, 0), "n_bins", ">= 1"),
    (lambda: tc.kd_bins(P, 4), "n_bins", "at least one sample"),
    (lambda: tc.kd_bins(P8, 3), "n_bins", "power of two"),
    (lambda: tc.kd_bins(P[:, 0], 2), "points", "shape"),
    (lambda: tc.kd_bins(np.array([[np.nan, 1.0], [0.5, 0.5]]), 2), "points", "finite"),
    # generated problems
    (lambda: tc.sample_labels(P * 0.5, 2, 0), "q", "summing to 1"),
    (lambda: tc.sample_labels(np.array([[1.5, -0.5], [0.5, 0.5]]), 2, 0), "q", r"\[0, 1\]"),
    (lambda: tc.sample_labels(P, 0, 0), "reps", ">= 1"),
    (lambda: tc.sample_labels(P, 2, "seed"), "rng", "Generator"),
    (lambda: tc.sample_labels(P[0], 2, 0), "q", "shape"),
    (lambda: tc.distort(P * 0.5, "snap", 1), "q", "summing to 1"),
    (lambda: tc.distort(P, "blur", 1), "kind", "expected one of"),
    (lambda: tc.distort(P, "temperature", 0), "level", "> 0"),
    (lambda: tc.distort(P, "temperature", float("inf")), "level", "finite"),
    (lambda: tc.distort(P, "snap", 0), "level", ">= 1"),
    (lambda: tc.distort(P, "snap", 4), "level", "<= 3"),
    (lambda: tc.distort(P, "snap", 1.5), "level", "an int"),
    (lambda: tc.softmax_problem(0, 3, 0), "n", ">= 1"),
    (lambda: tc.softmax_problem(10, 1, 0), "k", ">= 2"),
    (lambda: tc.softmax_problem(10, 3, 0, d=0), "d", ">= 1"),
    (lambda: tc.softmax_problem(10, 3, 0, signal=-1.0), "signal", ">= 0"),
    (lambda: tc.softmax_problem(10, 3, -1), "rng", "non-negative"),
    (lambda: tc.softmax_task(1, 0), "k", ">= 2"),
    (lambda: tc.softmax_task(3, 0).sample(0, 0), "n", ">= 1"),
    (lambda: tc.blackwell_problem(100, 3, 0, n_types=48), "n_types", "power of branching"),
    (lambda: tc.blackwell_problem(100, 3, 0, branching=1), "branching", ">= 2"),
    (lambda: tc.blackwell_problem(100, 3, 0, concentration=0.0), "concentration", "> 0"),
    (lambda: tc.blackwell_problem(0, 3, 0), "n", ">= 1"),
    (lambda: tc.blackwell_problem(100, 3, 0).moments(9), "level", "<= 3"),
    # rankings
    (lambda: tc.kendall_tau([1.0, 2.0], [1.0, 2.0, 3.0]), "b", "shape"),
    (lambda: tc.kendall_tau([[1.0, 2.0]], [1.0, 2.0]), "a", "1-d"),
    (lambda: tc.kendall_tau([1.0, np.nan], [1.0, 2.0]), "a", "finite"),
    (lambda: tc.kendall_tau([1.0], [1.0]), "b", "length >= 2"),
    (lambda: tc.ranking_stability([1.0, 2.0]), "errors", "2-d"),
    (lambda: tc.ranking_stability([[1.0, 2.0]]), "errors", "n_choices >= 2"),
    (lambda: tc.ranking_stability([[1.0, np.nan], [1.0, 2.0]]), "errors", "finite"),
    (lambda: tc.ranking_stability([[1.0, 2.0], [2.0, 1.0]], margin=1.0), "margin", r"\[0, 1\)"),
]


@pytest.mark.parametrize(
    ("call", "arg", "match"), BAD_OPTIONS, ids=[f"{a}-{i}" for i, (_, a, _) in enumerate(BAD_OPTIONS)]
)
def test_bad_options_and_helpers(call, arg, match):
    _raises(call, arg, match)


def test_tolerance_is_adjustable_and_dtype_aware():
    q = P + 1e-3
    _raises(lambda: tc.top_label_ece(q, Y), "probs", "tolerance 0.0001")
    assert tc.top_label_ece(q, Y, atol=1e-2) >= 0
    half = np.array([[0.3, 0.7012], [0.6, 0.4], [0.5, 0.5]], dtype=np.float16)  # off by 1.2e-3 in fp16
    assert tc.top_label_ece(half, Y) >= 0
    _raises(lambda: tc.top_label_ece(half.astype(np.float32), Y), "probs", "tolerance 0.0001")
