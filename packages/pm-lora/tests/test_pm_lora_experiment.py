import math

from paperworks.pm_lora.experiments import METHODS, PMLoRAExperiment


def test_quick_experiment_report():
    report = PMLoRAExperiment().run(quick=True, seeds=1)
    assert len(report.claims) == 4 and report.per_seed
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
    assert "Stored adapter parameters vs number of tasks" in report.tables
    assert report.claims[0].holds and report.claims[1].holds
