"""The quick reproduction: report structure, the regret slope, sanity of every metric, its config."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from paperworks.core.claims import INCONCLUSIVE_1_SEED, SlopeClaim
from paperworks.squarecb_comb import EnvironmentConfig, LinearOracle, SemiBanditEnvironment, SquareCBComb
from paperworks.squarecb_comb.experiments import (
    QUICK,
    REGRET_PERMILLE,
    ActLearnRound,
    SquareCBCombExperiment,
    SquareCBCombExperimentConfig,
    loglog_slope,
    time_per_round,
)


def test_loglog_slope_recovers_a_power_law() -> None:
    t = np.geomspace(10, 1000, 9)
    assert loglog_slope(t, 3.0 * t**0.5) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="positive"):
        loglog_slope(t, -t)


def test_config_quick_and_full_are_one_frozen_dataclass() -> None:
    exp = SquareCBCombExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is SquareCBCombExperimentConfig and quick is QUICK
    assert type(quick).__dataclass_params__.frozen and quick != full
    assert full == SquareCBCombExperimentConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.horizon = 10  # type: ignore[misc]
    for bad in (
        {"horizon": 750},  # checkpoints would not be whole rounds
        {"gamma_scale": 0.0},
        {"grid": ((5, 3),)},
        {"grid": ((1, 20),)},  # timing_rounds=0 needs (10, 1000) in the grid
        {"misspec_methods": ("linucb",)},
        {"epsilon": 2.0},
        {"timing_repeats": 1},
    ):
        with pytest.raises(ValueError, match=next(iter(bad))):
            SquareCBCombExperimentConfig(**bad)


def test_claim_declarations() -> None:
    by_key = {c.key: c for c in SquareCBCombExperiment.claims}
    slope = by_key["regret_sqrt_T"]
    assert isinstance(slope, SlopeClaim) and slope.band == (0.35, 0.65) and slope.kind == "mechanism"
    assert slope.sizes == REGRET_PERMILLE
    assert by_key["beats_baselines"].paired and by_key["per_round_time"].machine_dependent


def test_act_learn_round_plays_one_round_per_call_on_a_cycled_pool() -> None:
    env = SemiBanditEnvironment(EnvironmentConfig(50, 3, 4), seed=0)
    agent = SquareCBComb(50, 3, LinearOracle(4), seed=0)
    step = ActLearnRound(agent, env, pool=4)
    assert len(step.contexts) == len(step.paid) == 4 and step.paid[0].shape == (50,)
    assert set(np.unique(np.concatenate(step.paid))) <= {0.0, 1.0}
    for _ in range(6):
        step()
    assert step.calls == 6 and agent.t_ == 6
    with pytest.raises(ValueError, match="pool"):
        ActLearnRound(agent, env, pool=0)


def test_time_per_round_is_the_harness_median_in_seconds() -> None:
    env = SemiBanditEnvironment(EnvironmentConfig(50, 3, 4), seed=0)
    agent = SquareCBComb(50, 3, LinearOracle(4), seed=0)
    s = time_per_round(agent, env, repeats=3)
    assert 0 < s < 1.0
    assert agent.t_ >= 5 + 3  # warm-up calls, then at least one call per timing


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
    assert all(math.isfinite(c.estimate) for c in report.claims)
    expected = dataclasses.asdict(SquareCBCombExperiment().config(True))
    assert report.config == json.loads(json.dumps(expected))  # tuples become lists
    assert report.config["grid"] == [[1, 20], [3, 100]]  # tuples become lists
    assert set(report.tables) == {
        "Realisable: final cumulative regret R_T (mean ± std over seeds)",
        "Misspecified (m=3, A=100): final cumulative regret",
    }
    assert "| (3, 100) |" in next(iter(report.tables.values()))
    md = report.to_markdown()
    assert "## Claims" in md and "regret_sqrt_T" in md


def test_quick_verdicts_with_one_seed(report) -> None:
    res = {c.claim.key: c for c in report.claims}
    assert all(c.verdict == INCONCLUSIVE_1_SEED for c in report.claims)
    # the slope claim's estimate is the mean of the per-configuration slopes (same fit points up to
    # rounding of the checkpoints); sublinear (the 500-round quick slope is not judged against the band)
    s = report.per_seed[0]
    assert res["regret_sqrt_T"].estimate == pytest.approx(s["slope_T_mean"], abs=0.02)
    assert 0.2 < res["regret_sqrt_T"].estimate < 0.8
    # its one-seed interval is the regression's own (12 points), so it exists even with one seed
    assert res["regret_sqrt_T"].lo < res["regret_sqrt_T"].estimate < res["regret_sqrt_T"].hi
    assert res["per_round_time"].estimate < 1000.0


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


def test_figure_is_written_from_the_report_alone(report, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    # a fresh experiment: the figure draws only from report.per_seed (as for a committed report.json)
    names = SquareCBCombExperiment().figures(report, tmp_path)
    assert names == ["regret_vs_T.png"]
    png = tmp_path / names[0]
    assert png.stat().st_size > 20_000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_figures_skip_cleanly_without_matplotlib(report, tmp_path, monkeypatch) -> None:
    import paperworks.squarecb_comb.experiments as ex

    monkeypatch.setattr(ex, "optional_pyplot", lambda: None)
    assert SquareCBCombExperiment().figures(report, tmp_path) == [] and not any(tmp_path.iterdir())
