"""The estimators are scikit-learn estimators, and the cheap estimator recovers what it models."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from paperworks.pandoras_router import CheapValueEstimator, RouteLLMRouter, one_factor_loadings


@parametrize_with_checks([CheapValueEstimator(), RouteLLMRouter()])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_get_params_clone_and_model_selection():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + 0.3 * rng.normal(size=300) > 0).astype(int)
    clf = RouteLLMRouter(alpha=0.5, max_iter=20)
    assert clf.get_params() == {"alpha": 0.5, "max_iter": 20}
    twin = clone(clf).set_params(alpha=2.0)
    assert twin.alpha == 2.0 and clf.alpha == 0.5
    search = GridSearchCV(RouteLLMRouter(), {"alpha": [0.1, 10.0]}, cv=3).fit(X, y)
    assert search.best_score_ > 0.8
    pipe = make_pipeline(StandardScaler(), RouteLLMRouter()).fit(X, y)
    assert pipe.predict_proba(X).shape == (300, 2)
    reg = CheapValueEstimator(alpha=0.1)
    assert clone(reg).get_params()["var_alphas"] == (1.0, 10.0, 100.0)
    V = X @ rng.normal(size=(4, 3)) + 0.1 * rng.normal(size=(300, 3))
    assert cross_val_score(reg, X, V, cv=3).mean() > 0.9
    with pytest.raises(ValueError, match="alpha: expected a number > 0"):
        CheapValueEstimator(alpha=0.0).fit(X, V)
    with pytest.raises(TypeError, match="heteroscedastic: expected True or False"):
        CheapValueEstimator(heteroscedastic="yes").fit(X, V)


def test_heteroscedastic_head_recovers_an_input_dependent_std():
    """V = x w + sd(x) eps with sd(x) = 0.05 exp(x_0): s(x) tracks sd(x) on new inputs, calibrated."""
    rng = np.random.default_rng(1)
    n, d = 4000, 5
    X = rng.normal(size=(n, d))
    sd = 0.05 * np.exp(0.8 * X[:, 0])
    V = (X @ rng.normal(size=(d, 2))) + sd[:, None] * rng.normal(size=(n, 2))
    est = CheapValueEstimator(alpha=1e-3, correlated=False).fit(X[:3000], V[:3000])
    s = est.predict_std(X[3000:])
    ratio = s / sd[3000:, None]
    assert np.corrcoef(np.log(s[:, 0]), np.log(sd[3000:]))[0, 1] > 0.95
    assert 0.8 < np.median(ratio) < 1.25
    z = (V[3000:] - est.predict(X[3000:])) / s
    assert 0.85 < np.mean(z**2) < 1.15  # calibrated on held-out data
    flat = CheapValueEstimator(alpha=1e-3, heteroscedastic=False).fit(X[:3000], V[:3000])
    assert np.ptp(flat.predict_std(X[3000:]), axis=0).max() == 0.0


def test_one_factor_loadings_are_recovered():
    rng = np.random.default_rng(2)
    lam = np.array([0.9, 0.7, 0.5, 0.3, 0.8])
    n = 20_000
    z = lam * rng.normal(size=(n, 1)) + np.sqrt(1 - lam**2) * rng.normal(size=(n, 5))
    est = one_factor_loadings(np.corrcoef(z, rowvar=False))
    np.testing.assert_allclose(est, lam, atol=0.03)
    assert one_factor_loadings(np.eye(1)).tolist() == [0.0]
    # through the estimator: residual correlation of a common error across specialists
    X = rng.normal(size=(n, 3))
    V = X @ rng.normal(size=(3, 5)) + 0.2 * z
    fitted = CheapValueEstimator(alpha=1e-3, heteroscedastic=False).fit(X, V)
    np.testing.assert_allclose(fitted.loading_, lam, atol=0.04)
    assert CheapValueEstimator(correlated=False).fit(X, V).loading_.tolist() == [0.0] * 5
