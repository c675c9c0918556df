"""``DinkelbachClassifier``: a scikit-learn meta-estimator (and river-style learner) for F1, Jaccard, ...

Wraps any probabilistic online estimator with ``partial_fit`` and ``predict_proba`` (scikit-learn's
``SGDClassifier(loss="log_loss")``, or the built-in :class:`OnlineLogisticRegression`, the default) and a
:class:`~paperworks.stochastic_dinkelbach.DinkelbachTracker` for the metric. ``partial_fit(X, y)``
treats the rows as the next rounds of a stream: for each row, in order, the current estimator gives
``p``, the tracker predicts ``1[p > tau(lambda)]`` (irrevocably; counted in ``online_confusion_``), the
tracker takes its root step, and the estimator learns the row. After the stream, ``predict`` is the
online-to-batch classifier ``1[eta_n(x) > tau(lambda_n)]``.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted, validate_data

from .estimators import OnlineLogisticRegression
from .metrics import CELLS, as_labels
from .online import DinkelbachTracker

__all__ = ["DinkelbachClassifier"]


class DinkelbachClassifier(ClassifierMixin, BaseEstimator):
    """Online learning of a linear-fractional metric with the stochastic Dinkelbach-root tracker.

    Args:
        estimator: an unfitted probabilistic classifier with ``partial_fit`` and ``predict_proba``
            (cloned); ``None``: :class:`OnlineLogisticRegression()`.
        metric: ``"f1"``, ``"fbeta"`` (with ``beta``), ``"jaccard"``, torchmetrics-style names, or
            explicit ``(a0, a, b0, b)`` over (TP, FP, FN, TN).
        beta, step, step_scale, init, prior_weight: see :class:`DinkelbachTracker`.

    Fitted attributes: ``estimator_``, ``tracker_``, ``classes_`` ([0, 1]), ``lambda_`` (the root
    estimate), ``threshold_`` (``tau(lambda_)``), ``online_confusion_`` (dict of the online predictions'
    TP, FP, FN, TN), ``online_score_`` (their metric), ``n_seen_``.

    River-style: ``predict_one(x)``, ``predict_proba_one(x)`` and ``learn_one(x, y)`` with ``x`` a dict
    of features (the feature order is fixed by the first dict seen).
    """

    def __init__(
        self,
        estimator=None,
        metric="f1",
        *,
        beta=None,
        step="newton",
        step_scale=1.0,
        init=None,
        prior_weight=1.0,
    ) -> None:
        self.estimator = estimator
        self.metric = metric
        self.beta = beta
        self.step = step
        self.step_scale = step_scale
        self.init = init
        self.prior_weight = prior_weight

    # -- set-up ------------------------------------------------------------------------------------
    def _start(self, n_features: int | None = None) -> None:
        self.tracker_ = DinkelbachTracker(
            self.metric,
            beta=self.beta,
            step=self.step,
            step_scale=self.step_scale,
            init=self.init,
            prior_weight=self.prior_weight,
        )
        est = OnlineLogisticRegression() if self.estimator is None else clone(self.estimator)
        for method in ("partial_fit", "predict_proba"):
            if not callable(getattr(est, method, None)):
                raise TypeError(f"estimator: expected an estimator with {method}(), got {type(est).__name__}")
        self.estimator_ = est
        self.classes_ = np.array([0, 1])
        self._est_fitted = False
        self._builtin = type(est) is OnlineLogisticRegression
        self._keys = None
        if n_features is not None and not hasattr(self, "n_features_in_"):
            self.n_features_in_ = n_features

    @property
    def lambda_(self) -> float:
        check_is_fitted(self, "tracker_")
        return self.tracker_.lambda_

    @property
    def threshold_(self) -> float:
        check_is_fitted(self, "tracker_")
        return self.tracker_.threshold_

    @property
    def online_confusion_(self) -> dict[str, int]:
        check_is_fitted(self, "tracker_")
        return dict(zip(CELLS, self.tracker_.counts_))

    @property
    def online_score_(self) -> float:
        check_is_fitted(self, "tracker_")
        return self.tracker_.score_

    @property
    def n_seen_(self) -> int:
        check_is_fitted(self, "tracker_")
        return self.tracker_.t_

    # -- the online protocol ---------------------------------------------------------------------
    def partial_fit(self, X, y, classes=None):
        """Process the rows of ``X`` (n, d) as the next ``n`` rounds of the stream (``y`` in {0, 1})."""
        first = not hasattr(self, "tracker_")
        X, y = validate_data(self, X, y, reset=first, dtype=np.float64)
        y = as_labels(y, "y")
        if classes is not None and not set(np.asarray(classes).tolist()) <= {0, 1}:
            raise ValueError(f"classes: expected labels in {{0, 1}}, got {list(classes)}")
        if first:
            self._start(X.shape[1])
        tr = self.tracker_
        if self._builtin:
            est = self._builtin_estimator(X.shape[1])
            Xa = np.hstack([X, np.ones((X.shape[0], 1)) if est.fit_intercept else np.zeros((X.shape[0], 1))])
            for i in range(Xa.shape[0]):
                self._builtin_round(Xa[i], int(y[i]))
            est._publish()
            return self
        for i in range(X.shape[0]):
            p = self._proba_row(X[i : i + 1])
            tr.update_one(tr.predict_one(p), int(y[i]))
            self.estimator_.partial_fit(X[i : i + 1], y[i : i + 1], classes=self.classes_)
            self._est_fitted = True
        return self

    def _builtin_estimator(self, d: int) -> OnlineLogisticRegression:
        est = self.estimator_
        if not hasattr(est, "_theta"):
            est._init(d)
            est.n_features_in_ = d
            est._publish()
        self._est_fitted = True
        return est

    def _builtin_p(self, xa: np.ndarray) -> float:
        est = self.estimator_
        w = est._avg if est.average and est.t_ > 0 else est._theta
        return _sigmoid(float(w @ xa))

    def _builtin_round(self, xa: np.ndarray, y: int) -> None:
        """One round on an augmented row (d + 1,) with the built-in estimator (no validation)."""
        tr = self.tracker_
        tr.update_one(tr.predict_one(self._builtin_p(xa)), y)
        self.estimator_._step(xa, float(y))

    def fit(self, X, y):
        """Reset, then one online pass over the rows of ``X`` in order (see :meth:`partial_fit`)."""
        for attr in ("tracker_", "estimator_", "n_features_in_", "feature_names_in_"):
            self.__dict__.pop(attr, None)
        return self.partial_fit(X, y)

    def _proba_row(self, row: np.ndarray) -> float:
        if not self._est_fitted:
            return 0.5  # nothing learned yet
        proba = self.estimator_.predict_proba(row)
        return float(proba[0, list(self.estimator_.classes_).index(1)]) if proba.shape[1] > 1 else 0.5

    # -- batch use (online-to-batch) ---------------------------------------------------------------
    def predict_proba(self, X) -> np.ndarray:
        """``(n, 2)``: the estimator's P(y = 0 | x), P(y = 1 | x)."""
        check_is_fitted(self, "tracker_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if not self._est_fitted:
            return np.full((X.shape[0], 2), 0.5)
        if self._builtin:
            self.estimator_._publish()
        proba = self.estimator_.predict_proba(X)
        p1 = proba[:, list(self.estimator_.classes_).index(1)]
        return np.stack([1 - p1, p1], axis=1)

    def predict(self, X) -> np.ndarray:
        """``1[eta_n(x) > tau(lambda_n)]``, shape (n,)."""
        return (self.predict_proba(X)[:, 1] > self.threshold_).astype(np.int64)

    def score(self, X, y, sample_weight=None) -> float:
        """The metric (not accuracy) of :meth:`predict` on ``(X, y)``."""
        if sample_weight is not None:
            raise ValueError("sample_weight: not supported (the metric is a ratio of counts)")
        return self.tracker_.metric.score(as_labels(y, "y"), self.predict(X))

    # -- river-style --------------------------------------------------------------------------------
    def _row(self, x: dict) -> np.ndarray:
        """The features of a dict as a row (d,), or (d + 1,) with the intercept column for the built-in."""
        if not isinstance(x, dict) or not x:
            raise TypeError(f"x: expected a non-empty dict of features, got {type(x).__name__}")
        if self._keys is None:
            self._keys = list(x)
        try:
            vals = [float(x[k]) for k in self._keys]
        except KeyError:
            raise ValueError(f"x: expected the features {self._keys}, got {list(x)}") from None
        if len(x) != len(self._keys):
            raise ValueError(f"x: expected the features {self._keys}, got {list(x)}")
        if self._builtin:
            vals.append(1.0 if self.estimator_.fit_intercept else 0.0)
        row = np.array(vals)
        if not np.isfinite(row).all():
            raise ValueError("x: expected finite feature values")
        return row

    def _p_one(self, x: dict) -> float:
        if not hasattr(self, "tracker_"):
            self._start(len(x))
        row = self._row(x)
        if self._builtin:
            self._builtin_estimator(row.size - 1)
            return self._builtin_p(row)
        return self._proba_row(row[None])

    def predict_proba_one(self, x: dict) -> dict[int, float]:
        """River-style ``{0: 1 - p, 1: p}`` for a dict of features."""
        p = self._p_one(x)
        return {0: 1.0 - p, 1: p}

    def predict_one(self, x: dict) -> int:
        """The online prediction ``1[p > tau(lambda_t)]`` for ``x`` (no state change)."""
        p = self._p_one(x)
        return self.tracker_.predict_one(p)

    def learn_one(self, x: dict, y: int) -> DinkelbachClassifier:
        """One round: the prediction for ``x`` is counted, the root steps, the estimator learns ``(x, y)``."""
        if not hasattr(self, "tracker_"):
            self._start(len(x))
        if y not in (0, 1, True, False):
            raise ValueError(f"y: expected a label in {{0, 1}}, got {y!r}")
        row = self._row(x)
        y = int(y)
        if self._builtin:
            self._builtin_estimator(row.size - 1)
            self._builtin_round(row, y)
            return self
        tr = self.tracker_
        tr.update_one(tr.predict_one(self._proba_row(row[None])), y)
        self.estimator_.partial_fit(row[None], np.array([y]), classes=self.classes_)
        self._est_fitted = True
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


def _sigmoid(z: float) -> float:
    z = max(min(z, 500.0), -500.0)
    return 1.0 / (1.0 + math.exp(-z))
