"""The quick reproduction runs end to end and reports sane numbers; its configuration is recorded."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from paperworks.core.claims import INCONCLUSIVE_1_SEED
from paperworks.maxmin_mtl import METHODS, MaxMinMTLExperiment, delta_m
from paperworks.maxmin_mtl.experiments import QUICK, MaxMinMTLConfig


def test_delta_m_signs():
    dm = delta_m(np.array([2.0, 0.9]), np.array([1.0, 1.0]), np.array([False, True]))
    np.testing.assert_allclose(dm, [100.0, 10.0])


def test_config_quick_and_full_are_one_frozen_dataclass():
    exp = MaxMinMTLExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is MaxMinMTLConfig and quick is QUICK
    assert dataclasses.is_dataclass(quick) and type(quick).__dataclass_params__.frozen
    assert quick != full and full == MaxMinMTLConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.mtl_steps = 5  # type: ignore[misc]
    for bad in ({"toy_steps": 0}, {"mtl_lr": float("nan")}, {"stationary": -1.0}, {"mtl_hidden": True}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            MaxMinMTLConfig(**bad)


def test_claim_declarations():
    by_key = {c.key: c for c in MaxMinMTLExperiment.claims}
    assert by_key["toy_front"].exact and by_key["toy_balance"].exact  # the toy is deterministic
    assert by_key["toy_balance"].kind == "mechanism"  # an identity of the solver, not evidence
    for name in ("synth", "diabetes"):
        assert f"{name}_balance_rate" not in by_key  # max-min's own objective is no yardstick
        for c in ("balance_worst", "balance_spread", "competitive"):
            assert by_key[f"{name}_{c}"].paired and not by_key[f"{name}_{c}"].exact
            assert by_key[f"{name}_{c}"].kind == "paper"


@pytest.fixture(scope="module")
def report():
    return MaxMinMTLExperiment().run(quick=True, seeds=1)


def test_quick_report_config_is_the_quick_dataclass(report):
    expected = dataclasses.asdict(MaxMinMTLExperiment().config(True))
    assert report.config == json.loads(json.dumps(expected))  # tuples would become lists


def test_quick_experiment_report(report):
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
    assert per["synth_maxmin_worst_rate"] > 0.0
    for name in ("synth", "diabetes"):  # pre-registered floors: 0.9 x the single-task training loss
        floors = [v for k, v in per.items() if k.startswith(f"{name}_loss_floor_")]
        assert floors and all(f > 0 for f in floors)
    assert set(report.tables) and all("| method |" in t for t in report.tables.values())


def test_quick_verdicts_with_one_seed(report):
    res = {r.claim.key: r for r in report.claims}
    # exact claims are judged on the value itself, even with one seed; the 60-step quick toy does not
    # reach the front from any start
    assert res["toy_front"].verdict == "not reproduced" and res["toy_front"].estimate == 0.0
    # every other claim has no interval from one seed
    for key, r in res.items():
        if not r.claim.exact:
            assert r.verdict == INCONCLUSIVE_1_SEED and r.lo is None, key
    # at common states no baseline's direction beats max-min's worst-task rate (an identity)
    assert res["toy_balance"].verdict == "holds" and res["toy_balance"].estimate >= -1e-9


def test_quick_figures_write_non_empty_pngs(report, tmp_path):
    pytest.importorskip("matplotlib")
    names = MaxMinMTLExperiment().figures(report, tmp_path)
    assert names == ["toy_trajectories.png", "mtl_delta_m.png", "paired_claims.png"]
    for name in names:
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, name


def test_figures_skip_without_matplotlib(report, tmp_path, monkeypatch):
    import paperworks.maxmin_mtl.experiments as ex

    monkeypatch.setattr(ex, "optional_pyplot", lambda: None)
    assert MaxMinMTLExperiment().figures(report, tmp_path) == []
    assert not any(tmp_path.iterdir())
