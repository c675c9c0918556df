import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from paperworks.tg_replay import (
    MatchedWindowSampler,
    RecencyWindowSampler,
    TruncatedGeometricSampler,
    UniformSampler,
    expected_recency,
    make_sampler,
    sampler_from_state,
    sampling_entropy,
    truncated_geometric_mean,
)


@pytest.mark.parametrize(("p", "n"), [(0.05, 40), (0.3, 25), (0.01, 60), (0.002, 30)])
def test_tg_empirical_distribution_matches_pmf_chi_square(p, n):
    s = TruncatedGeometricSampler(p)
    ages = s.sample(n, 200_000, rng=np.random.default_rng(1))
    observed = np.bincount(ages, minlength=n)
    expected = s.pmf(n) * ages.size
    # merge sparse tail bins so every expected count is >= 5
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    assert stats.chisquare(obs, exp).pvalue > 1e-3


def test_tg_pmf_is_the_truncated_geometric_formula():
    p, n = 0.1, 17
    a = np.arange(n)
    brute = p * (1 - p) ** a
    np.testing.assert_allclose(TruncatedGeometricSampler(p).pmf(n), brute / brute.sum(), rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(p=st.floats(1e-4, 1.0), n=st.integers(1, 3000))
def test_tg_closed_forms_match_the_pmf(p, n):
    s = TruncatedGeometricSampler(p)
    pmf = s.pmf(n)
    assert math.isclose(pmf.sum(), 1.0, rel_tol=1e-9)
    assert math.isclose(s.expected_recency(n), expected_recency(pmf), rel_tol=1e-7, abs_tol=1e-7)
    assert math.isclose(s.entropy(n), sampling_entropy(pmf), rel_tol=1e-7, abs_tol=1e-7)
    # recency bias: never older on average than uniform, never more entropy than uniform
    assert s.expected_recency(n) <= (n - 1) / 2 + 1e-7
    assert s.entropy(n) <= math.log(n) + 1e-9


def _mp_mean(p: float, n: int) -> float:
    import mpmath as mp

    with mp.workdps(80):
        pp = mp.mpf(p)
        q = 1 - pp
        return float(q / pp - n * q**n / (1 - q**n))


@pytest.mark.parametrize("p", [1e-15, 1e-12, 1e-9, 1e-6, 1e-3, 0.1, 0.39, 0.4, 0.5, 0.9, 1 - 1e-9])
@pytest.mark.parametrize("n", [2, 3, 10, 1000, 10**6, 10**9])
def test_stable_expected_age_matches_mpmath(p, n):
    pytest.importorskip("mpmath")
    exact = _mp_mean(p, n)
    assert math.isclose(truncated_geometric_mean(p, n), exact, rel_tol=5e-15)
    assert math.isclose(TruncatedGeometricSampler(p).expected_recency(n), exact, rel_tol=5e-15)


def test_small_p_expected_age_matches_its_series():
    # independent route without mpmath: E = (n-1)/2 - (n^2-1) c / 12 + O(c^3) with c = -log(1-p)
    for n in (2, 10, 1000):
        for p in (1e-12, 1e-10):
            c = -math.log1p(-p)
            series = (n - 1) / 2 - (n * n - 1) * c / 12
            assert math.isclose(truncated_geometric_mean(p, n), series, rel_tol=1e-14)
    # the textbook form loses digits here (relative error ~1e-5 at p = 1e-12): the stable one does not
    p, n = 1e-12, 1000
    q = 1 - p
    naive = q / p - n * q**n / (1 - q**n)
    exact = (n - 1) / 2 - (n * n - 1) * (-math.log1p(-p)) / 12
    assert abs(naive - exact) / exact > 1e-7
    assert abs(truncated_geometric_mean(p, n) - exact) / exact < 1e-14


def test_entropy_tends_to_log_n_as_p_vanishes():
    for n in (2, 100, 10**6):
        assert math.isclose(TruncatedGeometricSampler(1e-15).entropy(n), math.log(n), rel_tol=1e-9)


@pytest.mark.parametrize(
    ("mu", "n"), [(0.0, 5), (0.001, 10), (3.0, 100), (49.0, 100), (1e5, 10**6), (10.0, 10**9)]
)
def test_from_expected_recency_hits_the_truncated_target(mu, n):
    s = TruncatedGeometricSampler.from_expected_recency(mu, n)
    got = s.expected_recency(n)
    assert math.isclose(got, mu, rel_tol=1e-12, abs_tol=1e-12)
    # and the untruncated constructor does not, once the buffer truncates the law
    if 0 < mu and n < 10 * mu:
        assert abs(TruncatedGeometricSampler.from_expected_age(mu).expected_recency(n) - mu) > 1e-3 * mu


def test_from_expected_recency_rejects_unreachable_targets():
    with pytest.raises(ValueError, match=r"mean_age: expected a number in \[0, \(size - 1\)/2"):
        TruncatedGeometricSampler.from_expected_recency(4.5, 10)  # (n-1)/2: uniform
    with pytest.raises(ValueError, match="mean_age"):
        TruncatedGeometricSampler.from_expected_recency(-1.0, 10)
    with pytest.raises(ValueError, match="mean_age"):
        TruncatedGeometricSampler.from_expected_recency(float("nan"), 10)
    with pytest.raises(ValueError, match="size"):
        TruncatedGeometricSampler.from_expected_recency(1.0, 0)


@pytest.mark.parametrize(("p", "n"), [(0.01, 500), (0.2, 50), (1e-4, 10_000)])
def test_tg_closed_forms_match_monte_carlo(p, n):
    s = TruncatedGeometricSampler(p)
    ages = s.sample(n, 400_000, rng=np.random.default_rng(7))
    se = ages.std() / math.sqrt(ages.size)
    assert abs(ages.mean() - s.expected_recency(n)) < 5 * se
    freq = np.bincount(ages, minlength=n) / ages.size
    nz = freq[freq > 0]
    plug_in = -(nz * np.log(nz)).sum()
    # plug-in entropy is biased low by about (support - 1) / (2 N)
    assert abs(plug_in - s.entropy(n)) < 0.01 + n / ages.size


def test_tg_limits_uniform_and_newest():
    n = 100
    near_uniform = TruncatedGeometricSampler(1e-9)
    assert math.isclose(near_uniform.expected_recency(n), (n - 1) / 2, rel_tol=1e-6)
    assert math.isclose(near_uniform.entropy(n), math.log(n), rel_tol=1e-6)
    newest = TruncatedGeometricSampler(1.0)
    assert newest.expected_recency(n) == 0.0 and newest.entropy(n) == 0.0
    assert np.all(newest.sample(n, 10) == 0)


def test_from_expected_age_targets_the_untruncated_mean():
    s = TruncatedGeometricSampler.from_expected_age(50.0)
    assert math.isclose(s.expected_recency(10**6), 50.0, rel_tol=1e-9)


def test_uniform_and_window_closed_forms():
    u = UniformSampler()
    assert u.expected_recency(11) == 5.0 and math.isclose(u.entropy(11), math.log(11))
    w = RecencyWindowSampler(8)
    assert w.expected_recency(100) == 3.5 and math.isclose(w.entropy(100), math.log(8))
    assert w.expected_recency(4) == 1.5  # window larger than the buffer = whole buffer
    ages = w.sample(100, 10_000, rng=0)
    assert ages.max() == 7 and ages.min() == 0


def test_matched_window_has_tg_recency_and_lower_entropy():
    tg = TruncatedGeometricSampler.from_expected_age(100.0)
    for n in (50, 300, 5000):
        win = MatchedWindowSampler(tg)
        assert abs(win.expected_recency(n) - tg.expected_recency(n)) <= 0.5
        assert win.entropy(n) < tg.entropy(n)
        assert math.isclose(win.expected_recency(n), expected_recency(win.pmf(n)))
    assert RecencyWindowSampler.matched_to(tg, 5000).window == MatchedWindowSampler(tg).window(5000)


def test_geometric_is_max_entropy_at_matched_mean():
    # at (nearly) equal expected recency the truncated geometric has more entropy than any window
    tg = TruncatedGeometricSampler(0.02)
    n = 2000
    mu = tg.expected_recency(n)
    w = RecencyWindowSampler(round(2 * mu + 1))
    assert tg.entropy(n) - w.entropy(n) > 0.25


def test_seeded_determinism_and_without_replacement():
    s = TruncatedGeometricSampler(0.05)
    a = s.sample(100, 64, rng=np.random.default_rng(3))
    b = s.sample(100, 64, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    c = s.sample(100, 100, rng=0, replace=False)
    assert np.array_equal(np.sort(c), np.arange(100))


def test_every_sampler_has_its_own_name_and_state_round_trip():
    tg = TruncatedGeometricSampler(0.01)
    samplers = [UniformSampler(), tg, RecencyWindowSampler(12), MatchedWindowSampler(tg)]
    names = [s.name for s in samplers]
    assert len(set(names)) == len(names) == 4
    for s in samplers:
        back = sampler_from_state(s.state_dict())
        assert type(back) is type(s) and back == s and back.state_dict() == s.state_dict()
        for n in (1, 7, 5000):  # the rebuilt sampler is the same distribution
            np.testing.assert_array_equal(back.pmf(n), s.pmf(n))
        s.load_state_dict(s.state_dict())
    with pytest.raises(ValueError, match="state_dict: describes"):
        tg.load_state_dict(TruncatedGeometricSampler(0.5).state_dict())
    with pytest.raises(ValueError, match="state_dict"):
        sampler_from_state({"name": "tg"})
    assert make_sampler("matched_window", mean_age=99.0) == MatchedWindowSampler(
        TruncatedGeometricSampler.from_expected_age(99.0)
    )
    assert make_sampler("tg", mean_age=10.0, size=100) == TruncatedGeometricSampler.from_expected_recency(
        10.0, 100
    )


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, float("nan"), float("inf")])
def test_tg_parameter_out_of_range(bad):
    with pytest.raises(ValueError, match=r"p: .*\(0, 1\]"):
        TruncatedGeometricSampler(bad)


