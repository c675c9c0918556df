import dataclasses
import json
import math

import pytest
import torch

from paperworks.core.claims import INCONCLUSIVE_1_SEED
from paperworks.pgsb.experiments import ORDER, QUICK, PGSBExperiment, PGSBExperimentConfig
from paperworks.pgsb.tasks import make_tasks


def test_generator_seeded():
    a, b = make_tasks(2, 3, n_train=20, n_eval=10), make_tasks(2, 3, n_train=20, n_eval=10)
    assert torch.equal(a.x_train, b.x_train) and torch.equal(a.y_test, b.y_test)
    assert a.x_train.shape == (2, 20, 32) and a.y_val.shape == (2, 10)


def test_quick_run_report():
    report = PGSBExperiment().run(quick=True, seeds=1)
    assert len(report.claims) == 6 and report.quick
    row = report.per_seed[0]
    for m in ORDER:
        assert 0.0 <= row[f"K4/{m}/worst_norm_acc"] <= row[f"K4/{m}/norm_acc"] <= 1.2
    assert row["K4/finetuned_acc"] > 0.8  # the LoRAs learn their tasks
    assert all(math.isfinite(v) for v in row.values())
    assert "Normalised accuracy" in next(iter(report.tables))
    # one seed, no per-seed standard error: no interval, so no verdict either way
    for r in report.claims:
        assert r.verdict == INCONCLUSIVE_1_SEED and r.lo is None and r.claim.paired
        other = r.claim.metric.removeprefix("pgsb_minus_")
        assert r.estimate == pytest.approx(row["pgsb/norm_acc"] - row[f"{other}/norm_acc"])
    # the recorded configuration is the quick one, as JSON data
    exp = PGSBExperiment()
    assert report.config == json.loads(json.dumps(dataclasses.asdict(exp.config(True))))
    assert report.config["task_counts"] == [4] and len(report.config["lam_grid"]) == 3


def test_config_quick_and_full_are_one_frozen_dataclass():
    exp = PGSBExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is PGSBExperimentConfig
    assert type(quick).__dataclass_params__.frozen
    assert quick == QUICK and full == PGSBExperimentConfig() and quick != full
    assert set(quick.task_counts) <= set(full.task_counts)
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.lora_steps = 1  # type: ignore[misc]
    with pytest.raises(ValueError, match="lam_grid"):
        PGSBExperimentConfig(lam_grid=(0.5, float("nan")))
    with pytest.raises(ValueError, match="task_counts"):
        PGSBExperimentConfig(task_counts=(1,))
