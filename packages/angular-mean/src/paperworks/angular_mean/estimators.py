"""scikit-learn estimators for every rule: voters are samples, population fractions sample weights.

``fit(X, y=None, sample_weight=None)``: X (n_voters, d) holds the voters' preferred scoring vectors,
``sample_weight`` (n_voters,) their population sizes or fractions (normalised to sum to 1; None:
equal). The fitted direction is ``theta_`` (d,), a unit vector (in the item metric of ``cov`` where
the rule has one). The estimators are transformers in the sense of ``PCA(n_components=1)``:
``transform(X)`` projects items X (m, d) onto the rule, giving their scores (m, 1); ``rank(X)`` is
the batch's ranking, best first; ``score(X, sample_weight)`` is the (weighted) mean long-run
agreement of held-out voters X with the fitted rule for Gaussian items (the closed form
1 - angle/pi), so ``GridSearchCV`` can compare settings on voters it did not fit.

``get_params``/``set_params``/``clone`` work (every setting is an ``__init__`` argument stored as
given, checked in ``fit``), so the estimators compose with pipelines and model selection; they
pass ``sklearn.utils.estimator_checks`` (the package's tests run them).
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from paperworks.core.validate import as_generator

from ._validation import check_cov, check_voters, check_weights
from .maxmin import _maxmin_fit
from .rules import _arithmetic, _fit, _normalized, _warn_ambiguous
from .sphere import angles

__all__ = ["AngularMean", "ArithmeticMean", "MaxMinSlack", "NormalizedMean", "SphericalMedian"]


class _RuleEstimator(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Shared fit/transform/score of the rule estimators (subclasses implement ``_solve``)."""

    _uses_cov: ClassVar[bool] = True
    # subclasses define _solve(thetas (n, d), alpha (n,)) -> (theta (d,), fitted attributes)

    def fit(self, X: object, y: object = None, sample_weight: object = None) -> _RuleEstimator:
        """Fit the rule to voters X (n_voters, d) with population weights ``sample_weight`` (n_voters,).

        ``y`` is ignored (present for the scikit-learn API); a ``y`` passed without ``sample_weight``
        warns, since ``fit(thetas, alpha)`` (the functional rules' argument order) would otherwise lose
        the weights silently. Returns ``self``.
        """
        if y is not None and sample_weight is None:
            warnings.warn(
                "y: ignored by the voting rules (they are unsupervised); population weights go in "
                "sample_weight=, e.g. fit(X, sample_weight=alpha)",
                UserWarning,
                stacklevel=2,
            )
        X = validate_data(self, X, dtype=np.float64)
        thetas = check_voters(X, "X")
        alpha = check_weights(sample_weight, thetas.shape[0])
        theta, info = self._solve(thetas, alpha)  # type: ignore[attr-defined]
        self.theta_ = theta
        for key, value in info.items():
            setattr(self, key, value)
        self._n_features_out = 1
        return self

    def score_items(self, X: object) -> np.ndarray:
        """Scores <theta_, x_j> (m,) of the items X (m, d)."""
        check_is_fitted(self, "theta_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.theta_

    def transform(self, X: object) -> np.ndarray:
        """Scores of the items X (m, d) as one feature, shape (m, 1)."""
        return self.score_items(X)[:, None]

    def rank(self, X: object) -> np.ndarray:
        """The ranking of the batch X (m, d): item indices (m,), best first (ties: lower index first)."""
        return np.argsort(-self.score_items(X), kind="stable")

    def score(self, X: object, y: object = None, sample_weight: object = None) -> float:
        """Weighted mean long-run agreement (Gaussian items) of held-out voters X (n, d) with the rule."""
        check_is_fitted(self, "theta_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        thetas = check_voters(X, "X")
        w = check_weights(sample_weight, thetas.shape[0])
        cov = check_cov(self.cov, thetas.shape[1]) if self._uses_cov else None
        return float(w @ (1.0 - angles(self.theta_, thetas, cov) / np.pi))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # fit() reads voters and transform() items: both real-valued (n, d) arrays with no NaN; a
        # voter that is the zero vector has no direction and is rejected (ValueError naming X)
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = False
        tags.target_tags.required = False
        return tags


class _IterativeRule(_RuleEstimator):
    _power: ClassVar[int] = 2  # 2: the angular mean, 1: the spherical median

    def _solve(self, thetas: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        rng = as_generator(self.random_state, "random_state")
        theta, fit = _fit(
            thetas,
            None,
            self.cov,
            self._power,
            self.n_starts,
            self.max_iter,
            self.tol,
            rng,
            fractions=alpha,
        )
        _warn_ambiguous(type(self).__name__, fit)
        return theta, {
            "objective_": fit.objective,
            "n_iter_": fit.n_iter,
            "converged_": fit.converged,
            "unique_": fit.unique,
        }


class AngularMean(_IterativeRule):
    """The angular mean as a scikit-learn estimator (see :func:`~paperworks.angular_mean.angular_mean`).

    Parameters: ``cov`` (d, d) item covariance or None; ``n_starts``, ``max_iter``, ``tol`` of the
    Riemannian L-BFGS; ``random_state`` (int, numpy Generator or None) for the random starts.
    Fitted: ``theta_`` (d,), ``objective_`` (sum alpha angle^2 at the optimum), ``n_iter_``,
    ``converged_``, ``unique_`` (False when the minimiser is not unique; a warning says so too),
    ``n_features_in_``.
    """

    def __init__(
        self,
        *,
        cov: object = None,
        n_starts: int = 8,
        max_iter: int = 2000,
        tol: float = 1e-10,
        random_state: object = 0,
    ) -> None:
        self.cov = cov
        self.n_starts = n_starts
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state


class SphericalMedian(_IterativeRule):
    """The geometric median on the sphere (:func:`~paperworks.angular_mean.spherical_median`).

    Parameters and fitted attributes as :class:`AngularMean` (``objective_``: sum alpha angle).
    """

    _power = 1

    def __init__(
        self,
        *,
        cov: object = None,
        n_starts: int = 8,
        max_iter: int = 300,
        tol: float = 1e-10,
        random_state: object = 0,
    ) -> None:
        self.cov = cov
        self.n_starts = n_starts
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state


class MaxMinSlack(_RuleEstimator):
    """The IP-optimising baseline (:func:`~paperworks.angular_mean.maxmin_slack`).

    Parameters: ``cov``, ``n_starts``, ``max_iter`` and ``tol`` (SLSQP's ftol), ``random_state``.
    Fitted: ``theta_`` (d,), ``slack_`` (the smallest long-run slack reached, Gaussian items),
    ``n_iter_``, ``converged_``, ``n_features_in_``.
    """

    def __init__(
        self,
        *,
        cov: object = None,
        n_starts: int = 8,
        max_iter: int = 200,
        tol: float = 1e-12,
        random_state: object = 0,
    ) -> None:
        self.cov = cov
        self.n_starts = n_starts
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _solve(self, thetas: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        rng = as_generator(self.random_state, "random_state")
        theta, fit = _maxmin_fit(
            thetas, None, self.cov, self.n_starts, self.max_iter, self.tol, rng, fractions=alpha
        )
        return theta, {"slack_": fit.slack, "n_iter_": fit.n_iter, "converged_": fit.converged}


class NormalizedMean(_RuleEstimator):
    """The normalised mean (:func:`~paperworks.angular_mean.normalized_mean`); parameter ``cov``."""

    def __init__(self, *, cov: object = None) -> None:
        self.cov = cov

    def _solve(self, thetas: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        cov = check_cov(self.cov, thetas.shape[1])
        return _normalized(thetas, alpha, cov), {}


class ArithmeticMean(_RuleEstimator):
    """The default rule (:func:`~paperworks.angular_mean.arithmetic_mean`): no parameters.

    Metric-free, so :meth:`score` measures agreement for isotropic Gaussian items.
    """

    _uses_cov = False

    def _solve(self, thetas: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        return _arithmetic(thetas, alpha), {}
