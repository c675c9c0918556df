import numpy as np
import pytest
import torch

from paperworks.toppo.diagnostics import gram_diagnostics


def test_gram_diagnostics_on_hand_gradients():
    # orthogonal gradients of norms 1 and 10: Gram diag(1, 100), condition 100, spread 100, cosine 0
    d = gram_diagnostics(torch.tensor([[1.0, 0.0, 0.0], [0.0, 10.0, 0.0]]))
    assert d["condition_number"] == pytest.approx(100.0)
    assert d["diag_spread"] == pytest.approx(100.0)
    assert d["mean_cosine"] == pytest.approx(0.0)
    # equal norms at 60 degrees: Gram [[1, .5], [.5, 1]], eigenvalues 1.5 and 0.5
    g = np.array([[1.0, 0.0], [0.5, np.sqrt(3) / 2]])
    d = gram_diagnostics(g)
    assert d["condition_number"] == pytest.approx(3.0)
    assert d["diag_spread"] == pytest.approx(1.0)
    assert d["mean_cosine"] == pytest.approx(0.5)
    # co-linear collapse: rank one, condition number at its finite cap
    d = gram_diagnostics(np.array([[1.0, 1.0], [2.0, 2.0]]))
    assert d["mean_cosine"] == pytest.approx(1.0) and np.isfinite(d["condition_number"])
    assert d["condition_number"] >= 1e10


def test_bad_input():
    with pytest.raises(ValueError, match="G"):
        gram_diagnostics(np.ones((1, 3)))
    with pytest.raises(ValueError, match="G"):
        gram_diagnostics(np.array([[np.inf, 1.0], [1.0, 1.0]]))
