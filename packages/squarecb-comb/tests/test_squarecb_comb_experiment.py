"""The quick reproduction: report structure, the regret slope, sanity of every metric."""

from __future__ import annotations

import math

import numpy as np
import pytest

from paperworks.squarecb_comb.experiments import SquareCBCombExperiment, loglog_slope


def test_loglog_slope_recovers_a_power_law() -> None:
    t = np.geomspace(10, 1000, 9)
    assert loglog_slope(t, 3.0 * t**0.5) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="positive"):
        loglog_slope(t, -t)


@pytest.fixture(scope="module")
def report():
    return SquareCBCombExperiment().run(quick=True, seeds=1)


def test_quick_report_structure(report) -> None:
    assert [c.claim.key for c in report.claims] == [
        "regret_sqrt_T",
        "regret_sqrt_mA",
        "beats_baselines",
        "per_round_time",
    ]
    assert all(c.measured is not None and math.isfinite(c.measured.mean) for c in report.claims)
    assert set(report.tables) == {
        "Realisable: final cumulative regret R_T (mean ± std over seeds)",
        "Misspecified (m=3, A=100): final cumulative regret",
    }
    assert "| (3, 100) |" in next(iter(report.tables.values()))
    md = report.to_markdown()
    assert "## Claims" in md and "regret_sqrt_T" in md


def test_quick_regret_is_sublinear_with_slope_near_half(report) -> None:
    s = report.per_seed[0]
    for tag in ("m1_A20", "m3_A100"):
        assert 0.2 < s[f"slope_T_{tag}"] < 0.8
    # regret grows with m A, but slower than linearly
    assert 0.1 < s["slope_mA"] < 0.9
    assert 0 < s["ms_per_round_A1000_m10"] < 1000
    # the combinatorial program beats the naive per-arm extension once m > 1
    assert s["regret_squarecb_comb_m3_A100"] < s["regret_perarm_squarecb_m3_A100"]
    assert all(math.isfinite(v) for v in s.values())
    assert all(v >= 0 for k, v in s.items() if "regret" in k)
