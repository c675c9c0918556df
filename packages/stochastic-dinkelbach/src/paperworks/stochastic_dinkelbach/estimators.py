"""Online class-probability estimation: logistic regression by averaged stochastic gradient descent.

One pass, one instance at a time: ``theta_{t+1} = theta_t - gamma_t (sigmoid(theta_t . x_t) - y_t) x_t``
(with an appended constant feature for the intercept and an optional L2 term ``alpha theta``), step
``gamma_t = learning_rate / sqrt(t)``, and predictions from the Polyak-Ruppert average of the iterates
(``average=True``), the statistically efficient online estimator of a well-specified logistic model.

:class:`OnlineLogisticRegression` is a scikit-learn estimator (``partial_fit``, ``fit`` = one pass in
order, ``predict_proba``); :func:`prequential_logistic` runs the same updates on R independent streams at
once (vectorised over R) and returns, for every round, the probability predicted *before* that round's
label was seen (the online protocol), and the averaged weights at chosen checkpoints.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from paperworks.core.validate import nonnegative_float, positive_float

from .metrics import as_labels

__all__ = ["OnlineLogisticRegression", "prequential_logistic"]


class OnlineLogisticRegression(ClassifierMixin, BaseEstimator):
    """Binary logistic regression learned online by (averaged) SGD; labels in {0, 1}.

    Args:
        learning_rate: ``gamma_0`` of the step ``gamma_t = gamma_0 / sqrt(t)`` (> 0).
        average: predict with the running average of the iterates (Polyak-Ruppert).
        alpha: L2 penalty (>= 0; 0: none).
        fit_intercept: learn an intercept.

    Fitted attributes: ``coef_`` (1, d), ``intercept_`` (1,), ``classes_`` = [0, 1], ``t_`` (updates).
    """

    def __init__(
        self, learning_rate: float = 0.5, average: bool = True, alpha: float = 0.0, fit_intercept: bool = True
    ) -> None:
        self.learning_rate = learning_rate
        self.average = average
        self.alpha = alpha
        self.fit_intercept = fit_intercept

    def _init(self, d: int) -> None:
        positive_float(self.learning_rate, "learning_rate")
        nonnegative_float(self.alpha, "alpha")
        self._theta = np.zeros(d + 1)
        self._avg = np.zeros(d + 1)
        self.t_ = 0
        self.classes_ = np.array([0, 1])

    def partial_fit(self, X, y, classes=None):
        """One SGD step per row of ``X`` (n, d), in order."""
        first = not hasattr(self, "_theta")
        X, y = validate_data(self, X, y, reset=first, dtype=np.float64)
        y = as_labels(y, "y")
        if classes is not None and not set(np.asarray(classes).tolist()) <= {0, 1}:
            raise ValueError(f"classes: expected labels in {{0, 1}}, got {list(classes)}")
        if first:
            self._init(X.shape[1])
        Xa = (
            np.hstack([X, np.ones((X.shape[0], 1))])
            if self.fit_intercept
            else np.hstack([X, np.zeros((X.shape[0], 1))])
        )
        for i in range(Xa.shape[0]):
            self._step(Xa[i], float(y[i]))
        self._publish()
        return self

    def fit(self, X, y):
        """Reset, then one online pass over the rows of ``X`` in order."""
        for attr in ("_theta", "_avg", "coef_", "intercept_"):
            self.__dict__.pop(attr, None)
        return self.partial_fit(X, y)

    def _step(self, x: np.ndarray, y: float) -> None:
        """One update on the augmented row ``x`` (d + 1,)."""
        self.t_ += 1
        theta, avg, t = self._theta, self._avg, self.t_
        z = float(theta @ x)
        q = 1.0 / (1.0 + math.exp(-max(min(z, 500.0), -500.0)))
        step = self.learning_rate / math.sqrt(t)
        if self.alpha:
            theta *= 1.0 - step * self.alpha
        theta -= (step * (q - y)) * x
        if self.average:  # running mean of the iterates, in place
            avg *= 1.0 - 1.0 / t
            avg += theta * (1.0 / t)

    def _publish(self) -> None:
        w = self._avg if self.average else self._theta
        self.coef_ = w[None, :-1].copy()
        self.intercept_ = w[-1:].copy()

    def decision_function(self, X) -> np.ndarray:
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict_proba(self, X) -> np.ndarray:
        """``(n, 2)``: columns P(y = 0 | x), P(y = 1 | x)."""
        p = expit(self.decision_function(X))
        return np.stack([1 - p, p], axis=1)

    def predict(self, X) -> np.ndarray:
        return (self.decision_function(X) > 0).astype(np.int64)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


def prequential_logistic(
    X: np.ndarray,
    y: np.ndarray,
    *,
    learning_rate: float = 0.5,
    average: bool = True,
    alpha: float = 0.0,
    checkpoints: tuple[int, ...] = (),
) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """The online logistic regression of :class:`OnlineLogisticRegression` on R streams at once.

    ``X`` (R, n, d), ``y`` (R, n) in {0, 1}. Returns ``(probs, weights)``: ``probs`` (R, n) the
    probability of round ``t`` predicted from rounds ``< t`` (0.5 at the first round), and
    ``weights[t]`` (R, d + 1) the predicting weights (intercept last) after ``t`` rounds, for ``t`` in
    ``checkpoints``.
    """
    R, n, d = X.shape
    Xa = np.concatenate([X, np.ones((R, n, 1))], axis=2)
    yf = np.asarray(y, dtype=float)
    theta = np.zeros((R, d + 1))
    avg = np.zeros((R, d + 1))
    probs = np.empty((R, n))
    want = set(int(c) for c in checkpoints)
    saved: dict[int, np.ndarray] = {}
    lr = float(learning_rate)
    for t in range(n):
        xt = Xa[:, t, :]
        w = avg if (average and t > 0) else theta
        probs[:, t] = expit(np.einsum("rd,rd->r", w, xt))
        q = expit(np.einsum("rd,rd->r", theta, xt))
        g = (q - yf[:, t])[:, None] * xt
        if alpha:
            g += alpha * theta
        theta -= (lr / math.sqrt(t + 1)) * g
        avg += (theta - avg) / (t + 1)
        if t + 1 in want:
            saved[t + 1] = (avg if average else theta).copy()
    return probs, saved
