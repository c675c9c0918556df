"""Probes: shuffled labels give AUC ~ 0.5, a planted direction is found, one class is rejected."""

import numpy as np
import pytest

from paperworks.goal_accessibility import emergence_layer, layer_probe_aucs, probe_auc


def test_shuffled_labels_give_chance_and_a_planted_direction_is_decoded():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 8))
    y = (X[:, 0] + 0.3 * rng.normal(size=400) > 0).astype(int)
    assert probe_auc(X, y) > 0.95
    shuffled = [probe_auc(X, rng.permutation(y), seed=s) for s in range(5)]
    # out-of-fold AUC under the null sits slightly below 0.5 (the known negative bias of K-fold CV)
    assert abs(np.mean(shuffled) - 0.5) < 0.08 and max(shuffled) < 0.6


def test_layer_aucs_and_emergence():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 300)
    layers = [rng.normal(size=(300, 4)), rng.normal(size=(300, 4)) + 1.5 * y[:, None]]
    aucs = layer_probe_aucs(layers, y, folds=3)
    assert aucs[0] < 0.65 and aucs[1] > 0.8
    assert emergence_layer(aucs, 0.8) == 1 and emergence_layer([0.5, 0.6], 0.8) == 2


def test_multiclass_content_probe():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 4, 400)
    X = np.eye(4)[y] + 0.5 * rng.normal(size=(400, 4))
    assert probe_auc(X, y, folds=3) > 0.9


def test_probe_bad_input():
    X = np.zeros((10, 2))
    with pytest.raises(ValueError, match="labels"):
        probe_auc(X, np.ones(10, dtype=int))
    with pytest.raises(ValueError, match="labels"):
        probe_auc(X, np.ones(9, dtype=int))
    with pytest.raises(ValueError, match="features"):
        probe_auc(np.full((10, 2), np.nan), np.arange(10) % 2)
