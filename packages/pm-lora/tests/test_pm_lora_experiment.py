import dataclasses
import math

import pytest

from paperworks.pm_lora import TrainConfig
from paperworks.pm_lora.experiments import METHODS, QUICK, PMLoRAExperiment, PMLoRARunConfig


def _plain(v):
    """A config value as the report stores it: tuples become lists, recursively."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    return v


@pytest.fixture(scope="module")
def quick_report():
    return PMLoRAExperiment().run(quick=True, seeds=1)


def test_quick_experiment_report(quick_report):
    report = quick_report
    assert len(report.claims) == 7 and report.per_seed
    m = report.per_seed[0]
    for name in METHODS:
        assert 0.0 <= m[f"{name}_acc"] <= 1.0
        assert -1.0 <= m[f"{name}_bwt"] <= 1.0
    assert all(math.isfinite(v) for v in m.values())
    # structural claims are exact counts, robust even in quick mode
    assert m["pm_lora_params_at_5"] == m["pm_lora_params_at_20"]
    assert m["o_lora_params_at_20"] == 4 * m["o_lora_params_at_5"]
    assert m["pm_lora_orth_error"] < 1e-4
    assert m["per_task_lora_bwt"] == 0.0
    assert "Stored adapter parameters vs number of tasks (exact counts)" in report.tables
    claims = {c.claim.key: c for c in report.claims}
    # the parameter counts are exact claims: judged on the value, so they hold on one seed too
    for key in ("constant_params", "olora_grows"):
        assert claims[key].claim.exact and claims[key].verdict == "holds"
    # the comparative claims are paired differences with SeqLoRA / O-LoRA; one seed gives no interval
    less, acc = claims["less_forgetting"], claims["acc_vs_olora"]
    assert less.claim.paired and less.claim.baseline == "seq_lora_bwt"
    assert acc.claim.paired and acc.claim.baseline == "o_lora_acc"
    assert less.verdict == acc.verdict == "inconclusive (1 seed)" and less.lo is None
    assert less.estimate == pytest.approx(m["pm_lora_bwt"] - m["seq_lora_bwt"])
    assert less.estimate == pytest.approx(m["pm_minus_seq_bwt"])
    assert acc.estimate == pytest.approx(m["pm_minus_olora_acc"])
    assert less.estimate > 0.0  # the expected side on the quick run's seed
    # the equal-memory row, the InfLoRA baseline and the no-projection ablation are paired too
    pairs = {
        "acc_vs_olora_equal_memory": ("pm_lora_eqmem_acc", "o_lora_acc"),
        "acc_vs_inflora": ("pm_lora_acc", "inflora_acc"),
        "projection_reduces_forgetting": ("pm_lora_bwt", "pm_lora_noproj_bwt"),
    }
    for key, (a, b) in pairs.items():
        c = claims[key]
        assert c.claim.paired and c.claim.metric == a and c.claim.baseline == b
        assert c.estimate == pytest.approx(m[a] - m[b])
    assert claims["projection_reduces_forgetting"].claim.kind == "mechanism"
    # the equal-memory PM-LoRA stores exactly what O-LoRA stores after the last task
    assert m["pm_lora_eqmem_params_last"] == m["o_lora_params_last"]


def test_config_quick_and_full_are_one_frozen_dataclass(quick_report):
    exp = PMLoRAExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is PMLoRARunConfig and quick is QUICK
    assert type(quick).__dataclass_params__.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.n_tasks = 4
    assert quick != full and full == PMLoRARunConfig()
    assert quick_report.config == _plain(dataclasses.asdict(quick))
    assert quick_report.config["n_tasks"] == 3 and quick_report.config["train"]["steps"] == 50
    # the quick run really ran with these settings: 3 tasks, the configured ranks
    assert quick_report.per_seed[0]["pm_lora_params_last"] == 16 * (64 + 128) + 16 * (128 + 128)
    assert PMLoRAExperiment.default_seeds >= 10  # the forgetting claim's paired differences need them


def test_run_config_validation():
    with pytest.raises(ValueError, match="task_rank"):
        PMLoRARunConfig(rank=4, task_rank=8)
    with pytest.raises(ValueError, match="scaling_tasks"):
        PMLoRARunConfig(scaling_tasks=(5, 10))
    with pytest.raises(ValueError, match="n_tasks"):
        PMLoRARunConfig(n_tasks=1)
    with pytest.raises(TypeError, match="train"):
        PMLoRARunConfig(train={"steps": 3})
    with pytest.raises(ValueError, match="steps"):
        PMLoRARunConfig(train=TrainConfig(steps=0))


def test_quick_figure_is_a_non_empty_png(quick_report, tmp_path):
    pytest.importorskip("matplotlib")
    names = PMLoRAExperiment().figures(quick_report, tmp_path)
    assert names == ["params_vs_tasks.png"]
    png = tmp_path / names[0]
    assert png.stat().st_size > 20_000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_figures_skip_cleanly_without_matplotlib(quick_report, tmp_path, monkeypatch):
    import paperworks.pm_lora.experiments as ex

    monkeypatch.setattr(ex, "optional_pyplot", lambda: None)
    assert PMLoRAExperiment().figures(quick_report, tmp_path) == [] and not any(tmp_path.iterdir())
