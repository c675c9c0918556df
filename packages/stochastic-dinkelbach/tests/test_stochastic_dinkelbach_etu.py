"""The O(n^2) ETU-optimal F1 predictor against exhaustive enumeration (n <= 12)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from paperworks.stochastic_dinkelbach import etu_expected_f1, etu_optimal_f1, expected_f1


def _exhaustive(p: np.ndarray, zero_division: float = 0.0):
    """max over all 2^n predictions of E[F1] over all 2^n label vectors, and E[F1] of each prediction."""
    n = p.size
    Y = np.array(list(itertools.product((0, 1), repeat=n)), dtype=float)  # (2^n, n)
    prob = np.prod(np.where(Y == 1, p, 1 - p), axis=1)
    H = Y  # the same enumeration for the predictions
    tp = H @ Y.T  # (2^n preds, 2^n labels)
    den = H.sum(1)[:, None] + Y.sum(1)[None, :]
    f = np.where(den > 0, 2 * tp / np.where(den > 0, den, 1), zero_division)
    values = f @ prob
    return float(values.max()), values, H


@pytest.mark.parametrize(
    ("n", "zero_division"), [(1, 0.0), (2, 1.0), (3, 0.0), (5, 1.0), (8, 0.0), (10, 1.0), (12, 0.0)]
)
def test_etu_optimum_matches_exhaustive_enumeration(n, zero_division):
    rng = np.random.default_rng(n)
    for trial in range(1 if n == 12 else 3):
        p = rng.beta(0.6, 0.9, size=n)
        if trial == 1 or n == 12:
            p[: n // 2] = p[0]  # ties
        best, values, _ = _exhaustive(p, zero_division)
        h, value, k = etu_optimal_f1(p, zero_division=zero_division)
        assert value == pytest.approx(best, abs=1e-12)
        assert h.sum() == k
        # E_k equals the enumerated expectation of the top-k prediction for every k
        E, order = etu_expected_f1(p, zero_division=zero_division)
        for kk in range(n + 1):
            top = np.zeros(n)
            top[order[:kk]] = 1
            idx = int("".join(str(int(v)) for v in top), 2)
            assert E[kk] == pytest.approx(values[idx], abs=1e-12)
            assert expected_f1(p, top.astype(int), zero_division=zero_division) == pytest.approx(values[idx])


def test_expected_f1_of_any_prediction_matches_enumeration():
    rng = np.random.default_rng(7)
    p = rng.random(9)
    _, values, H = _exhaustive(p)
    for i in rng.choice(len(H), 20, replace=False):
        assert expected_f1(p, H[i].astype(int)) == pytest.approx(values[i], abs=1e-12)


def test_large_sample_is_fast_and_sane():
    p = np.random.default_rng(0).random(1500)
    h, value, k = etu_optimal_f1(p)
    assert 0 < k < 1500 and 0 < value < 1
    assert value == pytest.approx(expected_f1(p, h), abs=1e-10)


def test_bad_input():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        etu_optimal_f1([0.2, 1.2])
    with pytest.raises(ValueError, match="empty"):
        etu_optimal_f1([])
    with pytest.raises(ValueError, match=r"h: expected labels in \{0, 1\}"):
        expected_f1([0.2, 0.3], [0, 2])
