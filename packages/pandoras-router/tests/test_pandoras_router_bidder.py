"""Pandora's Bidder's market models: what each one prices, and the welfare accounting."""

import numpy as np
import pytest

from paperworks.pandoras_router import BidResult, PandorasBidder, competing_claims, market_outcome


def _competitors(seed=0, n=500, j=4):
    rng = np.random.default_rng(seed)
    m = rng.normal(0.5, 0.2, (n, j))  # cheap beliefs N(m, 0.15^2), true values drawn from them
    V = m + 0.15 * rng.standard_normal((n, j))
    s = np.full((n, j), 0.15)
    tau = np.full((n, j), 0.05)
    Y = V + 0.05 * rng.standard_normal((n, j))
    cost = np.full((n, j), 0.004)
    return V, m, s, tau, Y, cost


def test_noisy_and_shaded_claims():
    V = _competitors()[0]
    exact = competing_claims(V, "noisy", rng=0, noise=0.0)
    assert np.array_equal(exact["price"], V.max(axis=1)) and np.array_equal(exact["winner"], V.argmax(axis=1))
    assert np.array_equal(exact["competitor_value"], V.max(axis=1))
    shaded = competing_claims(V, "noisy", rng=0, noise=0.0, shade=0.1)
    np.testing.assert_allclose(shaded["price"], V.max(axis=1) - 0.1)
    noisy = competing_claims(V, "noisy", rng=1, noise=0.3)
    # the winner's curse: the highest of noisy claims overstates the winner's value
    assert (noisy["price"] - noisy["competitor_value"]).mean() > 0.1
    assert (noisy["competitor_cost"] == 0).all()


def test_bayesian_competitors_self_assess_by_value_of_information():
    V, m, s, tau, Y, cost = _competitors(1)
    cheap = competing_claims(V, "bayesian", m=m, s=s, tau=tau, readings=Y, cost=cost, strategy="never")
    np.testing.assert_allclose(cheap["price"], m.max(axis=1))
    assert (cheap["competitor_cost"] == 0).all()
    voi = competing_claims(V, "bayesian", m=m, s=s, tau=tau, readings=Y, cost=cost)
    reads = voi["competitor_cost"] / 0.004
    assert 0 < reads.mean() < 4  # some competitors read, not all
    # self-assessed claims track the winner's value more closely than cheap ones
    err = lambda mk: np.abs(mk["price"] - mk["competitor_value"]).mean()  # noqa: E731
    assert err(voi) < err(cheap)
    with pytest.raises(ValueError, match="m: the 'bayesian' market needs"):
        competing_claims(V, "bayesian")
    with pytest.raises(ValueError, match="market: expected one of"):
        competing_claims(V, "auction")


def test_market_outcome_counts_every_assessment_cost():
    own = np.array([1.0, 0.2, 0.5])
    price = np.array([0.5, 0.5, 0.4])
    comp = np.array([0.4, 0.6, 0.45])
    bid = BidResult(
        np.array([True, False, True]), np.array([True, False, False]), own, np.array([0.01, 0, 0])
    )
    out = market_outcome(bid, own, price, comp, competitor_cost=np.array([0.0, 0.02, 0.0]))
    assert out["welfare"] == pytest.approx(np.mean([1.0 - 0.01, 0.6 - 0.02, 0.5]))
    assert out["utility"] == pytest.approx(np.mean([0.5 - 0.01, 0.0, 0.1]))
    assert out["efficiency"] == pytest.approx(out["welfare"] / np.mean([1.0, 0.6, 0.5]))
    with pytest.raises(TypeError, match="bid: expected a BidResult"):
        market_outcome({"accept": own}, own, price, comp)


def test_voi_bidder_utility_beats_never_assessing_on_average():
    """The bidder's own problem is a one-box Pandora problem: VOI is optimal for its utility."""
    rng = np.random.default_rng(3)
    n = 20_000
    m = rng.normal(0.5, 0.2, n)
    U = m + 0.2 * rng.standard_normal(n)  # the bidder's belief N(m, 0.2^2) is calibrated
    s = np.full(n, 0.2)
    Y = U + 0.05 * rng.standard_normal(n)
    price = rng.normal(0.5, 0.2, n)
    utils = {}
    for strategy in ("voi", "never", "always"):
        bid = PandorasBidder(0.05, 0.01, strategy).decide(m, s, price, Y)
        utils[strategy] = market_outcome(bid, U, price, price)["utility"]
    assert utils["voi"] > utils["never"] and utils["voi"] > utils["always"] - 1e-3
