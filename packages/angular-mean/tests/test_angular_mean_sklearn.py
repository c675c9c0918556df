"""The rule estimators are real scikit-learn estimators: estimator checks, clone, GridSearchCV, pipelines."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.validation import NotFittedError

from paperworks.angular_mean import (
    AmbiguousRuleWarning,
    AngularMean,
    ArithmeticMean,
    MaxMinSlack,
    NormalizedMean,
    SphericalMedian,
    angular_mean,
    arithmetic_mean,
    gaussian_agreement,
    maxmin_slack,
    normalized_mean,
    random_instance,
    spherical_median,
)

ESTIMATORS = [AngularMean(), SphericalMedian(), MaxMinSlack(), NormalizedMean(), ArithmeticMean()]

# The checks that cannot apply, and why (the rest pass as they are):
ZERO_ROW = (
    "the check casts its data to integers, which makes one row the zero vector; a voter's scoring "
    "vector needs a direction, so fit rejects it (ValueError naming X)"
)
ZERO_MEAN = (
    "the check standardises its data, so the weighted arithmetic mean of the voters is exactly the "
    "zero vector, where the default rule is undefined (ValueError)"
)
TYPES_NOT_COPIES = (
    "IP is defined per voter type: two copies of a voter with weight 1 are two types of fraction 1/N, "
    "each owed agreement 1/N, not one type of fraction 2/N, so repeating a voter is not weighting it"
)


def expected_failed_checks(estimator):
    failed = {"check_estimators_dtypes": ZERO_ROW}
    if isinstance(estimator, ArithmeticMean):
        for check in (
            "check_transformer_data_not_an_array",
            "check_transformer_general",
            "check_transformer_preserve_dtypes",
        ):
            failed[check] = ZERO_MEAN
    if isinstance(estimator, MaxMinSlack):
        failed["check_sample_weight_equivalence_on_dense_data"] = TYPES_NOT_COPIES
    return failed


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        # the checks' small data sets include ties (e.g. a median of four voters is an arc)
        warnings.simplefilter("ignore", AmbiguousRuleWarning)
        # the checks pass a y to every estimator; the rules ignore it and say so
        warnings.filterwarnings("ignore", message="y: ignored by the voting rules")
        check(estimator)


def test_weights_passed_as_y_warn_and_sample_weight_is_used():
    rng = np.random.default_rng(0)
    thetas = rng.normal(size=(6, 3))
    alpha = np.array([0.5, 0.3, 0.1, 0.05, 0.03, 0.02])
    with pytest.warns(UserWarning, match="sample_weight"):
        wrong = AngularMean().fit(thetas, alpha)
    right = AngularMean().fit(thetas, sample_weight=alpha)
    assert not np.allclose(wrong.theta_, right.theta_)
    np.testing.assert_allclose(right.theta_, angular_mean(thetas, alpha), atol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        AngularMean().fit(thetas, None, sample_weight=alpha)


@pytest.mark.parametrize(
    ("est", "rule"),
    [
        (AngularMean(), angular_mean),
        (SphericalMedian(), spherical_median),
        (MaxMinSlack(), maxmin_slack),
        (NormalizedMean(), normalized_mean),
        (ArithmeticMean(), arithmetic_mean),
    ],
)
def test_estimators_equal_their_functions_with_weights_as_fractions(est, rule):
    thetas, alpha = random_instance(6, 4, seed=3)
    fitted = clone(est).fit(thetas, sample_weight=7.0 * alpha)  # weights: fractions up to scale
    np.testing.assert_allclose(fitted.theta_, rule(thetas, alpha), atol=1e-8)
    assert fitted.n_features_in_ == 4


def test_get_params_set_params_clone():
    est = AngularMean(n_starts=3, tol=1e-8, random_state=7)
    assert est.get_params() == {"cov": None, "n_starts": 3, "max_iter": 2000, "tol": 1e-8, "random_state": 7}
    other = clone(est)
    assert other is not est and other.get_params() == est.get_params()
    other.set_params(n_starts=5)
    assert other.n_starts == 5 and est.n_starts == 3
    thetas, alpha = random_instance(5, 3, seed=1)
    fitted = est.fit(thetas, sample_weight=alpha)
    assert not hasattr(clone(fitted), "theta_")  # clone copies settings, not the fit
    assert repr(AngularMean(n_starts=3)) == "AngularMean(n_starts=3)"


def test_grid_search_and_cross_validation_on_held_out_voters():
    thetas, alpha = random_instance(40, 5, seed=2)
    search = GridSearchCV(
        AngularMean(), {"n_starts": [1, 4], "max_iter": [5, 2000]}, cv=KFold(4, shuffle=True, random_state=0)
    )
    search.fit(thetas, sample_weight=alpha)
    assert set(search.best_params_) == {"n_starts", "max_iter"}
    assert isinstance(search.best_estimator_, AngularMean) and search.best_estimator_.theta_.shape == (5,)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    scores = cross_val_score(MaxMinSlack(), thetas, cv=4)
    assert scores.shape == (4,) and np.all((scores > 0) & (scores < 1))


def test_score_is_mean_agreement_of_held_out_voters():
    thetas, alpha = random_instance(8, 4, seed=4)
    est = AngularMean().fit(thetas[:5], sample_weight=alpha[:5])
    w = alpha[5:] / alpha[5:].sum()
    expected = w @ gaussian_agreement(est.theta_, thetas[5:])
    assert est.score(thetas[5:], sample_weight=alpha[5:]) == pytest.approx(expected)


def test_pipeline_and_feature_names():
    thetas, alpha = random_instance(6, 3, seed=5)
    pipe = make_pipeline(AngularMean())
    pipe.fit(thetas, angularmean__sample_weight=alpha)
    items = np.random.default_rng(0).standard_normal((7, 3))
    assert pipe.transform(items).shape == (7, 1)
    assert list(pipe.get_feature_names_out()) == ["angularmean0"]


def test_unfitted_and_mismatched_inputs():
    with pytest.raises(NotFittedError):
        AngularMean().rank(np.ones((3, 2)))
    est = AngularMean().fit(np.eye(3))
    with pytest.raises(ValueError, match="X has 2 features, but AngularMean is expecting 3"):
        est.transform(np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"sample_weight: expected shape \(3,\)"):
        AngularMean().fit(np.eye(3), sample_weight=[1.0, 2.0])
    with pytest.raises(ValueError, match="sample_weight: weights must not all be zero"):
        AngularMean().fit(np.eye(3), sample_weight=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="X: row"):
        AngularMean().fit(np.array([[1.0, 0.0], [0.0, 0.0]]))
