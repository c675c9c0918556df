import dataclasses
import json
import math

import numpy as np
import pytest

from paperworks.smnc_dag.experiments import (
    QUICK,
    SMNCExperiment,
    SMNCExperimentConfig,
    _equal_time,
    cycle_survival_study,
)

EXACT = {"product-decays", "grad-1-over-L"}
PAIRED = {
    "beats-dagma",
    "beats-dagma-sid",
    "beats-dagma-equal-time",
    "beats-dagma-nonlinear",
    "normalisation-ablation",
    "separation-ablation",
    "ancestry-helps",
}


@pytest.fixture(scope="module")
def report():
    return SMNCExperiment().run(quick=True, seeds=1)


def test_quick_experiment_report_structure(report):
    assert report.slug == "smnc-dag"
    assert len(report.claims) == len(SMNCExperiment.claims)
    s = report.summary
    for name in ("smnc", "dagma", "dagma_eq"):
        assert 0 <= s[f"ER2-d8.{name}.shd"].mean <= 8 * 7
        assert 0 <= s[f"ER2-d8.{name}.sid"].mean <= 8 * 7
    for name in ("smnc", "product", "single", "smnc_anc", "sep_noclosure"):
        assert 0 <= s[f"ablation.{name}.tpr"].mean <= 1
    # the gains are differences of the per-method scores on the same data (one setting in quick)
    for gain, a, b in (
        ("shd_gain_vs_dagma", "ER2-d8.dagma.shd", "ER2-d8.smnc.shd"),
        ("sid_gain_vs_dagma", "ER2-d8.dagma.sid", "ER2-d8.smnc.sid"),
        ("shd_gain_vs_dagma_equal_time", "ER2-d8.dagma_eq.shd", "ER2-d8.smnc.shd"),
        ("nonlinear.shd_gain_vs_dagma_equal_time", "nonlinear.dagma_eq.shd", "nonlinear.smnc.shd"),
        ("shd_gain_vs_product", "ablation.product.shd", "ablation.smnc.shd"),
        ("shd_gain_vs_single", "ablation.single.shd", "ablation.smnc.shd"),
        ("shd_gain_from_ancestry", "ablation.smnc.shd", "ablation.smnc_anc.shd"),
    ):
        assert s[gain].mean == s[a].mean - s[b].mean
    assert s["closure.smnc_grad_slope_error"].mean < 1e-6
    assert s["ER2-d8.dagma_eq.budget_factor"].mean <= 1
    assert "Closure studies (planted cycles)" in report.tables
    assert "| SMNC (separated + normalised closure) |" in next(iter(report.tables.values()))


def test_quick_verdicts_one_seed(report):
    by_key = {r.claim.key: r for r in report.claims}
    for key, r in by_key.items():
        assert r.n == 1
        if key in EXACT:
            assert r.claim.exact and r.verdict == "holds" and r.estimate <= 1e-6
        else:
            assert not r.claim.exact
            assert r.verdict == "inconclusive (1 seed)" and r.lo is None and r.hi is None
    assert by_key["cycles-survive"].claim.kind == "mechanism"
    assert {k for k, r in by_key.items() if r.claim.paired} == PAIRED
    assert {k for k, r in by_key.items() if r.claim.machine_dependent} == {
        "beats-dagma-equal-time",
        "beats-dagma-nonlinear",
    }


def test_figure_is_a_non_empty_png(report, tmp_path):
    pytest.importorskip("matplotlib")
    names = SMNCExperiment().figures(report, tmp_path)
    assert names == ["smnc_vs_dagma.png"]
    data = (tmp_path / names[0]).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_figures_skip_cleanly_without_matplotlib(report, tmp_path, monkeypatch):
    import paperworks.smnc_dag.experiments as ex

    monkeypatch.setattr(ex, "optional_pyplot", lambda: None)
    assert SMNCExperiment().figures(report, tmp_path) == []


def test_experiment_reads_the_device(monkeypatch):
    monkeypatch.setenv("PAPERWORKS_DEVICE", "cpu")
    assert SMNCExperiment().device() == "cpu"
    monkeypatch.setenv("PAPERWORKS_DEVICE", "tpu")
    with pytest.raises(ValueError, match=r"device"):
        SMNCExperiment().device()


def test_isolated_cycles_survive_without_normalisation():
    # the condition of the paper's mechanism: an isolated long cycle (no other gates)
    from paperworks.core import torch_threads

    with torch_threads(1):
        out = cycle_survival_study(np.random.default_rng(0), lengths=(32,), steps=200)
    assert out["closure.cycle_survival_product"] == 1.0 > out["closure.cycle_survival_smnc"]
    assert out["closure.min_gate_product_L32"] > 0.5 > out["closure.min_gate_smnc_L32"]


def test_equal_time_schedule_scales_every_stage_by_one_factor():
    defaults = {"T": 5, "warm_iter": 30_000, "max_iter": 60_000}
    sched, factor = _equal_time(defaults, cpu_s=1.8, step_s=1e-4)  # 18000 steps of 180000
    assert factor == pytest.approx(0.1) and sched == {"T": 5, "warm_iter": 3000, "max_iter": 6000}
    assert _equal_time(defaults, cpu_s=1e3, step_s=1e-4)[1] == 1.0  # never more than the defaults


def test_config_quick_and_full_are_one_frozen_dataclass(report):
    exp = SMNCExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is SMNCExperimentConfig and quick is QUICK
    assert type(quick).__dataclass_params__.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.survival_steps = 1
    assert quick != full and full == SMNCExperimentConfig()
    assert report.config == json.loads(json.dumps(dataclasses.asdict(quick)))
    assert exp.default_seeds >= 5


@pytest.mark.parametrize(
    "bad",
    [
        {"headline": ()},
        {"headline": (("XX", 2, 5, 200),)},
        {"headline": (("ER", 2, 5, 4),)},
        {"headline": (("ER", 5, 5, 200),)},
        {"nonlinear": ("ER", 2, 5)},
        {"closure_lengths": (2, 3, 8)},
        {"closure_lengths": (2, 4)},
        {"ancestry_fraction": 0.0},
        {"survival_steps": 0},
        {"closure_p": 1.0},
        {"dagma_scale": 2.0},
        {"noise_low": 2.0, "noise_high": 1.0},
    ],
)
def test_config_rejects_bad_settings(bad):
    with pytest.raises(ValueError):
        SMNCExperimentConfig(**bad)


def test_full_config_is_the_documented_run():
    full = SMNCExperimentConfig()
    assert [(g, k, d) for g, k, d, _ in full.headline] == [("ER", 4, 50), ("SF", 4, 30)]
    assert full.dagma_scale == 1.0 and 32 in full.survival_lengths
    assert math.isclose(full.ancestry_fraction, 0.3)
