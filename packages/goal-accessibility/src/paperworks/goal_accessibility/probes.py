"""Residual-stream probes: per-layer logistic regression, scored by cross-validated ROC AUC.

For layer ``l`` (0: the input embedding, the control) the features are the hidden states at the probe
position (the queried key), the label is the episode's recall outcome (or a goal-content class). The
AUC is out-of-fold (stratified K-fold, folds split by sample), so a probe that memorises scores ~0.5
on shuffled labels. Multi-class labels get the one-vs-rest macro AUC.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paperworks.core.validate import finite_array, fraction, int_in_range, positive_float

__all__ = ["emergence_layer", "layer_probe_aucs", "probe_auc"]


def probe_auc(features, labels, *, folds: int = 5, seed: int = 0, C: float = 1.0) -> float:
    """Out-of-fold ROC AUC of a standardised logistic-regression probe of ``labels`` from ``features``.

    ``features``: (n, d) real; ``labels``: (n,) ints or bools with >= 2 classes, each with >= ``folds``
    samples. Binary: the AUC of the positive class; multi-class: one-vs-rest macro AUC.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = finite_array(features, "features", ndim=2)
    y = np.asarray(labels)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"labels: expected shape ({X.shape[0]},) to match features, got {y.shape}")
    if y.dtype.kind not in "biu":
        raise ValueError(f"labels: expected integer or bool class labels, got dtype {y.dtype}")
    folds = int_in_range(folds, "folds", 2)
    positive_float(C, "C")
    classes, counts = np.unique(y, return_counts=True)
    if classes.size < 2:
        raise ValueError(f"labels: expected at least two classes for a probe, got one ({classes.tolist()})")
    if counts.min() < folds:
        raise ValueError(f"labels: every class needs >= folds={folds} samples, got counts {counts.tolist()}")
    probe = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=500))
    cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    proba = cross_val_predict(probe, X, y, cv=cv, method="predict_proba")
    if classes.size == 2:
        return float(roc_auc_score(y == classes[1], proba[:, 1]))
    return float(roc_auc_score(y, proba, multi_class="ovr", average="macro", labels=classes))


def layer_probe_aucs(
    hidden_states: Sequence, labels, *, folds: int = 5, seed: int = 0, C: float = 1.0
) -> np.ndarray:
    """(L+1,) probe AUC per layer; ``hidden_states[l]``: (n, d) features of layer ``l`` (0: embedding)."""
    if len(hidden_states) < 1:
        raise ValueError("hidden_states: expected at least one layer of features")
    return np.array([probe_auc(np.asarray(h), labels, folds=folds, seed=seed, C=C) for h in hidden_states])


def emergence_layer(aucs, threshold: float = 0.8) -> int:
    """The first layer whose probe AUC reaches ``threshold`` (``len(aucs)`` when none does)."""
    a = finite_array(aucs, "aucs", ndim=1)
    fraction(threshold, "threshold")
    hit = np.flatnonzero(a >= threshold)
    return int(hit[0]) if hit.size else int(a.size)
