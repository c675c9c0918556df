"""The mathematics of the truthful errors, each against an independent route."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import paperworks.truthful_calibration as tc
from paperworks.truthful_calibration.truthful import (
    _classwise_batched,
    _confidence_batched,
    _property_batched,
)


def _brute_classwise(p, y, m):
    """Loop over classes and bins: sum_B (sum_{i in B} ([y=c] - p_c))^2 / (n * n/m), mean over c."""
    n, k = p.shape
    total = 0.0
    for c in range(k):
        order = sorted(range(n), key=lambda i: (p[i, c], i))
        for b in range(m):
            block = order[b * n // m : (b + 1) * n // m]
            total += sum((y[i] == c) - p[i, c] for i in block) ** 2
    return total / (n * (n / m)) / k


def _expected(p, q, kind, m):
    """Closed form E_y[error] = (bias term + variance term) * m / n^2 (module docstring)."""
    n, k = p.shape
    if kind == "classwise":
        bins = tc.equal_mass_bins(p, m, axis=0)
        tot = 0.0
        for c in range(k):
            bias = np.bincount(bins[:, c], q[:, c] - p[:, c], m)
            tot += (bias**2).sum() + (q[:, c] * (1 - q[:, c])).sum()
        return tot * m / n**2 / k
    if kind == "multiclass":
        bins = tc.kd_bins(p, m)
        bias = np.stack([np.bincount(bins, q[:, c] - p[:, c], m) for c in range(k)], 1)
        return ((bias**2).sum() + (1 - (q**2).sum(1)).sum()) * m / n**2
    top = p.argmax(1)
    conf = p[np.arange(n), top]
    qt = q[np.arange(n), top]
    bins = tc.equal_mass_bins(conf, m)
    bias = np.bincount(bins, qt - conf, m)
    return ((bias**2).sum() + (qt * (1 - qt)).sum() + (1 - qt).sum()) * m / n**2


def test_classwise_matches_brute_force_loop():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4), size=60)
    y = rng.integers(0, 4, size=60)
    assert tc.truthful_classwise_error(p, y, n_bins=6) == pytest.approx(_brute_classwise(p, y, 6), rel=1e-12)


def test_property_rows_average_to_classwise():
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(3), size=90)
    y = rng.integers(0, 3, size=90)
    per_class = [tc.truthful_property_error(p, y, np.eye(3)[c], n_bins=5) for c in range(3)]
    assert np.mean(per_class) == pytest.approx(tc.truthful_classwise_error(p, y, n_bins=5), rel=1e-12)


@pytest.mark.parametrize("kind", ["classwise", "multiclass", "confidence"])
def test_monte_carlo_mean_matches_closed_form(kind):
    rng = np.random.default_rng(2)
    q = tc.softmax_problem(400, 4, rng)
    p = tc.distort(q, "temperature", 0.7)
    y = tc.sample_labels(q, 2000, rng)
    fn = {
        "classwise": lambda: _classwise_batched(p, y, 8),
        "multiclass": lambda: _property_batched(p, y, np.eye(4), 8),
        "confidence": lambda: _confidence_batched(p, y, 8),
    }[kind]
    v = fn()
    se = v.std(ddof=1) / np.sqrt(v.size)
    assert abs(v.mean() - _expected(p, q, kind, 8)) < 4 * se


@pytest.fixture(scope="module")
def gamed():
    rng = np.random.default_rng(3)
    q = tc.softmax_problem(1200, 5, rng)
    y = tc.sample_labels(q, 150, rng)
    preds = {
        "truth": q,
        "sharp": tc.distort(q, "temperature", 0.7),
        "flat": tc.distort(q, "temperature", 1.4),
    }
    preds |= {"snap1": tc.distort(q, "snap", 1), "snap4": tc.distort(q, "snap", 4)}
    return y, preds


def _z(d):
    return d.mean() / (d.std(ddof=1) / np.sqrt(d.size))


@pytest.mark.parametrize(
    "fn",
    [
        lambda p, y: _classwise_batched(p, y, 10),
        lambda p, y: _property_batched(p, y, np.eye(p.shape[1]), 8),
        lambda p, y: _confidence_batched(p, y, 10),
    ],
    ids=["classwise", "multiclass", "confidence_corrected"],
)
def test_truth_minimises_expected_truthful_error(gamed, fn):
    y, preds = gamed
    truth = fn(preds["truth"], y)
    for name, p in preds.items():
        if name != "truth":
            assert _z(fn(p, y) - truth) > -3, name


def test_standard_ece_and_uncorrected_confidence_are_gamed(gamed):
    from paperworks.truthful_calibration.standard import _top_label_batched

    y, preds = gamed
    ece = lambda p: _top_label_batched(p, y, 15, "width", "l1")  # noqa: E731
    assert _z(ece(preds["snap1"]) - ece(preds["truth"])) < -3
    plain = lambda p: _confidence_batched(p, y, 10, corrected=False)  # noqa: E731
    assert min(_z(plain(preds[s]) - plain(preds["truth"])) for s in ("snap1", "snap4")) < -3


def test_bin_sizes_and_label_independence():
    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.ones(4), size=203)
    for bins in (tc.kd_bins(p, 16), tc.equal_mass_bins(p[:, 0], 16)):
        sizes = np.bincount(bins, minlength=16)
        assert set(sizes) <= {203 // 16, 203 // 16 + 1}
    w = tc.equal_width_bins(np.array([0.0, 0.0999, 0.1, 0.95, 1.0]), 10)
    assert w.tolist() == [0, 0, 1, 9, 9]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 6), st.integers(1, 8))
def test_permutation_invariance_and_nonnegativity(seed, k, m):
    rng = np.random.default_rng(seed)
    n = 40
    p = rng.dirichlet(np.ones(k), size=n)
    y = rng.integers(0, k, size=n)
    perm = rng.permutation(n)
    for fn in (tc.truthful_classwise_error, tc.truthful_confidence_error):
        a, b = fn(p, y, n_bins=m), fn(p[perm], y[perm], n_bins=m)
        assert a >= 0
        assert a == pytest.approx(b, rel=1e-9, abs=1e-15)


def test_perfect_predictions_give_zero_bias_only():
    y = np.array([0, 1, 2, 1, 0, 2])
    p = np.eye(3)[y]
    assert tc.truthful_classwise_error(p, y, n_bins=2) == 0.0
    assert tc.top_label_ece(p, y) == 0.0
    assert tc.truthful_confidence_error(p, y, n_bins=3) == 0.0


def test_kendall_tau_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(6)
    a, b = rng.integers(0, 4, 12).astype(float), rng.normal(size=12)
    assert tc.kendall_tau(a, b) == pytest.approx(stats.kendalltau(a, b).statistic, rel=1e-12)
    tau, flip = tc.ranking_stability(np.array([[1.0, 2, 3], [1, 3, 2]]))
    assert tau == pytest.approx(1 / 3) and flip == pytest.approx(1 / 3)


def test_material_flips_need_a_decisive_gap_under_both_bin_counts():
    decisive = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 3.0]])  # models 0 and 1 swap with a 50% gap
    near_tie = np.array([[1.0, 1.05, 3.0], [1.05, 1.0, 3.0]])  # the same swap with a 5% gap
    assert tc.ranking_stability(decisive)[1] == pytest.approx(1 / 3)
    assert tc.ranking_stability(decisive, margin=0.1)[1] == pytest.approx(1 / 3)
    assert tc.ranking_stability(near_tie)[1] == pytest.approx(1 / 3)
    assert tc.ranking_stability(near_tie, margin=0.1)[1] == 0.0
    one_sided = np.array([[1.0, 2.0, 3.0], [1.05, 1.0, 3.0]])  # decisive under one bin count only
    assert tc.ranking_stability(one_sided, margin=0.1)[1] == 0.0