def test_bad_sampling_requests():
    s = TruncatedGeometricSampler(0.1)
    with pytest.raises(ValueError, match="empty buffer"):
        s.sample(0, 4)
    with pytest.raises(ValueError, match="without replacement"):
        s.sample(10, 11, replace=False)
    with pytest.raises(ValueError, match="batch_size"):
        s.sample(10, 0)
    with pytest.raises(TypeError, match="p"):
        TruncatedGeometricSampler("0.1")
    with pytest.raises(ValueError, match="window"):
        RecencyWindowSampler(0)
    with pytest.raises(ValueError, match="unknown sampler"):
        make_sampler("rank")
    assert isinstance(make_sampler("tg", mean_age=10), TruncatedGeometricSampler)


def test_resolve_sampler_for_the_buffer_adapters():
    from paperworks.tg_replay.samplers import UniformSampler, resolve_sampler

    tg = resolve_sampler(0.1, None)
    assert isinstance(tg, TruncatedGeometricSampler) and tg.p == 0.1
    given = UniformSampler()
    assert resolve_sampler(None, given) is given
    with pytest.raises(ValueError, match="p: pass the TG parameter"):
        resolve_sampler(None, None)
    with pytest.raises(TypeError, match=r"sampler: expected a paperworks\.tg_replay Sampler, got str"):
        resolve_sampler(None, "uniform")
