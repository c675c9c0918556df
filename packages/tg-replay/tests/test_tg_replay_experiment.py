import dataclasses
import json
import math
import time

import numpy as np
import pytest

import paperworks.tg_replay.experiments as ex
from paperworks.tg_replay import TruncatedGeometricSampler, UniformSampler
from paperworks.tg_replay.experiments import QUICK, TGReplayConfig, TGReplayExperiment, gain_slope
from paperworks.tg_replay.training import RunConfig, run_dqn, run_population, run_td3


@pytest.fixture(scope="module")
def quick_report():
    return TGReplayExperiment().run(quick=True, seeds=1)


def test_run_population_is_seeded_and_reports_replay_volume():
    cfg = RunConfig(
        total_steps=800, batch_size=16, learning_starts=64, n_windows=2, updates_per_vector_step=1
    )
    r1 = run_dqn(lambda c: TruncatedGeometricSampler(0.01), cfg, seed=3)
    r2 = run_dqn(lambda c: TruncatedGeometricSampler(0.01), cfg, seed=3)
    np.testing.assert_array_equal(r1.curve_returns, r2.curve_returns)
    assert r1.auc == r2.auc and r1.episodes > 0
    # 16 transitions per update, 1 update per 4 env steps, after the learning-start phase
    assert 3.0 < r1.replay_volume < 4.0 + 1e-9
    ru = run_dqn(lambda c: UniformSampler(), cfg, seed=3)
    assert r1.mean_relative_age < ru.mean_relative_age


def test_identical_samplers_give_identical_agents():
    # the pairing is exact: agents of one population differ only by their sampler, so two agents with
    # the same sampler (and batch) learn the same, and the paired difference is exactly 0
    for env_id in ("CartPole-v1", "Pendulum-v1"):
        cfg = RunConfig(
            env_id=env_id, total_steps=600, num_envs=2, batch_size=8, learning_starts=100, n_windows=2
        )
        a, b, c = run_population(
            [UniformSampler(), UniformSampler(), TruncatedGeometricSampler(0.02)], cfg, seed=1
        )
        np.testing.assert_array_equal(a.curve_returns, b.curve_returns)
        assert a.mean_age == b.mean_age and a.auc == b.auc
        assert c.mean_age < a.mean_age  # ...and a different sampler does make a difference


def test_experiment_gains_vanish_when_tg_is_replaced_by_uniform(monkeypatch):
    # every claim quantity is a paired difference of the right agents: with TG swapped for uniform
    # (same seeds), each gain is exactly 0; a label mix-up between agents would break this
    def all_uniform(cfg, task):
        return [UniformSampler() for _ in cfg.agents()]

    monkeypatch.setattr(ex, "_samplers", all_uniform)
    cfg = dataclasses.replace(QUICK, tasks=("CartPole-v1",), timing_repeats=2, timing_buffer=1000)
    monkeypatch.setattr(TGReplayExperiment, "config", lambda self, quick: cfg)
    m = TGReplayExperiment().run_seed(0, quick=True, progress=ex.Progress(enabled=False))
    for k in ("gain_low", "gain_high", "gain_slope", "tg_minus_window"):
        assert m[k] == 0.0


def test_gain_slope_is_the_least_squares_slope_on_log2_volume():
    rng = np.random.default_rng(0)
    v = np.array([2.0, 4.0, 8.0, 16.0])
    g = 0.3 - 0.07 * np.log2(v) + rng.normal(0, 0.01, 4)
    assert math.isclose(gain_slope(v, g), np.polyfit(np.log2(v), g, 1)[0], rel_tol=1e-12)
    assert math.isclose(gain_slope(v, 0.3 - 0.07 * np.log2(v)), -0.07, rel_tol=1e-12)


def test_sampling_time_ratio_detects_a_slower_sampler(monkeypatch):
    # the overhead claim's quantity must move when TG really costs more: slow TG's draw down and the
    # ratio must exceed 1 by about the added time (a test of t_tg / t_uniform would pass by definition)
    real = TruncatedGeometricSampler._draw

    def slow(self, size, batch_size, rng):
        t = time.perf_counter()
        while time.perf_counter() - t < 2e-4:
            pass
        return real(self, size, batch_size, rng)

    _, _, fair = ex.sampling_time_ratio(size=1000, repeats=15, seed=3)
    monkeypatch.setattr(TruncatedGeometricSampler, "_draw", slow)
    t_tg, t_u, slowed = ex.sampling_time_ratio(size=1000, repeats=15, seed=3)
    assert slowed > 1.5 * fair and slowed > 2.0
    assert t_tg > t_u + 1.5e-4


