"""``CoherentL2D``: coherent deferral on top of any probabilistic scikit-learn classifier.

One clone of ``estimator`` per node of the taxonomy learns ``P(y_v = 1 | x)`` (binary relevance); with the
expert's per-node accuracy and deferral cost these give the expected utilities of the three actions
(:func:`~.projection.expected_utilities`), and the decisions are their exact coherent projection
(``decoder="projection"``, the Bayes-optimal coherent rule when the probabilities are right) or the
per-node argmax (``decoder="nodewise"``, nodewise Bayes L2D, which may be incoherent).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import LogisticRegression
from sklearn.utils.validation import check_is_fitted, validate_data

from paperworks.core.validate import one_of

from .projection import coherent_projection, expected_utilities, nodewise_actions
from .taxonomy import Taxonomy

__all__ = ["CoherentL2D"]


class CoherentL2D(BaseEstimator):
    """Coherent hierarchical L2D over a binary-relevance base classifier.

    Args:
        estimator: a classifier with ``predict_proba`` (default ``LogisticRegression(max_iter=1000)``),
            cloned once per node.
        taxonomy: the :class:`~.taxonomy.Taxonomy` (its ``n`` nodes are the label columns).
        expert_accuracy: the expert's accuracy per node, (n,) in [0, 1].
        deferral_cost: the cost of deferring each node, (n,) >= 0.
        decoder: ``"projection"`` (coherent) or ``"nodewise"``.

    ``fit(X, Y)``: Y (m, n) 0/1 labels consistent with the taxonomy (inconsistent rows raise, naming
    the first one). ``predict_proba(X)`` (m, n), ``decision_function(X)`` the expected utilities (m, n, 3),
    ``predict_actions(X)`` (m, n) in {0: present, 1: absent, 2: defer}.
    """

    def __init__(
        self,
        estimator: object = None,
        taxonomy: Taxonomy | None = None,
        expert_accuracy: object = None,
        deferral_cost: object = None,
        decoder: str = "projection",
    ):
        self.estimator = estimator
        self.taxonomy = taxonomy
        self.expert_accuracy = expert_accuracy
        self.deferral_cost = deferral_cost
        self.decoder = decoder

    def _check_params(self) -> Taxonomy:
        if not isinstance(self.taxonomy, Taxonomy):
            raise TypeError(f"taxonomy: expected a Taxonomy, got {type(self.taxonomy).__name__}")
        one_of(self.decoder, "decoder", ("projection", "nodewise"))
        n = self.taxonomy.n
        for name in ("expert_accuracy", "deferral_cost"):
            v = np.asarray(getattr(self, name), dtype=float)
            if v.shape != (n,):
                raise ValueError(f"{name}: expected shape ({n},), got {v.shape}")
        # value checks (accuracies in [0, 1], costs >= 0) happen in expected_utilities
        expected_utilities(np.zeros((1, n)), self.expert_accuracy, self.deferral_cost)
        return self.taxonomy

    def fit(self, X: object, Y: object) -> CoherentL2D:
        tax = self._check_params()
        X = validate_data(self, X, dtype=np.float64)
        Y = tax.check_labels(np.asarray(Y), "Y")
        if Y.shape[0] != X.shape[0]:
            raise ValueError(f"Y: expected {X.shape[0]} rows (one per row of X), got {Y.shape[0]}")
        base = self.estimator if self.estimator is not None else LogisticRegression(max_iter=1000)
        self.estimators_ = []
        for v in range(tax.n):
            y = Y[:, v]
            if y.min() == y.max():  # a label that never (or always) occurs: a constant probability
                self.estimators_.append(float(y[0]))
            else:
                self.estimators_.append(clone(base).fit(X, y))
        return self

    def predict_proba(self, X: object) -> np.ndarray:
        """``P(y_v = 1 | x)`` per node (m, n), made coherent along each path (a child's probability is
        capped at its parent's, which the binary-relevance models do not enforce)."""
        check_is_fitted(self, "estimators_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        P = np.column_stack(
            [
                np.full(X.shape[0], e) if isinstance(e, float) else e.predict_proba(X)[:, 1]
                for e in self.estimators_
            ]
        )
        for nodes in self.taxonomy.levels[1:]:
            P[:, nodes] = np.minimum(P[:, nodes], P[:, self.taxonomy.parent[nodes]])
        return P

    def decision_function(self, X: object) -> np.ndarray:
        """Expected utilities (m, n, 3) of (present, absent, defer)."""
        return expected_utilities(self.predict_proba(X), self.expert_accuracy, self.deferral_cost)

    def predict_actions(self, X: object) -> np.ndarray:
        """Actions (m, n): the coherent projection of the expected utilities, or their per-node argmax."""
        U = self.decision_function(X)
        return coherent_projection(self.taxonomy, U) if self.decoder == "projection" else nodewise_actions(U)

    predict = predict_actions
