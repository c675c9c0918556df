"""Regression oracles against independent routes: batch ridge, the RBF kernel, loss decrease."""

from __future__ import annotations

import numpy as np
import pytest

from paperworks.squarecb_comb import LinearOracle, MLPOracle, RandomFeaturesOracle


def test_linear_oracle_equals_batch_ridge() -> None:
    rng = np.random.default_rng(0)
    d, reg = 6, 0.7
    oracle = LinearOracle(d, reg=reg)
    Xs, ys = [], []
    for k in (1, 3, 5, 2, 4):
        X, y = rng.normal(size=(k, d)), rng.normal(size=k)
        oracle.update(X, y)
        Xs.append(X)
        ys.append(y)
    X, y = np.vstack(Xs), np.concatenate(ys)
    theta = np.linalg.solve(reg * np.eye(d) + X.T @ X, X.T @ y)
    np.testing.assert_allclose(oracle.theta_, theta, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(oracle.V_inv_, np.linalg.inv(reg * np.eye(d) + X.T @ X), atol=1e-12)
    Z = rng.normal(size=(4, d))
    np.testing.assert_allclose(oracle.predict(Z), Z @ theta, rtol=1e-9)
    np.testing.assert_allclose(oracle.variances(Z), np.einsum("ij,jk,ik->i", Z, oracle.V_inv_, Z), rtol=1e-12)


def test_random_features_approximate_the_rbf_kernel() -> None:
    rng = np.random.default_rng(1)
    oracle = RandomFeaturesOracle(3, n_features=2000, bandwidth=0.8, seed=3)
    X = rng.normal(size=(5, 3)) * 0.5
    phi = oracle.features(X)
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / (2 * 0.8**2))
    np.testing.assert_allclose(phi @ phi.T, K, atol=0.1)
    assert np.abs(phi @ phi.T - K).mean() < 0.04


def test_random_features_fit_a_nonlinear_function_better_than_linear() -> None:
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(600, 2))
    y = np.sin(3 * X[:, 0]) * np.cos(2 * X[:, 1])
    rff, lin = RandomFeaturesOracle(2, 200, bandwidth=0.5, reg=0.1, seed=0), LinearOracle(2)
    for i in range(0, 500, 5):
        rff.update(X[i : i + 5], y[i : i + 5])
        lin.update(X[i : i + 5], y[i : i + 5])
    test_x, test_y = X[500:], y[500:]
    mse_rff = np.mean((rff.predict(test_x) - test_y) ** 2)
    mse_lin = np.mean((lin.predict(test_x) - test_y) ** 2)
    assert mse_rff < 0.25 * mse_lin


def test_mlp_oracle_learns_online() -> None:
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(4000, 3))
    y = np.abs(X[:, 0]) + 0.5 * X[:, 1] ** 2
    net = MLPOracle(3, hidden=32, lr=0.01, seed=0)
    before = np.mean((net.predict(X[-500:]) - y[-500:]) ** 2)
    for i in range(0, 3500, 5):
        net.update(X[i : i + 5], y[i : i + 5])
    after = np.mean((net.predict(X[-500:]) - y[-500:]) ** 2)
    assert after < 0.1 * before
    assert after < 0.02


@pytest.mark.parametrize(
    "make", [lambda: LinearOracle(3), lambda: RandomFeaturesOracle(3), lambda: MLPOracle(3)]
)
def test_oracle_bad_input(make) -> None:
    oracle = make()
    with pytest.raises(ValueError, match="X: expected 3 features per row, got 2"):
        oracle.predict(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="X: expected finite"):
        oracle.update(np.full((1, 3), np.nan), np.zeros(1))
    with pytest.raises(ValueError, match=r"y: expected shape \(2,\)"):
        oracle.update(np.zeros((2, 3)), np.zeros(3))
    with pytest.raises(ValueError, match="X: expected a 2-d array"):
        oracle.predict(np.zeros(3))
    with pytest.raises(ValueError, match="X: expected a non-empty array"):
        oracle.predict(np.zeros((0, 3)))


def test_oracle_bad_hyper_parameters() -> None:
    with pytest.raises(ValueError, match="dim: expected an int >= 1"):
        LinearOracle(0)
    with pytest.raises(ValueError, match="reg: expected a number > 0"):
        LinearOracle(2, reg=0.0)
    with pytest.raises(ValueError, match="bandwidth: expected a number > 0"):
        RandomFeaturesOracle(2, bandwidth=-1.0)
    with pytest.raises(TypeError, match="n_features: expected an int"):
        RandomFeaturesOracle(2, n_features=2.5)
    with pytest.raises(ValueError, match="lr: expected a number > 0"):
        MLPOracle(2, lr=0.0)
    with pytest.raises(ValueError, match="seed: expected an int >= 0"):
        MLPOracle(2, seed=-1)
