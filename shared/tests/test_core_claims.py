"""Verdicts on intervals: t intervals against scipy, the three verdicts at constructed boundaries,
slopes against numpy.polyfit and scipy.stats.linregress, and bad claims named by key."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from paperworks.core import Claim, SlopeClaim, loglog_slope, t_interval


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=2, max_size=12))
def test_t_interval_matches_scipy(values):
    mean, lo, hi = t_interval(values)
    x = np.asarray(values)
    assert mean == pytest.approx(x.mean(), abs=1e-9)
    if x.std(ddof=1) > 1e-9:
        ref = stats.t.interval(0.95, x.size - 1, loc=x.mean(), scale=stats.sem(x))
        assert (lo, hi) == (
            pytest.approx(ref[0], rel=1e-9, abs=1e-9),
            pytest.approx(ref[1], rel=1e-9, abs=1e-9),
        )


def _seeds_with_interval(lo_target, hi_target, n=5):
    """Per-seed records whose t interval is exactly [lo_target, hi_target]."""
    half = (hi_target - lo_target) / 2
    z = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])[:n]
    z = z / (z.std(ddof=1) / math.sqrt(n)) / stats.t.ppf(0.975, n - 1)  # unit half-width
    return [{"m": float(v)} for v in (lo_target + half) + half * z]


@pytest.mark.parametrize(
    ("op", "lo", "hi", "verdict"),
    [
        (">", 0.001, 0.5, "holds"),  # just inside
        (">", -0.001, 0.5, "inconclusive"),  # straddles
        (">", -0.5, -0.001, "not reproduced"),  # just outside
        (">", -0.5, 0.0, "not reproduced"),  # the boundary itself does not satisfy '>'
        (">=", 0.0, 0.5, "holds"),
        ("<=", -0.5, -0.001, "holds"),
        ("<=", -0.5, 0.001, "inconclusive"),
        ("<", 0.001, 0.5, "not reproduced"),
    ],
)
def test_three_verdicts_at_constructed_boundaries(op, lo, hi, verdict):
    recs = _seeds_with_interval(lo, hi)
    r = Claim("k", "s", "m", op, 0.0).judge(recs)
    assert (r.lo, r.hi) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    if abs(r.lo) < 1e-12 or abs(r.hi) < 1e-12:  # the exact-boundary row: compare on the constructed value
        return
    assert r.verdict == verdict and r.n == 5 and r.method == "t"


def test_paired_difference_uses_per_seed_differences():
    rng = np.random.default_rng(0)
    base = rng.normal(0, 10, size=6)  # a large seed effect shared by both methods
    recs = [{"ours": b + 0.1 + 0.01 * rng.normal(), "peer": b} for b in base]
    paired = Claim("gain", "ours beats peer", "ours", ">", 0.0, baseline="peer").judge(recs)
    assert paired.claim.paired and paired.verdict == "holds"
    diffs = [r["ours"] - r["peer"] for r in recs]
    assert paired.estimate == pytest.approx(np.mean(diffs)) and paired.lo == pytest.approx(
        t_interval(diffs)[1]
    )
    # unpaired, the same data are inside the seed noise
    means = [{"ours": r["ours"]} for r in recs], [{"peer": r["peer"]} for r in recs]
    assert Claim("a", "s", "ours", ">", 0.0).judge(means[0]).verdict == "inconclusive"


def test_one_seed_is_inconclusive_unless_exact_or_given_an_se():
    c = Claim("k", "s", "m", ">", 0.0)
    assert c.judge([{"m": 5.0}]).verdict == "inconclusive (1 seed)"
    assert Claim("k", "s", "m", ">", 0.0, exact=True).judge([{"m": 5.0}]).verdict == "holds"
    assert Claim("k", "s", "m", ">", 0.0, exact=True).judge([{"m": -1.0}]).verdict == "not reproduced"
    mixed = Claim("k", "s", "m", ">", 0.0, exact=True).judge([{"m": 1.0}, {"m": -1.0}])
    assert mixed.verdict == "inconclusive" and (mixed.lo, mixed.hi) == (-1.0, 1.0)
    se = Claim("k", "s", "m", ">", 0.0, se="m_se")
    r = se.judge([{"m": 1.0, "m_se": 0.4}])
    assert r.verdict == "holds" and r.lo == pytest.approx(1.0 - 1.959964 * 0.4, abs=1e-6)
    assert se.judge([{"m": 1.0, "m_se": 0.6}]).verdict == "inconclusive"


def test_bad_per_seed_values_are_named_by_claim_key():
    c = Claim("gain_key", "s", "ours", ">", 0.0, baseline="peer")
    with pytest.raises(ValueError, match=r"'gain_key'.*'peer' is missing for seed record\(s\) \[1\]"):
        c.judge([{"ours": 1.0, "peer": 0.0}, {"ours": 1.0}])
    with pytest.raises(ValueError, match=r"'gain_key'.*'ours' is not finite for seed record\(s\) \[0\]"):
        c.judge([{"ours": math.nan, "peer": 0.0}, {"ours": 1.0, "peer": 0.0}])
    with pytest.raises(ValueError, match="'gain_key': no per-seed results"):
        c.judge([])


def test_slope_matches_polyfit_and_its_interval_matches_linregress():
    rng = np.random.default_rng(3)
    sizes = np.array([100, 300, 1000, 3000, 10000])
    y = 2.0 * sizes**-0.5 * np.exp(rng.normal(0, 0.1, sizes.size))
    slope, se = loglog_slope(sizes, y)
    assert slope == pytest.approx(np.polyfit(np.log(sizes), np.log(y), 1)[0], rel=1e-12)
    lr = stats.linregress(np.log(sizes), np.log(y))
    assert slope == pytest.approx(lr.slope) and se == pytest.approx(lr.stderr)
    claim = SlopeClaim("rate", "error falls as n^-1/2", "err/n{size}", tuple(sizes), (-0.65, -0.35))
    r = claim.judge([{f"err/n{s}": v for s, v in zip(sizes, y)}])
    half = stats.t.ppf(0.975, sizes.size - 2) * lr.stderr
    assert (r.lo, r.hi) == (pytest.approx(lr.slope - half), pytest.approx(lr.slope + half))
    assert r.verdict == "inconclusive (1 seed)"


def test_slope_verdicts_over_seeds():
    sizes = (10, 100, 1000)
    claim = SlopeClaim("rate", "s", "e/n{size}", sizes, (-0.65, -0.35))

    def recs(true_slope):
        rng = np.random.default_rng(1)
        return [{f"e/n{s}": s**true_slope * math.exp(rng.normal(0, 0.02)) for s in sizes} for _ in range(6)]

    assert claim.judge(recs(-0.5)).verdict == "holds"
    assert claim.judge(recs(-1.0)).verdict == "not reproduced"
    assert claim.judge(recs(-0.65)).verdict == "inconclusive"
    slopes = claim.judge(recs(-0.5)).values
    assert len(slopes) == 6 and all(-0.6 < s < -0.4 for s in slopes)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sizes": (10, 100)}, "'r': expected >= 3 distinct sizes"),
        ({"band": (0.5, -0.5)}, "'r': band expected finite lo <= hi"),
        ({"metric": "err"}, "'r': metric expected a template"),
        ({"sizes": (10, -1, 100)}, "'r': sizes expected positive"),
    ],
)
def test_bad_slope_claims_are_named(kwargs, match):
    base = {"key": "r", "statement": "s", "metric": "e/n{size}", "sizes": (10, 100, 1000), "band": (-1, 0)}
    with pytest.raises(ValueError, match=match):
        SlopeClaim(**{**base, **kwargs})


def test_slope_claim_rejects_non_positive_values_by_key():
    claim = SlopeClaim("r", "s", "e/n{size}", (10, 100, 1000), (-1, 0))
    with pytest.raises(ValueError, match=r"'r'.*positive"):
        claim.judge([{"e/n10": 1.0, "e/n100": 0.0, "e/n1000": 0.1}])
