"""BACE: exact recovery of a noiseless chain, sklearn conventions, forecast, bad input."""

import numpy as np
import pytest
from sklearn.base import clone

from paperworks.bace import BACE, LFPConfig, edge_auroc, make_windows, simulate_lfp


@pytest.fixture(scope="module")
def chain():
    A = np.zeros((1, 3, 3))
    A[0, 1, 0] = A[0, 2, 1] = 1.0  # 0 -> 1 -> 2
    cfg = LFPConfig(
        n_regions=3,
        n_phases=1,
        contacts=(2, 2),
        n_trials=12,
        adjacency=A,
        snr=1e8,
        coupling=0.6,
        noise_exponent=0,
    )
    return simulate_lfp(cfg, seed=1)


def test_noiseless_chain_ranked_exactly(chain):
    m = BACE(regions=chain.regions, n_steps=150, lag=8).fit(chain.X, chain.phases)
    A = m.adjacency_[0]
    true = [A[1, 0], A[2, 1]]
    false = [A[r, j] for r in range(3) for j in range(3) if r != j and (r, j) not in ((1, 0), (2, 1))]
    assert min(true) > max(false)
    assert edge_auroc(chain.adjacency, m.adjacency_)[0] == 1.0


def test_sklearn_clone_and_params(chain):
    m = BACE(regions=chain.regions, n_steps=5, sparsity=0.01)
    c = clone(m)
    assert c.get_params()["sparsity"] == 0.01 and c is not m
    c.set_params(n_steps=7)
    assert c.n_steps == 7


def test_repeatable_and_forecast_shapes(chain):
    X, ph = chain.X[:4], chain.phases[:4]
    a = BACE(regions=chain.regions, n_steps=10, lag=6, random_state=3).fit(X, ph)
    b = BACE(regions=chain.regions, n_steps=10, lag=6, random_state=3).fit(X, ph)
    np.testing.assert_array_equal(a.adjacency_, b.adjacency_)
    past, _fut, p = make_windows(X, ph, 6, 4)
    out = a.forecast(past[:5], p[:5])
    assert out.shape == (5, X.shape[1], 4)
    long = a.forecast(past[:5], p[:5], horizon=9)  # iterated beyond the trained horizon
    assert long.shape == (5, X.shape[1], 9)
    np.testing.assert_allclose(long[:, :, :4], out, rtol=1e-5, atol=1e-6)
    assert np.isfinite(a.forecast_mse(X, ph))


def test_gru_encoder_and_shared_adjacency(chain):
    m = BACE(regions=chain.regions, n_steps=5, encoder="gru", shared_adjacency=True).fit(
        chain.X[:2], chain.phases[:2]
    )
    assert m.adjacency_.shape == (1, 3, 3)


def test_bad_input():
    d = simulate_lfp(
        LFPConfig(n_regions=2, n_phases=2, n_trials=2, contacts=(1, 2), n_backbone=1, n_specific=1), 0
    )
    X, ph = d.X, d.phases
    bad = X.copy()
    bad[0, 0, 5] = np.nan
    with pytest.raises(ValueError, match="X: expected finite"):
        BACE(regions=d.regions, n_steps=1).fit(bad, ph)
    with pytest.raises(ValueError, match="phases: expected shape"):
        BACE(regions=d.regions, n_steps=1).fit(X, ph[:, :-1])
    with pytest.raises(ValueError, match="regions: every channel needs a region"):
        BACE(regions=np.r_[-1, d.regions[1:]], n_steps=1).fit(X, ph)
    with pytest.raises(ValueError, match="regions: expected one region per channel"):
        BACE(regions=d.regions[:-1], n_steps=1).fit(X, ph)
    with pytest.raises(ValueError, match="lag \\+ horizon"):
        BACE(regions=d.regions, n_steps=1, lag=300, horizon=200).fit(X, ph)
    with pytest.raises(ValueError, match="phases: no window"):
        alt = np.tile(np.arange(X.shape[2]) % 2, (2, 1))  # the phase changes every sample
        BACE(regions=d.regions, n_steps=1).fit(X, alt)
    with pytest.raises(ValueError, match="encoder"):
        BACE(regions=d.regions, encoder="lstm").fit(X, ph)
    m = BACE(regions=d.regions, n_steps=1).fit(X, ph)
    past, _, p = make_windows(X, ph, m.lag, m.horizon)
    with pytest.raises(ValueError, match="not seen in fit"):
        m.forecast(past[:2], np.array([5, 5]))
    with pytest.raises(RuntimeError, match="fit"):
        BACE().forecast(past, p)
