"""The quick reproduction runs end to end and reports sane numbers."""

from __future__ import annotations

import numpy as np

from paperworks.maxmin_mtl import METHODS, MaxMinMTLExperiment, delta_m


def test_delta_m_signs():
    dm = delta_m(np.array([2.0, 0.9]), np.array([1.0, 1.0]), np.array([False, True]))
    np.testing.assert_allclose(dm, [100.0, 10.0])


def test_quick_experiment_report():
    exp = MaxMinMTLExperiment()
    report = exp.run(quick=True, seeds=1)
    assert report.slug == "maxmin-mtl" and report.quick
    keys = {c.claim.key for c in report.claims}
    assert {"toy_front", "synth_competitive", "diabetes_balance_worst"} <= keys
    per = report.per_seed[0]
    for m in METHODS:
        assert 0.0 <= per[f"toy_{m}_front_fraction"] <= 1.0
        for name in ("synth", "diabetes"):
            assert np.isfinite(per[f"{name}_{m}_mean_dm"])
            assert per[f"{name}_{m}_worst_dm"] >= per[f"{name}_{m}_mean_dm"] - 1e-9
            assert 0.0 <= per[f"{name}_{m}_worst_rate"] <= 1.0 + 1e-9
    # the max-min direction maximises the worst-task rate at every step, so along its own
    # trajectory it cannot be beaten by much in the first quick steps
    assert per["synth_maxmin_worst_rate"] > 0.0
    assert set(report.tables) and all("| method |" in t for t in report.tables.values())
