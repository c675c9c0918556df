"""ATB against brute force, and truthfulness of every truthful error by exact expectation.

The exact expectations enumerate every label vector of a small problem (n = 6 samples, k = 3
classes: 729 vectors, each weighted by its probability under the true distributions), so no
sampling noise is involved: truthful errors must be minimised by the truth, ATB strictly (except
for a report that pools samples at one value whose pooled bias is zero, such as the group mean).
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import paperworks.truthful_calibration as tc
from paperworks.truthful_calibration import atb as A
from paperworks.truthful_calibration import truthful as T
from paperworks.truthful_calibration.standard import _top_label_batched


def _brute_binary(s, r, lo=0.0, hi=1.0):
    """Integrate the two-bin error piecewise: one threshold per gap between distinct sorted scores,
    the bins formed by explicit comparisons. r: residuals (n,) or (n, d)."""
    r = np.asarray(r, dtype=float).reshape(len(s), -1)
    cuts = sorted({lo, hi, *map(float, s)})
    total = 0.0
    for a, b in itertools.pairwise(cuts):
        t = (a + b) / 2
        left = [i for i in range(len(s)) if s[i] < t]
        right = [i for i in range(len(s)) if s[i] >= t]
        sq = sum(float(np.sum(r[idx].sum(axis=0) ** 2)) for idx in (left, right) if idx)
        total += (b - a) * sq
    return total / len(s) ** 2 / (hi - lo)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_atb_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, k = 23, 4
    p = rng.dirichlet(np.ones(k), size=n)
    p[3] = p[5]  # a tie between reports
    y = rng.integers(0, k, size=n)
    onehot = np.eye(k)[y]
    s = p[:, 1]
    assert tc.binary_atb(s, y == 1) == pytest.approx(_brute_binary(s, s - (y == 1)), rel=1e-12)
    cw = np.mean([_brute_binary(p[:, c], p[:, c] - onehot[:, c]) for c in range(k)])
    assert tc.classwise_atb(p, y) == pytest.approx(cw, rel=1e-12)
    mc = np.mean([_brute_binary(p[:, j], p - onehot) for j in range(k)])
    assert tc.multiclass_atb(p, y) == pytest.approx(mc, rel=1e-12)
    a = rng.normal(size=(2, k))
    v = p @ a.T
    prop = np.mean([_brute_binary(v[:, j], v - onehot @ a.T, a[j].min(), a[j].max()) for j in range(2)])
    assert tc.multiclass_atb(p, y, a) == pytest.approx(prop, rel=1e-12)
    conf, hit = p.max(1), (p.argmax(1) == y).astype(float)
    expected = _brute_binary(conf, conf - hit) + (1 - hit).sum() / n**2
    assert tc.confidence_atb(p, y) == pytest.approx(expected, rel=1e-12)
    assert tc.confidence_atb(p, y, corrected=False) == pytest.approx(
        _brute_binary(conf, conf - hit), rel=1e-12
    )


def test_atb_identities():
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(2), size=50)
    y = rng.integers(0, 2, size=50)
    b = tc.binary_atb(p[:, 1], y)
    assert tc.multiclass_atb(p, y) == pytest.approx(2 * b, rel=1e-12)  # ||e_y - p||^2 = 2 (y - p_1)^2
    assert tc.classwise_atb(p, y) == pytest.approx(b, rel=1e-12)
    p5 = rng.dirichlet(np.ones(5), size=80)
    y5 = rng.integers(0, 5, size=80)
    assert tc.multiclass_atb(p5, y5) >= tc.classwise_atb(p5, y5)  # diagonal part plus cross terms
    assert tc.binary_atb(np.array([0.3, 0.3]), np.array([0.3, 0.3]) > 1) > 0
    assert tc.binary_atb(np.ones(4), np.ones(4)) == 0.0


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 5))
def test_atb_permutation_invariant_and_nonnegative(seed, k):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k), size=30)
    y = rng.integers(0, k, size=30)
    perm = rng.permutation(30)
    for fn in (tc.classwise_atb, tc.multiclass_atb, tc.confidence_atb):
        a, b = fn(p, y), fn(p[perm], y[perm])
        assert a >= 0 and a == pytest.approx(b, rel=1e-12, abs=1e-15)


# -- exact expectations by enumeration ---------------------------------------------------------------

N, K = 6, 3
LABELS = np.array(list(itertools.product(range(K), repeat=N)))  # (729, 6): every label vector


def _exact(fn, p, q):
    """E_{y ~ q}[fn(p, y)], summing over every label vector."""
    w = np.prod(q[np.arange(N), LABELS], axis=1)
    return float(w @ fn(p, LABELS))


A2 = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, -1.0]])
TRUTHFUL = {
    "tce_classwise_m2": lambda p, y: T._classwise_batched(p, y, 2),
    "tce_classwise_m3": lambda p, y: T._classwise_batched(p, y, 3),
    "tce_multiclass_m2": lambda p, y: T._property_batched(p, y, np.eye(K), 2),
    "tce_property_1d": lambda p, y: T._property_batched(p, y, A2[:1], 3),
    "tce_property_2d": lambda p, y: T._property_batched(p, y, A2, 2),
    "tce_confidence_m2": lambda p, y: T._confidence_batched(p, y, 2),
    "atb_classwise": A._classwise_batched,
    "atb_multiclass": lambda p, y: A._property_batched(p, y, np.eye(K)),
    "atb_property": lambda p, y: A._property_batched(p, y, A2),
    "atb_confidence": A._confidence_batched,
}
STRICT = ("atb_classwise", "atb_multiclass", "atb_property")


def _reports(q, rng):
    out = {
        "sharp": tc.distort(q, "temperature", 0.5),
        "flat": tc.distort(q, "temperature", 2.0),
        "snap1": tc.distort(q, "snap", 1),
        "snap2": tc.distort(q, "snap", 2),
    }
    for i in range(6):
        out[f"random{i}"] = rng.dirichlet(np.ones(K), size=N)
    out["nudged"] = np.clip(q + rng.normal(scale=0.02, size=q.shape), 0.01, None)
    out["nudged"] /= out["nudged"].sum(1, keepdims=True)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("name", list(TRUTHFUL))
def test_every_truthful_error_is_minimised_by_the_truth_exactly(name, seed):
    rng = np.random.default_rng(seed)
    q = rng.dirichlet(np.ones(K), size=N)
    fn = TRUTHFUL[name]
    truth = _exact(fn, q, q)
    for rep, p in _reports(q, rng).items():
        other = _exact(fn, p, q)
        assert truth <= other + 1e-14, (rep, truth, other)
        if name in STRICT and not rep.startswith("snap"):  # pooled reports with zero pooled bias tie
            assert truth < other - 1e-12, (rep, truth, other)


def test_atb_expectation_has_the_closed_form():
    """E[ATB] = deterministic ATB of the bias (p - q) + 1/n^2 sum_i Var(y_i), per class."""
    rng = np.random.default_rng(7)
    q = rng.dirichlet(np.ones(K), size=N)
    p = tc.distort(q, "temperature", 0.7)
    closed = np.mean(
        [
            A._atb_sorted(p[:, c], (p[:, c] - q[:, c])[None, :])[0] + (q[:, c] * (1 - q[:, c])).sum() / N**2
            for c in range(K)
        ]
    )
    assert _exact(A._classwise_batched, p, q) == pytest.approx(closed, rel=1e-12)


def test_the_plain_errors_are_not_truthful_exactly():
    """The uncorrected confidence errors and the standard ECE: some report beats the truth in expectation."""
    rng = np.random.default_rng(11)
    q = np.array([[0.5, 0.3, 0.2], [0.45, 0.35, 0.2], [0.4, 0.35, 0.25]] * 2)
    plain = {
        "uncorrected binned": lambda p, y: T._confidence_batched(p, y, 2, corrected=False),
        "uncorrected ATB": lambda p, y: A._confidence_batched(p, y, corrected=False),
        "ece_width": lambda p, y: _top_label_batched(p, y, 5, "width", "l1"),
    }
    lie = np.tile([[0.2, 0.2, 0.6]], (N, 1))  # names an unlikely class with confidence 0.6
    median = np.tile([[0.5, 0.3, 0.2]], (N, 1))  # the l1 ECE rewards the median number of hits, not the mean
    for name, fn in plain.items():
        reports = [lie, median, *_reports(q, rng).values()]
        assert min(_exact(fn, p, q) for p in reports) < _exact(fn, q, q), name
