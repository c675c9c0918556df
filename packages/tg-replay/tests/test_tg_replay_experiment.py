import dataclasses
import json
import math

import numpy as np
import pytest

from paperworks.tg_replay import TruncatedGeometricSampler, UniformSampler
from paperworks.tg_replay.experiments import QUICK, TGReplayConfig, TGReplayExperiment, sampling_time_ratio
from paperworks.tg_replay.training import RunConfig, run_dqn


def test_run_dqn_is_seeded_and_reports_replay_volume():
    cfg = RunConfig(total_steps=600, batch_size=16, learning_starts=64, n_evals=1, eval_envs=2)
    r1 = run_dqn(lambda c: TruncatedGeometricSampler(0.01), cfg, seed=3)
    r2 = run_dqn(lambda c: TruncatedGeometricSampler(0.01), cfg, seed=3)
    np.testing.assert_array_equal(r1.eval_returns, r2.eval_returns)
    assert r1.auc == r2.auc
    # 16 transitions per update, 1 update per 4 env steps, after the learning-start phase
    assert 2.0 < r1.replay_volume < 4.0 + 1e-9
    ru = run_dqn(lambda c: UniformSampler(), cfg, seed=3)
    assert r1.mean_relative_age < ru.mean_relative_age


def test_sampling_time_ratio_uses_the_bench_harness(monkeypatch):
    import paperworks.tg_replay.experiments as ex

    seen = {}
    real = ex.compare

    def spy(sides, **kw):
        res = real(sides, **kw)
        seen.update(kw, sides=sorted(sides), result=res)
        return res

    monkeypatch.setattr(ex, "compare", spy)
    t_tg, t_u, ratio = sampling_time_ratio(size=1000, repeats=20, seed=3)
    assert seen["sides"] == ["tg", "uniform"] and seen["ours"] == "tg" and seen["peer"] == "uniform"
    assert seen["repeats"] == 20 and seen["seed"] == 3 and seen["warmup"] >= 1
    row = seen["result"].row()
    assert len(row.side("tg").times_s) == len(row.side("uniform").times_s) == 20
    # interleaved: both orders occur over the rounds
    assert {o[0] for o in row.order} == {"tg", "uniform"}
    # the claim's ratio is the harness's paired estimate (median of per-round ratios), not t_tg / t_u
    assert ratio == seen["result"].ratio("uniform").estimate
    assert math.isfinite(ratio) and ratio > 0
    assert (t_tg, t_u) == (row.side("tg").median_s, row.side("uniform").median_s) and t_tg > 0 and t_u > 0


def test_quick_experiment_report_structure():
    exp = TGReplayExperiment()
    report = exp.run(quick=True, seeds=1)
    assert report.quick and report.seeds == [0]
    assert {c.claim.key for c in report.claims} == {
        "low_volume_gain",
        "gain_shrinks",
        "entropy_matters",
        "negligible_overhead",
    }
    m = report.per_seed[0]
    for vol in ("low", "high"):
        for s in ("uniform", "tg", "window"):
            assert 0.0 <= m[f"auc_{s}_{vol}"] <= 1.0
    assert m["volume_high"] > m["volume_low"]
    # matched recency: TG and the window replay transitions of about the same relative age,
    # both more recent than uniform
    assert abs(m["rel_age_tg_high"] - m["rel_age_window_high"]) < 0.1
    assert m["rel_age_tg_high"] < m["rel_age_uniform_high"]
    assert m["entropy_window_full_buffer"] < m["entropy_tg_full_buffer"] < m["entropy_uniform_full_buffer"]
    assert math.isclose(m["tg_gain_low_minus_high"], m["tg_gain_low"] - m["tg_gain_high"])
    assert len(report.tables) == 2
    assert "| tg |" in report.to_markdown()
    # one seed, no per-seed standard error: no interval, so no verdict either way
    for r in report.claims:
        assert r.n == 1 and r.verdict == "inconclusive (1 seed)" and r.lo is None
        assert r.estimate == m[r.claim.metric]
        assert r.claim.paired and not r.claim.exact
    timing = {r.claim.key for r in report.claims if r.claim.machine_dependent}
    assert timing == {"negligible_overhead"}
    assert report.config == json.loads(json.dumps(dataclasses.asdict(exp.config(True))))


def test_config_quick_and_full_are_one_frozen_dataclass():
    exp = TGReplayExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is TGReplayConfig and quick is QUICK
    assert type(quick).__dataclass_params__.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.total_steps = 1
    assert quick != full and full == TGReplayConfig()
    assert exp.default_seeds >= 5
    low, high = full.run_config("low"), full.run_config("high")
    assert (low.batch_size, high.batch_size) == (full.batch_low, full.batch_high)
    assert low.total_steps == full.total_steps and low.dqn == full.dqn
    assert low.replay_volume < high.replay_volume


@pytest.mark.parametrize(
    "bad",
    [
        {"batch_low": 128, "batch_high": 8},
        {"tg_mean_age_fraction": 0.0},
        {"timing_repeats": 0},
        {"timing_repeats": 1},
        {"learning_starts": -5},
        {"total_steps": 0},
        {"eps_end": 2.0},
    ],
)
def test_config_rejects_bad_settings(bad):
    with pytest.raises(ValueError):
        TGReplayConfig(**bad)
    with pytest.raises(ValueError, match="volume"):
        QUICK.run_config("medium")
