"""A scikit-learn estimator for bandit PAC learning on a finite class: :class:`BanditPACLearner`.

The domain is a finite set of points ``0..|X|-1``; ``X`` holds point indices, shape ``(n_samples, 1)`` (or
``(n_samples,)``). The estimator wraps :class:`~paperworks.listcascade.learners.ListCascade`:

- ``predict(X)``: the output classifier, which is also the label ListCascade plays next at each point;
- ``partial_fit(X, y_pred, correct)``: bandit feedback for labels played at ``X`` (any labels, e.g.
  from a logged policy; realizable feedback only);
- ``fit(X, y)``: the bandit protocol run on a labelled stream, in order: for each ``x`` it plays
  ``predict(x)`` and learns from ``correct = (predict(x) == y)`` only (the label is used for nothing else);
- ``predict_list(X)``: the candidate lists; ``score`` (accuracy) from ``ClassifierMixin``.

Needs scikit-learn (extra ``sklearn``).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ._validate import check_class
from .learners import TIE_BREAKS, ListCascade

__all__ = ["BanditPACLearner"]


class BanditPACLearner(ClassifierMixin, BaseEstimator):
    """ListCascade as a scikit-learn classifier over a finite class of hypotheses.

    Parameters:
        hypotheses: ``(|H|, |X|)`` integer labels in ``0..K-1``; row ``h`` is the hypothesis
            ``x -> hypotheses[h, x]``.
        n_labels: ``K`` (default: the largest label + 1).
        tie_break: ``"random"`` (a fixed random order at each point, from ``random_state``) or ``"smallest"``.
        random_state: seed of the tie-break order.

    Fitted attributes: ``learner_`` (the :class:`ListCascade`), ``classes_`` (``0..K-1``),
    ``n_features_in_`` (1), ``n_rounds_`` (feedback rounds seen), ``version_space_size_``.
    """

    def __init__(
        self,
        hypotheses: object = None,
        n_labels: int | None = None,
        tie_break: str = "random",
        random_state: int | None = None,
    ) -> None:
        self.hypotheses = hypotheses
        self.n_labels = n_labels
        self.tie_break = tie_break
        self.random_state = random_state

    # -- helpers -------------------------------------------------------------------------------------
    def _new_learner(self) -> ListCascade:
        if self.hypotheses is None:
            raise ValueError("hypotheses: expected a (|H|, |X|) integer array of label patterns, got None")
        if self.tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break: expected one of {list(TIE_BREAKS)}, got {self.tie_break!r}")
        h, k = check_class(self.hypotheses, n_labels=self.n_labels)
        learner = ListCascade(h, k, tie_break=self.tie_break, rng=self.random_state)
        self.learner_ = learner
        self.classes_ = np.arange(k)
        self.n_features_in_ = 1
        self.n_rounds_ = 0
        self.version_space_size_ = learner.size
        return learner

    def _points(self, X: object, name: str = "X") -> np.ndarray:
        a = np.asarray(X)
        if a.ndim == 2 and a.shape[1] == 1:
            a = a[:, 0]
        if a.ndim != 1:
            raise ValueError(
                f"{name}: expected point indices of shape (n_samples, 1) or (n_samples,), got {a.shape}"
            )
        if a.size and a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
            a = a.astype(np.int64)
        if a.dtype.kind not in "iu":
            raise ValueError(f"{name}: expected integer point indices, got dtype {a.dtype}")
        n = self.learner_.n_points
        if a.size and (a.min() < 0 or a.max() >= n):
            raise ValueError(
                f"{name}: expected point indices in 0..{n - 1}, got {int(a.min())}..{int(a.max())}"
            )
        return a.astype(np.int64)

    # -- API -------------------------------------------------------------------------------------------
    def partial_fit(self, X: object, y_pred: object, correct: object) -> BanditPACLearner:
        """Learn from bandit feedback: at each ``X[i]`` the label ``y_pred[i]`` was played and was (or was
        not) correct. Starts from the whole class on the first call."""
        if not hasattr(self, "learner_"):
            self._new_learner()
        x = self._points(X)
        yp = np.asarray(y_pred)
        c = np.asarray(correct)
        if yp.shape != x.shape or c.shape != x.shape:
            raise ValueError(
                f"y_pred, correct: expected shape {x.shape} like X, got {yp.shape} and {c.shape}"
            )
        if c.dtype.kind not in "bui" or (c.size and not np.isin(c, (0, 1)).all()):
            raise ValueError("correct: expected booleans (or 0/1)")
        for xi, yi, ci in zip(x.tolist(), yp.tolist(), c.astype(bool).tolist()):
            self.learner_.update(xi, yi, ci)
            self.n_rounds_ += 1
        self.version_space_size_ = self.learner_.size
        return self

    def fit(self, X: object, y: object) -> BanditPACLearner:
        """Run the bandit protocol on the labelled stream ``(X, y)`` from scratch: play ``predict(x)``, learn
        only whether it equals ``y``."""
        learner = self._new_learner()
        x = self._points(X)
        ya = np.asarray(y)
        if ya.shape != x.shape or ya.dtype.kind not in "iu":
            raise ValueError(
                f"y: expected integer labels of shape {x.shape}, got {ya.shape}, dtype {ya.dtype}"
            )
        for xi, yi in zip(x.tolist(), ya.tolist()):
            guess = learner.propose(xi)
            learner.update(xi, guess, guess == yi)
            self.n_rounds_ += 1
        self.version_space_size_ = learner.size
        return self

    def predict(self, X: object) -> np.ndarray:
        """The output classifier at ``X`` (the head of each candidate list), shape ``(n_samples,)``."""
        check_is_fitted(self, "learner_")
        return self.learner_.predict(self._points(X))

    def predict_list(self, X: object) -> list[np.ndarray]:
        """The candidate list at each point of ``X`` (labels still possible, most-voted first)."""
        check_is_fitted(self, "learner_")
        return [self.learner_.candidates(int(x)) for x in self._points(X)]
