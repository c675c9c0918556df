"""Baselines against independent routes: statsmodels' Granger test, sklearn's AUROC, peers run."""

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from paperworks.bace import (
    ChannelAR,
    GlobalVAR,
    LFPConfig,
    auroc,
    edge_auroc,
    granger_f_scores,
    lagged_correlation_scores,
    make_windows,
    region_average,
    simulate_lfp,
    spectral_granger_scores,
)
from paperworks.bace.baselines import pcmci_scores


def test_granger_f_matches_statsmodels():
    from statsmodels.tsa.api import VAR

    rng = np.random.default_rng(0)
    T, R = 600, 3
    x = np.zeros((T, R))
    for t in range(2, T):
        x[t] = 0.5 * x[t - 1] + rng.standard_normal(R)
        x[t, 1] += 0.4 * x[t - 1, 0]
    Z = x.T[None]
    ph = np.zeros((1, T), dtype=int)
    F, p, _ = granger_f_scores(Z, ph, order=2, return_pvalues=True)
    res = VAR(x).fit(2, trend="c")
    for r in range(R):
        for j in range(R):
            if r != j:
                t = res.test_causality(r, [j], kind="f")
                assert F[0, r, j] == pytest.approx(t.test_statistic, rel=1e-8)
                # statsmodels takes the system's residual df (R * (n - k)); ours the equation's (n - k)
                assert t.df == (2, R * (598 - 7))
                assert p[0, r, j] == pytest.approx(stats.f.sf(t.test_statistic, 2, 598 - 7), rel=1e-9)
    assert p[0, 1, 0] < 1e-6


def test_auroc_matches_sklearn():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 50)
    s = np.round(rng.standard_normal(50), 1)  # ties
    assert auroc(y, s) == pytest.approx(roc_auc_score(y, s))
    with pytest.raises(ValueError, match="truth"):
        auroc(np.zeros(5), np.arange(5.0))


@pytest.fixture(scope="module")
def small():
    d = simulate_lfp(
        LFPConfig(n_regions=4, n_trials=8, n_phases=2, n_backbone=1, n_specific=2, repeat_first=False), 2
    )
    return d, region_average(d.X, d.regions)


def test_edge_baselines_find_edges(small):
    d, Z = small
    for s in (granger_f_scores(Z, d.phases), lagged_correlation_scores(Z, d.phases)):
        assert s.shape == (2, 4, 4) and edge_auroc(d.adjacency, s).mean() > 0.6


def test_peers_run(small):
    d, Z = small
    for s in (pcmci_scores(Z, d.phases), spectral_granger_scores(Z, d.phases, d.sfreq)):
        assert s.shape == (2, 4, 4) and np.all(np.isfinite(s))


def test_forecasters_beat_mean(small):
    d, _ = small
    S = (d.X - d.X.mean((0, 2))[None, :, None]) / d.X.std((0, 2))[None, :, None]
    past, fut, _ = make_windows(S, d.phases, 8, 2)
    for f in (ChannelAR(order=8), GlobalVAR(orders=(1, 2))):
        mse = np.mean((f.fit(past, fut).predict(past) - fut) ** 2)
        assert mse < 0.9 * np.mean(fut**2)
