"""Bad input: clear errors naming the argument."""

import numpy as np
import pytest

from paperworks.angular_mean import (
    AngularMean,
    PairwiseAgreement,
    aggregate,
    angular_mean,
    arithmetic_mean,
    batch_agreement,
    gaussian_agreement,
    gaussian_items,
    ip_violation,
    long_run_agreement,
    preference_dataset,
)

T = np.array([[1.0, 0.0], [0.0, 1.0]])


@pytest.mark.parametrize(
    ("thetas", "alpha", "match"),
    [
        (np.array([[1.0, 0.0], [0.0, 0.0]]), None, "zero vector"),
        (T, [1.2, -0.2], "must be >= 0"),
        (T, [0.3, 0.3], "sum to 1"),
        (T, [0.5, 0.25, 0.25], r"expected shape \(2,\)"),
        (np.array([1.0, 0.0]), None, "2-d array"),
        (np.array([[np.nan, 1.0]]), None, "finite"),
        (np.zeros((0, 2)), None, "at least one voter"),
        (np.array([["a", "b"]]), None, "numeric"),
    ],
)
def test_bad_voters_and_fractions(thetas, alpha, match):
    with pytest.raises((ValueError, TypeError), match=match):
        angular_mean(thetas, alpha)


def test_dimension_mismatches():
    with pytest.raises(ValueError, match="theta: expected dimension d=2"):
        gaussian_agreement(np.ones(3), T)
    with pytest.raises(ValueError, match="items: expected items of dimension d=2"):
        batch_agreement(np.ones(2), T, np.ones((5, 3)))
    with pytest.raises(ValueError, match="at least 2 items"):
        batch_agreement(np.ones(2), T, np.ones((1, 2)))
    with pytest.raises(ValueError, match=r"cov: expected shape \(2, 2\)"):
        angular_mean(T, cov=np.eye(3))
    with pytest.raises(ValueError, match="positive definite"):
        angular_mean(T, cov=np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="theta: is the zero vector"):
        gaussian_agreement(np.zeros(2), T)


def test_other_bad_input():
    with pytest.raises(ValueError, match="unknown rule 'mode'"):
        aggregate("mode", T)
    with pytest.raises(ValueError, match="arithmetic mean is the zero vector"):
        arithmetic_mean(np.array([[1.0, 0.0], [-1.0, 0.0]]))
    with pytest.raises(ValueError, match="n_starts"):
        angular_mean(T, n_starts=0)
    with pytest.raises(ValueError, match="n_pairs"):
        long_run_agreement(np.ones(2), T, items=np.ones((4, 2)), n_pairs=0)
    with pytest.raises(ValueError, match="agreement: expected finite values in"):
        ip_violation(np.array([1.5, 0.2]), [0.5, 0.5])
    with pytest.raises(ValueError, match="unknown data set 'iris'"):
        preference_dataset("iris", "homogeneous")
    with pytest.raises(ValueError, match="unknown regime"):
        preference_dataset("wine", "mixed")
    with pytest.raises(ValueError, match="m: expected an int >= 2"):
        gaussian_items(3, 1, 2)
    with pytest.raises(RuntimeError, match="call fit"):
        AngularMean().predict(np.ones((3, 2)))
    with pytest.raises(RuntimeError, match="before any update"):
        PairwiseAgreement(np.ones(2), T).compute()
