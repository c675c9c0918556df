import dataclasses
import json
import math

import pytest
import torch

from paperworks.core.claims import INCONCLUSIVE_1_SEED
from paperworks.pgsb.experiments import ORDER, QUICK, PGSBExperiment, PGSBExperimentConfig
from paperworks.pgsb.tasks import SUITES, make_tasks

pytest.importorskip("peft")  # the reproduction scores peft's merges

TINY = {
    "suites": ("independent",),
    "task_counts": (2,),
    "pretrain_steps": 5,
    "lora_steps": 5,
    "lam_grid": (0.5, 1.0),
}


@pytest.fixture(scope="module")
def quick_report():
    return PGSBExperiment().run(quick=True, seeds=1)


def test_generator_seeded_and_suites_differ():
    a, b = make_tasks(2, 3, n_train=20, n_eval=10), make_tasks(2, 3, n_train=20, n_eval=10)
    assert torch.equal(a.x_train, b.x_train) and torch.equal(a.y_test, b.y_test)
    assert a.x_train.shape == (2, 20, 32) and a.y_val.shape == (2, 10)
    c = make_tasks(4, 3, suite="independent", n_train=200, n_eval=10)
    # the half-space tasks (odd k) are balanced over the 4 classes by construction
    counts = torch.bincount(c.y_train[1], minlength=4)
    assert counts.min() > 20


def test_quick_run_report(quick_report):
    report = quick_report
    assert len(report.claims) == 10 and report.quick
    row = report.per_seed[0]
    for s in SUITES:
        for m in ORDER:
            assert 0.0 <= row[f"{s}/K4/{m}/worst_norm_acc"] <= row[f"{s}/K4/{m}/norm_acc"] <= 1.2
            assert row[f"{s}/K4/{m}/lam"] in QUICK.lam_grid
        assert row[f"{s}/K4/finetuned_acc"] > 0.8  # the LoRAs learn their tasks
    assert all(math.isfinite(v) for v in row.values())
    assert "Normalised accuracy" in next(iter(report.tables))
    # one seed, no per-seed standard error: no interval, so no verdict either way
    for r in report.claims:
        assert r.verdict == INCONCLUSIVE_1_SEED and r.lo is None and r.claim.paired
    assert report.claims[0].estimate == pytest.approx(row["pgsb/norm_acc"] - row["task_arithmetic/norm_acc"])
    assert row["pgsb_minus_task_arithmetic_min"] == min(
        row[f"{s}/K4/pgsb_minus_task_arithmetic"] for s in SUITES
    )
    exp = PGSBExperiment()
    assert report.config == json.loads(json.dumps(dataclasses.asdict(exp.config(True))))


def test_figure_is_a_non_empty_png(quick_report, tmp_path):
    pytest.importorskip("matplotlib")
    names = PGSBExperiment().figures(quick_report, tmp_path)
    assert names == ["pgsb_margins.png"]
    data = (tmp_path / names[0]).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_figures_skip_cleanly_without_matplotlib(quick_report, tmp_path, monkeypatch):
    import paperworks.pgsb.experiments as ex

    monkeypatch.setattr(ex, "optional_pyplot", lambda: None)
    assert PGSBExperiment().figures(quick_report, tmp_path) == []


def test_same_seed_same_result():
    exp = PGSBExperiment().configure(TINY)
    a = exp.run(quick=True, seeds=[3]).per_seed[0]
    b = exp.run(quick=True, seeds=[3]).per_seed[0]
    assert a == b


def test_device_comes_from_paperworks_device(monkeypatch):
    import paperworks.pgsb.experiments as ex

    monkeypatch.setenv("PAPERWORKS_DEVICE", "cpu")
    assert ex._device() == torch.device("cpu")
    monkeypatch.delenv("PAPERWORKS_DEVICE")
    assert ex._device() == torch.device("cpu")  # the CPU stays the default
    if not torch.cuda.is_available():
        monkeypatch.setenv("PAPERWORKS_DEVICE", "cuda")
        with pytest.raises(ValueError, match="cuda"):
            PGSBExperiment().configure(TINY).run(quick=True, seeds=1)


def test_config_quick_and_full_are_one_frozen_dataclass():
    exp = PGSBExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is PGSBExperimentConfig
    assert type(quick).__dataclass_params__.frozen
    assert quick == QUICK and full == PGSBExperimentConfig() and quick != full
    assert set(quick.task_counts) <= set(full.task_counts)
    assert full.lam_grid[0] <= 0.05 and full.lam_grid[-1] >= 2.0  # issue 33: at least 0.05 to 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.lora_steps = 1  # type: ignore[misc]
    with pytest.raises(ValueError, match="lam_grid"):
        PGSBExperimentConfig(lam_grid=(0.5, float("nan")))
    with pytest.raises(ValueError, match="lam_grid"):
        PGSBExperimentConfig(lam_grid=(1.0, 0.5))
    with pytest.raises(ValueError, match="task_counts"):
        PGSBExperimentConfig(task_counts=(1,))
    with pytest.raises(ValueError, match="suites"):
        PGSBExperimentConfig(suites=("vision",))
