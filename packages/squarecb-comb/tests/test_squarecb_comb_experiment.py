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
    MA_SIZES,
    QUICK,
    REGRET_PERMILLE,
    ActLearnRound,
    SquareCBCombExperiment,
    SquareCBCombExperimentConfig,
    loglog_slope,
    time_per_round,
    tune,
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
        {"gamma_grid": (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0)},
        {"gamma_grid": (1.0, 2.0)},  # grids of unequal size
        {"epsilon_grid": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 2.0)},
        {"grid": ((5, 3),)},
        {"grid": ((1, 20),)},  # timing_rounds=0 needs (10, 1000) in the grid
        {"linear_methods": ("linucb",)},
        {"nonlinear_methods": ("squarecb_comb",)},  # no baseline
        {"tune_seeds": (0, 1)},  # the evaluation seeds
        {"timing_repeats": 1},
    ):
        with pytest.raises(ValueError, match=next(iter(bad))):
            SquareCBCombExperimentConfig(**bad)


def test_claim_declarations() -> None:
    by_key = {c.key: c for c in SquareCBCombExperiment.claims}
    slope = by_key["regret_sqrt_T"]
    assert isinstance(slope, SlopeClaim) and slope.band == (0.4, 0.6) and slope.kind == "mechanism"
    assert slope.sizes == REGRET_PERMILLE
    ma = by_key["regret_sqrt_mA"]
    assert isinstance(ma, SlopeClaim) and ma.band == (0.4, 0.6) and ma.sizes == MA_SIZES
    assert by_key["beats_baselines_linear"].paired and by_key["beats_baselines_nonlinear"].paired
    assert by_key["per_round_time"].machine_dependent


def test_tuning_picks_the_grid_minimum_on_its_own_seeds() -> None:
    cfg = dataclasses.replace(
        QUICK,
        horizon=500,
        nonlinear_horizon=100,
        tune_linear=(2, 20),
        nonlinear=(2, 20),
        grid=((1, 20),),
        timing_rounds=10,
        rff_features=16,
    )
    out = tune(cfg)
    assert set(out) == {"linear", "nonlinear"}
    for kind in out:
        for k, (value, means) in out[kind].items():
            grid = cfg.param_grid(k)
            assert len(means) == len(grid) and value == grid[int(np.argmin(means))]
    assert tune(cfg) == out  # deterministic


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
        "beats_baselines_linear",
        "beats_baselines_nonlinear",
        "per_round_time",
    ]
    assert all(math.isfinite(c.estimate) for c in report.claims)
    expected = dataclasses.asdict(SquareCBCombExperiment().config(True))
    assert report.config == json.loads(json.dumps(expected))  # tuples become lists
    assert report.config["grid"] == [[1, 20], [3, 100], [5, 300], [10, 1000]]  # tuples become lists
    assert set(report.tables) == {
        "Linear environment: final cumulative regret R_T (mean ± std over seeds)",
        "Nonlinear environment (GP reward, m=3, A=100): final cumulative regret",
        "Tuning on seeds [1000] (same grid size for every method)",
    }
    assert "| (3, 100) |" in next(iter(report.tables.values()))
    s = report.per_seed[0]
    for kind, methods in (("linear", QUICK.linear_methods), ("nonlinear", QUICK.nonlinear_methods)):
        for k in methods:
            assert s[f"tuned_{kind}_{k}"] in QUICK.param_grid(k)
    md = report.to_markdown()
    assert "## Claims" in md and "regret_sqrt_T" in md


def test_quick_verdicts_with_one_seed(report) -> None:
    res = {c.claim.key: c for c in report.claims}
    assert all(c.verdict == INCONCLUSIVE_1_SEED for c in report.claims)
    # the slope claim's estimate is the mean of the per-configuration slopes (same fit points up to
    # rounding of the checkpoints); sublinear (the 500-round quick slope is not judged against the band)
    assert 0.2 < res["regret_sqrt_T"].estimate < 0.8
    # its one-seed interval is the regression's own (12 points), so it exists even with one seed
    assert res["regret_sqrt_T"].lo < res["regret_sqrt_T"].estimate < res["regret_sqrt_T"].hi
    assert res["per_round_time"].estimate < 1000.0


def test_quick_regret_is_sublinear_and_finite(report) -> None:
    s = report.per_seed[0]
    for tag in ("m1_A20", "m3_A100", "m5_A300", "m10_A1000"):
        assert 0.2 < s[f"slope_T_{tag}"] < 0.8
    assert 0 < s["ms_per_round_A1000_m10"] < 1000
    assert all(math.isfinite(v) for v in s.values())
    assert all(v >= 0 for k, v in s.items() if "regret" in k)
    assert s["regret_ratio_to_best_baseline_nonlinear"] == pytest.approx(
        s["nonlinear_regret_squarecb_comb"]
        / min(s["nonlinear_regret_per_slot_igw"], s["nonlinear_regret_comb_linucb"])
    )


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
