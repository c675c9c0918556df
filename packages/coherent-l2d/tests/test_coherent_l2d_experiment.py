"""The headline experiment: frozen config, the issue's predicates, the quick run, its figure, repeats."""

from __future__ import annotations

import dataclasses
import math

import pytest

from paperworks.coherent_l2d import nodewise_actions, violations
from paperworks.coherent_l2d.experiments import (
    QUICK,
    CoherentL2DExperiment,
    CoherentL2DExperimentConfig,
    nodewise_bayes_counterexample,
)
from paperworks.core import Progress
from paperworks.core.claims import HOLDS


def test_config_is_one_frozen_dataclass():
    exp = CoherentL2DExperiment()
    assert exp.config(True) is QUICK and exp.config(False) == CoherentL2DExperimentConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        QUICK.epochs = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="epochs"):
        CoherentL2DExperimentConfig(epochs=0)


def test_claims_are_the_issues_predicates():
    c = {x.key: x for x in CoherentL2DExperiment.claims}
    assert (c["br_l2d_incoherent"].op, c["br_l2d_incoherent"].threshold) == (">=", 0.05)
    assert c["projection_removes_incoherence"].exact and c["nodewise_bayes_incoherent"].exact
    assert c["projection_keeps_utility"].threshold == -0.01 and c["projection_keeps_utility"].paired
    assert (c["tbp_near_coherent"].op, c["tbp_near_coherent"].threshold) == ("<=", 0.01)
    assert c["tbp_utility_beats_br"].paired and c["tbp_utility_beats_br"].threshold == 0.0


def test_nodewise_bayes_counterexample_is_incoherent():
    tax, U = nodewise_bayes_counterexample()
    v = violations(tax, nodewise_actions(U))
    assert v["delegation"][0] == 1 and v["taxonomic"][0] == 0


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    exp = CoherentL2DExperiment()
    report = exp.run(quick=True, seeds=1)
    folder = tmp_path_factory.mktemp("figs")
    return report, folder, exp.figures(report, folder)


def test_quick_report(quick_run):
    report, _, _ = quick_run
    s = report.per_seed[0]
    assert all(math.isfinite(v) for v in s.values())
    by_key = {r.claim.key: r for r in report.claims}
    assert by_key["projection_removes_incoherence"].verdict == HOLDS
    assert s["incoherent_tbp"] == 0.0 and s["incoherent_bayes_coherent"] == 0.0
    # the oracle coherent rule is the best coherent rule in expectation, so it should not lose to the
    # learners on realised utility by more than noise
    assert s["utility_bayes_coherent"] > s["utility_br_projected"] - 0.02
    assert 0 < s["positive_rate_generated"] < 1 and set(report.tables)


def test_figure_is_written(quick_run):
    pytest.importorskip("matplotlib")
    _, folder, names = quick_run
    assert names == ["utility_vs_incoherence.png"] and (folder / names[0]).stat().st_size > 10_000


def test_a_seed_repeats_exactly():
    exp = CoherentL2DExperiment()
    exp.configure({"n_train": 60, "n_test": 40, "epochs": 3, "max_nodes": 12})
    a = exp.run_seed(2, quick=True, progress=Progress(enabled=False))
    b = exp.run_seed(2, quick=True, progress=Progress(enabled=False))
    drop = {k for k in a if k.startswith("ms_per_case")}
    assert {k: v for k, v in a.items() if k not in drop} == {k: v for k, v in b.items() if k not in drop}