def test_quick_experiment_report_structure(quick_report):
    report = quick_report
    exp = TGReplayExperiment()
    assert report.quick and report.seeds == [0]
    assert {c.claim.key for c in report.claims} == {
        "low_volume_gain",
        "gain_shrinks_with_volume",
        "competitive_at_high_volume",
        "entropy_matters",
        "negligible_overhead",
    }
    m = report.per_seed[0]
    for lab in ex.TASK_LABELS.values():
        for name, b in QUICK.agents():
            assert -0.5 <= m[f"auc/{lab}/{name}/B{b}"] <= 1.5
        # measured volume grows with the batch; TG and the window replay more recent data than uniform
        vols = [m[f"volume/{lab}/uniform/B{b}"] for b in QUICK.batch_sizes]
        assert vols == sorted(vols) and vols[0] > 0
        assert m[f"rel_age/{lab}/tg/B4"] < m[f"rel_age/{lab}/uniform/B4"]
        assert abs(m[f"rel_age/{lab}/tg/B32"] - m[f"rel_age/{lab}/window/B32"]) < 0.1
        ent = [m[f"entropy_full_buffer/{lab}/{s}"] for s in ("window", "tg", "uniform")]
        assert ent == sorted(ent)
    assert len(report.tables) == 5
    assert "Acrobot-v1" in report.to_markdown()
    for r in report.claims:  # one seed: no interval, so no verdict either way
        assert r.n == 1 and r.verdict == "inconclusive (1 seed)" and r.lo is None
        assert r.estimate == m[r.claim.metric]
    assert {r.claim.key for r in report.claims if r.claim.machine_dependent} == {"negligible_overhead"}
    assert report.config == json.loads(json.dumps(dataclasses.asdict(exp.config(True))))


def test_figures_write_non_empty_pngs(quick_report, tmp_path):
    pytest.importorskip("matplotlib")
    names = TGReplayExperiment().figures(quick_report, tmp_path)
    assert names == ["gain_vs_volume.png", "learning_curves.png"]
    for n in names:
        data = (tmp_path / n).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_figures_skip_without_matplotlib(quick_report, tmp_path, monkeypatch):
    monkeypatch.setattr(ex, "optional_pyplot", lambda: None)
    assert TGReplayExperiment().figures(quick_report, tmp_path) == []


def test_config_quick_and_full_are_one_frozen_dataclass():
    exp = TGReplayExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is TGReplayConfig and quick is QUICK
    assert type(quick).__dataclass_params__.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.cartpole_steps = 1
    assert quick != full and full == TGReplayConfig()
    assert exp.default_seeds >= 5
    assert len(full.batch_sizes) >= 4 and set(full.tasks) == {"CartPole-v1", "Acrobot-v1", "Pendulum-v1"}
    for t in full.tasks:
        rc = full.run_config(t)
        assert rc.agent == ("td3" if t == "Pendulum-v1" else "dqn") and rc.total_steps == full.steps(t)
    vols = [full.volume("CartPole-v1", b) for b in full.batch_sizes]
    assert vols == sorted(vols) and vols[-1] / vols[0] >= 8


def test_continuous_tasks_need_td3_and_discrete_need_dqn():
    with pytest.raises(ValueError, match="DQN needs a discrete action space; Pendulum-v1"):
        run_dqn(
            lambda c: UniformSampler(),
            RunConfig(env_id="Pendulum-v1", total_steps=200, learning_starts=10),
            seed=0,
        )
    with pytest.raises(ValueError, match="TD3 needs a continuous action space"):
        run_td3(lambda c: UniformSampler(), RunConfig(total_steps=200, learning_starts=10), seed=0)


@pytest.mark.parametrize(
    "bad",
    [
        {"batch_sizes": (32, 8, 4)},
        {"batch_sizes": (4, 8)},
        {"tg_mean_age_fraction": 0.0},
        {"timing_repeats": 1},
        {"learning_starts": -5},
        {"cartpole_steps": 0},
        {"eps_fraction": 2.0},
        {"tasks": ("MountainCar-v0",)},
    ],
)
def test_config_rejects_bad_settings(bad):
    with pytest.raises(ValueError):
        TGReplayConfig(**bad)
