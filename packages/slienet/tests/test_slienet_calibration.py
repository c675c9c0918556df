import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.slienet import (
    SlieCalibrator,
    SlieSelection,
    calibrate_subset,
    ensemble_accuracy,
    subset_masks,
)


def _random_probs(k, n, c, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(2 * torch.randn(k, n, c, generator=g, dtype=torch.float64), -1), torch.randint(
        0, c, (n,), generator=g
    )


def _brute_force(p, y, depth):
    best, best_acc = None, -1.0
    for r in range(1, depth + 1):
        for sub in itertools.combinations(range(depth), r):
            avg = sum(p[i] for i in sub) / len(sub)
            acc = float((avg.argmax(-1) == y).double().mean())
            if acc > best_acc + 1e-12:
                best, best_acc = sub, acc
    return best, best_acc


@settings(max_examples=25, deadline=None)
@given(k=st.integers(1, 5), n_extra=st.integers(0, 30), c=st.integers(2, 6), seed=st.integers(0, 10_000))
def test_search_equals_brute_force(k, n_extra, c, seed):
    p, y = _random_probs(k + 1, c + n_extra, c, seed)
    sel = calibrate_subset(p, y, k)
    sub, acc = _brute_force(p, y, k)
    assert sel.subset == sub
    assert sel.accuracy == pytest.approx(acc)
    assert len(sel.all_accuracies) == 2**k - 1


def test_subset_masks_order_and_count():
    m = subset_masks(3)
    assert m.shape == (7, 3)
    rows = [tuple(int(v) for v in r) for r in m]
    assert rows[:3] == [(1, 0, 0), (0, 1, 0), (0, 0, 1)] and rows[-1] == (1, 1, 1)
    assert len(set(rows)) == 7


def test_ensemble_of_identical_members_equals_member():
    p, y = _random_probs(1, 40, 4, 1)
    same = p.repeat(3, 1, 1)
    acc = ensemble_accuracy(same, y, subset_masks(3))
    assert torch.allclose(acc, acc[0].expand_as(acc))


def test_diverse_ics_ensemble_beats_each_member():
    # three ICs, each confidently wrong on a different third of the samples: each alone scores 2/3, any
    # pair's average is always right, and the tie-break returns the smallest, shallowest pair
    n, c = 30, 3
    y = torch.arange(n) % c
    p = torch.full((3, n, c), 0.05)
    for j in range(3):
        wrong = torch.arange(n) // 10 == j
        p[j, torch.arange(n), y] = torch.where(wrong, 0.3, 0.9)
        p[j, torch.arange(n), (y + 1) % c] = torch.where(wrong, 0.65, 0.05)
    p = p / p.sum(-1, keepdim=True)
    sel = calibrate_subset(p, y, 3)
    assert sel.all_accuracies[:3] == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    assert sel.subset == (0, 1) and sel.accuracy == 1.0


def test_errors():
    p, y = _random_probs(3, 10, 4, 0)
    with pytest.raises(ValueError, match="fewer than the 20 classes"):
        calibrate_subset(*_random_probs(3, 10, 20, 0), depth=2)
    with pytest.raises(ValueError, match=r"depth: expected an int >= 1 <= 3"):
        calibrate_subset(p, y, 4)
    with pytest.raises(ValueError, match="depth"):
        calibrate_subset(p, y, 0)
    with pytest.raises(ValueError, match="empty subset"):
        SlieSelection((), 2, 0.5, ())
    with pytest.raises(ValueError, match="at least one IC"):
        ensemble_accuracy(p, y, torch.zeros(1, 3))
    with pytest.raises(ValueError, match="softmax outputs"):
        calibrate_subset(p * 2, y, 2)
    with pytest.raises(ValueError, match="summing to 1"):
        calibrate_subset(p * 0.5, y, 2)
    bad = p.clone()
    bad[0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        calibrate_subset(bad, y, 2)
    with pytest.raises(ValueError, match="labels: expected class indices"):
        calibrate_subset(p, y + 10, 2)
    with pytest.raises(ValueError, match=r"ic_probs: expected a non-empty tensor of shape \(K, N, C\)"):
        calibrate_subset(p[0], y, 1)


def test_calibrator_estimator_api():
    p, y = _random_probs(4, 50, 5, 3)
    cal = SlieCalibrator(depth=3)
    with pytest.raises(RuntimeError, match="call fit"):
        cal.predict(p)
    cal.fit(p, y)
    assert cal.depth_ == 3 and all(i < 3 for i in cal.subset_)
    pred = cal.predict(p)
    assert pred.shape == (50,)
    assert np.mean(pred == y.numpy()) == pytest.approx(cal.calibration_accuracy_)
