import math

import numpy as np
import pytest

from paperworks.tg_replay import (
    ReplayMonitor,
    TruncatedGeometricSampler,
    UniformSampler,
    expected_recency,
    relative_recency,
    replay_volume,
    sampling_entropy,
)


def test_replay_volume_is_utd_times_batch():
    assert replay_volume(256, 0.5) == 128.0
    with pytest.raises(ValueError, match="batch_size"):
        replay_volume(0, 1)
    with pytest.raises(ValueError, match="updates_per_step"):
        replay_volume(32, float("nan"))


def test_pmf_functions_on_uniform_and_point_mass():
    n = 9
    u = np.full(n, 1 / n)
    assert expected_recency(u) == pytest.approx(4.0)
    assert relative_recency(u) == pytest.approx(0.5)
    assert sampling_entropy(u) == pytest.approx(math.log(n))
    point = np.eye(n)[0]
    assert expected_recency(point) == 0 and sampling_entropy(point) == 0
    assert relative_recency(np.array([1.0])) == 0.0


@pytest.mark.parametrize(
    ("pmf", "msg"),
    [
        (np.array([0.5, 0.6]), "sum to 1"),
        (np.array([1.5, -0.5]), ">= 0"),
        (np.array([]), "non-empty"),
        (np.array([np.nan, 1.0]), "NaN"),
    ],
)
def test_pmf_validation(pmf, msg):
    with pytest.raises(ValueError, match=msg):
        sampling_entropy(pmf)


def test_monitor_matches_sampler_closed_form():
    s = TruncatedGeometricSampler(0.01)
    mon = ReplayMonitor()
    rng = np.random.default_rng(0)
    for _ in range(200):
        mon.step(4)
        mon.update(s.sample(1000, 64, rng=rng), 1000)
    st = mon.compute()
    assert st.replay_volume == pytest.approx(16.0)
    assert st.mean_age == pytest.approx(s.expected_recency(1000), rel=0.03)
    assert st.mean_relative_age == pytest.approx(s.expected_recency(1000) / 999, rel=0.03)
    mon2 = ReplayMonitor()
    mon2.step(1)
    mon2.update(UniformSampler().sample(101, 20_000, rng=rng), 101)
    assert mon2.compute().mean_relative_age == pytest.approx(0.5, abs=0.02)
    with pytest.raises(ValueError, match="no sampled ages"):
        ReplayMonitor().compute()
    with pytest.raises(ValueError, match="ages"):
        mon.update(np.array([5]), 5)
