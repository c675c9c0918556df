"""The generator: stability, shapes, the truth's structure, repeatability, 1/f noise."""

import numpy as np
import pytest

from paperworks.bace import LFPConfig, phase_spectral_radius, pink_noise, simulate_lfp


def test_generator_var_is_stable_and_truth_is_structured():
    d = simulate_lfp(LFPConfig(n_trials=2), seed=3)
    assert np.all(phase_spectral_radius(d) < 1)
    P, R, _ = d.adjacency.shape
    assert (P, R) == (4, 8)
    assert np.all(d.adjacency[:, np.arange(R), np.arange(R)] == 0)
    np.testing.assert_array_equal(d.adjacency[0], d.adjacency[3])  # hold reuses rest
    assert np.any(d.adjacency[0] != d.adjacency[1]) and np.any(d.adjacency[1] != d.adjacency[2])
    counts = np.bincount(d.regions)
    assert counts.min() >= 4 and counts.max() <= 16
    assert d.X.shape == (2, d.regions.size, 400) and d.phases.shape == (2, 400)


def test_same_seed_same_data():
    a, b = simulate_lfp(LFPConfig(n_trials=2), seed=5), simulate_lfp(LFPConfig(n_trials=2), seed=5)
    np.testing.assert_array_equal(a.X, b.X)


def test_latents_follow_the_documented_var():
    # independent route: OLS of each latent on its own two lags and the other's lagged value recovers the
    # generator's AR(2) coefficients and the planted coupling (and none in the reverse direction)
    A = np.zeros((1, 2, 2))
    A[0, 1, 0] = 1.0  # 0 -> 1
    d = simulate_lfp(LFPConfig(n_regions=2, n_phases=1, n_trials=30, adjacency=A, coupling=0.3), seed=0)
    x, L = d.latent, d.lags
    for r, j in ((1, 0), (0, 1)):
        t0 = 3
        y = x[:, r, t0:].ravel()
        X = np.column_stack(
            [
                x[:, r, t0 - 1 : -1].ravel(),
                x[:, r, t0 - 2 : -2].ravel(),
                x[:, j, t0 - L[r, j] : x.shape[2] - L[r, j]].ravel(),
            ]
        )
        beta = np.linalg.lstsq(X, y, rcond=None)[0]
        np.testing.assert_allclose(beta[:2], d.ar[r], atol=0.03)
        assert beta[2] == pytest.approx(d.weights[0, r, j], abs=0.03)


def test_pink_noise_spectrum_slope():
    n = pink_noise((64, 4096), 1.0, np.random.default_rng(0))
    f = np.fft.rfftfreq(4096)[1:]
    p = (np.abs(np.fft.rfft(n, axis=-1)) ** 2).mean(0)[1:]
    slope = np.polyfit(np.log(f), np.log(p), 1)[0]
    assert -1.15 < slope < -0.85


def test_bad_config():
    with pytest.raises(ValueError, match="contacts"):
        LFPConfig(contacts=(5, 3))
    with pytest.raises(ValueError, match="adjacency"):
        simulate_lfp(LFPConfig(n_regions=2, n_phases=1, adjacency=np.ones((1, 2, 2))))
