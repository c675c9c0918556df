"""Closed forms of the Gaussian signal model against Monte Carlo and root finding."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.stats import norm

from paperworks.pandoras_router import (
    expected_excess,
    expected_excess_inv,
    lower_reservation_value,
    posterior_mean,
    preposterior_std,
    reservation_value,
    value_of_information,
)


def test_expected_excess_matches_quadrature_and_inverse():
    z = np.array([-8.0, -2.0, -0.5, 0.0, 0.7, 3.0, 9.0])
    ref = norm.pdf(z) - z * norm.sf(z)
    assert np.allclose(expected_excess(z), ref, rtol=1e-12, atol=0)
    ratio = np.geomspace(1e-200, 50, 400)
    assert np.allclose(expected_excess(expected_excess_inv(ratio)), ratio, rtol=1e-10)


def test_reservation_value_against_monte_carlo():
    rng = np.random.default_rng(0)
    m, s, tau, c = 0.3, 0.2, 0.1, 0.01
    # preposterior: simulate V, Y and the posterior mean, not the closed-form law
    v = m + s * rng.standard_normal(1_000_000)
    y = v + tau * rng.standard_normal(v.size)
    mu = m + s**2 / (s**2 + tau**2) * (y - m)
    sigma = preposterior_std(np.array([s]), np.array([tau]))[0]
    assert mu.std() == pytest.approx(sigma, rel=5e-3)
    r = reservation_value(np.array([m]), np.array([sigma]), np.array([c]))[0]
    assert np.maximum(mu - r, 0).mean() == pytest.approx(c, rel=2e-2)
    r_lo = lower_reservation_value(np.array([m]), np.array([sigma]), np.array([c]))[0]
    assert np.maximum(r_lo - mu, 0).mean() == pytest.approx(c, rel=2e-2)


def test_reservation_value_against_brentq():
    rng = np.random.default_rng(1)
    m, sig, c = rng.normal(size=20), rng.uniform(0.05, 2, 20), rng.uniform(1e-4, 1.0, 20)
    r = reservation_value(m, sig, c)
    for mi, si, ci, ri in zip(m, sig, c, r):
        ref = brentq(
            lambda t, mi=mi, si=si, ci=ci: si * expected_excess(np.array([(t - mi) / si]))[0] - ci,
            mi - 50,
            mi + 50,
            xtol=1e-13,
        )
        assert ri == pytest.approx(ref, abs=1e-9)


def test_posterior_mean_is_conditional_expectation():
    rng = np.random.default_rng(2)
    m, s, tau = 0.1, 0.3, 0.2
    v = m + s * rng.standard_normal(400_000)
    y = v + tau * rng.standard_normal(v.size)
    mu = posterior_mean(np.full(v.shape, m), np.full(v.shape, s), np.full(v.shape, tau), y)
    # E[V - mu' | Y] = 0: the residual is uncorrelated with Y and has zero mean
    assert abs((v - mu).mean()) < 2e-3
    assert abs(np.corrcoef(v - mu, y)[0, 1]) < 1e-2


@settings(max_examples=60, deadline=None)
@given(
    m=st.floats(-5, 5),
    sigma=st.floats(0.01, 5),
    c=st.floats(1e-4, 3),
    y=st.floats(-10, 10),
)
def test_voi_positive_exactly_inside_the_band(m, sigma, c, y):
    a = lambda x: np.array([x])  # noqa: E731
    r = reservation_value(a(m), a(sigma), a(c))[0]
    voi = value_of_information(a(m), a(sigma), a(c), a(y))[0]
    lo = 2 * m - r
    if lo + 1e-7 < y < r - 1e-7:
        assert voi > -1e-9
    elif y < lo - 1e-7 or y > r + 1e-7:
        assert voi < 1e-9
    # the index falls with cost and rises with the resolvable std
    assert reservation_value(a(m), a(sigma), a(c * 1.5))[0] <= r + 1e-9
    assert reservation_value(a(m), a(sigma * 1.5), a(c))[0] >= r - 1e-9
