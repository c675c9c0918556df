import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.boost_reweight import (
    ReweightingHead,
    effective_sample_size,
    normalize_weights,
    task_shift_proxy,
    type_coverage,
)


def test_ess_hand_examples():
    assert effective_sample_size([1, 1, 1, 1]) == pytest.approx(4.0)
    assert effective_sample_size([5, 0, 0, 0]) == pytest.approx(1.0)
    assert effective_sample_size([2, 1, 1]) == pytest.approx(16 / 6)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.01, 100.0), min_size=1, max_size=30))
def test_ess_between_one_and_n_and_scale_free(w):
    e = effective_sample_size(w)
    assert 1 - 1e-9 <= e <= len(w) + 1e-9
    assert effective_sample_size(np.asarray(w) * 7.0) == pytest.approx(e)


def test_task_shift_proxy_hand_example():
    p = np.array([0.5, 0.8, 0.2])  # log-odds synthetic-vs-real: 0, -log 4, log 4
    assert task_shift_proxy([1, 1, 1], p) == pytest.approx(0.0, abs=1e-12)
    assert task_shift_proxy([0, 1, 0], p) == pytest.approx(-math.log(4))
    assert task_shift_proxy([1, 0, 3], p) == pytest.approx(3 * math.log(4) / 4)


def test_type_coverage_hand_examples():
    assert type_coverage([1, 1, 1, 1], [0, 1, 2, 3], 4) == pytest.approx(1.0)
    assert type_coverage([1, 1, 0, 0], [0, 0, 1, 2], 3) == pytest.approx(0.0)
    assert type_coverage([1, 1], [0, 1], 4) == pytest.approx(math.log(2) / math.log(4))


def test_normalize_weights_mean_one_and_temperature_limits():
    z = torch.tensor([0.3, -1.0, 2.0, 0.0])
    for t in (0.1, 1.0, 10.0):
        w = normalize_weights(z, t)
        assert float(w.mean()) == pytest.approx(1.0) and bool((w > 0).all())
    assert torch.allclose(normalize_weights(z, 1e4), torch.ones(4), atol=1e-3)
    assert float(normalize_weights(z, 1e-3)[2]) == pytest.approx(4.0)


def test_head_starts_uniform_and_mean_one_per_batch():
    head = ReweightingHead(5, 8)
    x = torch.randn(7, 5)
    assert torch.allclose(head.weights(x), torch.ones(7))
    torch.nn.init.normal_(head.net[2].weight)
    w = head.weights(x).detach()
    assert float(w.mean()) == pytest.approx(1.0) and float(w.std()) > 0


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: normalize_weights(torch.tensor([1.0, 2.0]), 0.0), "temperature"),
        (lambda: normalize_weights(torch.tensor([1.0, -2.0]), -1.0), "temperature"),
        (lambda: normalize_weights(torch.tensor([1.0, float("nan")])), "logits"),
        (lambda: effective_sample_size([1.0, float("nan")]), "weights"),
        (lambda: effective_sample_size([]), "weights"),
        (lambda: task_shift_proxy([1, 1], [0.5, 1.5]), "p_real"),
        (lambda: type_coverage([1, 1], [0, 5], 3), "types"),
        (lambda: ReweightingHead(4, temperature=0), "temperature"),
        (lambda: ReweightingHead(4)(torch.zeros(3, 5)), "features"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
