import math

import torch

from paperworks.pgsb.experiments import ORDER, PGSBExperiment
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
