"""The protocol: error curves, the stopping rule, m(eps) on hand-made curves, eps/delta checks, streams."""

from __future__ import annotations

import numpy as np
import pytest

from paperworks.listcascade import (
    ErrorCurve,
    ListCascade,
    Stream,
    all_functions,
    geometric_weights,
    measure_sample_complexity,
    run_protocol,
    sample_complexity,
    success_rate,
)


def _curve(times, errors, rounds, stop=0.05, censored=False):
    return ErrorCurve(np.array(times), np.array(errors, dtype=float), rounds, stop, censored, len(times) - 1)


def test_sample_complexity_on_hand_made_curves():
    # 10 runs; run i reaches error 0 at round 10 (i + 1)
    curves = [_curve([0, 10 * (i + 1)], [0.5, 0.0], 10 * (i + 1)) for i in range(10)]
    assert sample_complexity(curves, 0.1, confidence=0.9) == 90  # 9 of 10 runs done at round 90
    assert sample_complexity(curves, 0.1, confidence=0.5) == 50
    rate = success_rate(curves, 0.1)
    assert rate[0] == 0.0 and rate[10] == 0.1 and rate[-1] == 1.0
    # a run that ended (uncensored) counts as a success afterwards: its unknown points weigh <= stop
    assert success_rate([_curve([0, 3], [0.5, 0.04], 3)], 0.05)[-1] == 1.0


def test_censored_runs_keep_their_last_error():
    curves = [_curve([0], [0.5], 100, censored=True)] * 2
    assert sample_complexity(curves, 0.1) is None


def test_eps_below_the_stop_mass_is_refused():
    with pytest.raises(ValueError, match="stop_mass"):
        success_rate([_curve([0, 5], [0.3, 0.0], 5, stop=0.1)], 0.05)


def test_error_curve_steps():
    c = _curve([0, 4, 9], [0.6, 0.3, 0.0], 12)
    assert [c.error_at(t) for t in (0, 3, 4, 8, 9, 12)] == [0.6, 0.6, 0.3, 0.3, 0.0, 0.0]
    with pytest.raises(ValueError, match="t: expected"):
        c.error_at(13)


def test_run_stops_when_unknown_points_are_light_and_error_is_exact():
    h = all_functions(6, 3)
    w = geometric_weights(6)
    target = h[200]
    lc = ListCascade(h, 3, rng=0)
    c = run_protocol(lc, target, w, Stream(w, 1), stop_mass=0.05)
    assert not c.censored
    assert w[~lc.known()].sum() <= 0.05
    assert c.final_error == pytest.approx(w[lc.predict(np.arange(6)) != target].sum())
    assert np.all(np.diff(c.times) > 0) and c.errors[0] > c.final_error


def test_streams_are_shared_and_repeatable():
    w = geometric_weights(5)
    a, b = Stream(w, 3), Stream(w, 3)
    assert a.points(0, 10) == b.points(0, 10)
    assert a.points(5, 5000)[:5] == b.points(0, 5000)[5:10]
    counts = np.bincount(Stream(w, 0).points(0, 20000), minlength=5) / 20000
    assert np.allclose(counts, w, atol=0.02)


def test_geometric_weights():
    w = geometric_weights(4)
    assert np.allclose(w, np.array([8, 4, 2, 1]) / 15)
    assert np.allclose(geometric_weights(3, ratio=1.0), 1 / 3)
    with pytest.raises(ValueError, match="ratio"):
        geometric_weights(3, ratio=0.0)


def test_measure_sample_complexity_checks_eps_delta_and_target():
    h = all_functions(4, 3)
    w = geometric_weights(4)
    m_lc = measure_sample_complexity(h, h[10], w, eps=0.1, delta=0.1, n_draws=10)
    m_full = measure_sample_complexity(h, h[10], w, eps=0.1, delta=0.1, n_draws=10, method="full_info")
    assert m_lc >= m_full >= 1
    for bad in ({"eps": 0.0}, {"eps": 1.0}, {"eps": 0.1, "delta": 1.5}, {"eps": 0.1, "delta": 0.0}):
        with pytest.raises(ValueError, match=r"eps|delta"):
            measure_sample_complexity(h, h[10], w, **bad)
    with pytest.raises(ValueError, match="not a hypothesis"):
        measure_sample_complexity(all_functions(4, 2), np.array([2, 0, 0, 0]), w, eps=0.1)
    with pytest.raises(ValueError, match="weights"):
        measure_sample_complexity(h, h[10], np.ones(3) / 3, eps=0.1)
    with pytest.raises(ValueError, match="method"):
        measure_sample_complexity(h, h[10], w, eps=0.1, method="oracle")
