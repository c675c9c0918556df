"""The headline experiment: frozen config, the issue's predicates, the quick run, its figure, repeats."""

from __future__ import annotations

import dataclasses
import math

import pytest

from paperworks.compose_pose.experiments import QUICK, ComposeExperiment, ComposeExperimentConfig
from paperworks.core import Progress
from paperworks.core.claims import HOLDS

pytest.importorskip("ortools")


def test_config_quick_and_full_are_one_frozen_dataclass():
    exp = ComposeExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is ComposeExperimentConfig and quick is QUICK
    assert quick.occlusions == full.occlusions and quick.n_frames < full.n_frames
    assert (full.prune_people, full.prune_views) == (6, 5)  # the issue's ">= 6 people x 5 views"
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.n_frames = 3  # type: ignore[misc]
    for bad in (
        {"occlusions": (0.4, 0.2, 0.1)},
        {"occlusions": (0.1, 0.2)},
        {"n_frames": 0},
        {"cpsat_frames": 0},
    ):
        with pytest.raises(ValueError, match=next(iter(bad))):
            ComposeExperimentConfig(**bad)


def test_claims_are_the_issues_predicates():
    by_key = {c.key: c for c in ComposeExperiment.claims}
    for key in ("ap50_beats_pairwise", "ap100_beats_pairwise", "gap_grows_with_occlusion"):
        assert by_key[key].paired and by_key[key].op == ">" and by_key[key].threshold == 0.0
    assert (by_key["bp_cost_within_2pct"].op, by_key["bp_cost_within_2pct"].threshold) == ("<=", 0.02)
    assert by_key["bp_ap_within_2_points"].threshold == 2.0 and by_key["bp_ap_within_2_points"].paired
    assert by_key["pruning_keeps_true"].threshold == 0.99 and by_key["pruning_removes_most"].threshold == 0.95
    assert by_key["bp_faster_than_ilp"].machine_dependent
    assert by_key["ilp_is_optimal"].exact and by_key["cpsat_matches_highs"].exact


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    exp = ComposeExperiment()
    report = exp.run(quick=True, seeds=1)
    folder = tmp_path_factory.mktemp("figs")
    return report, folder, exp.figures(report, folder)


def test_quick_report(quick_run):
    report, _, _ = quick_run
    assert len(report.claims) == len(ComposeExperiment.claims)
    s = report.per_seed[0]
    assert all(math.isfinite(v) for v in s.values())
    by_key = {c.claim.key: c for c in report.claims}
    assert by_key["ilp_is_optimal"].verdict == HOLDS and by_key["cpsat_matches_highs"].verdict == HOLDS
    assert s["bp_cost_rel_gap"] >= 0
    # the candidate space really is pruned and the ceiling bounds what could be removed
    assert 0.5 < s["prune_removed"] <= s["prune_removed_ceiling"] < 1
    # AP falls as occlusion rises (the task is not at ceiling at the high level)
    assert s["ap50_compose_ilp_low"] > s["ap50_compose_ilp_high"]
    assert s["ap100_compose_ilp_high"] < 95
    assert set(report.tables)


def test_figure_is_written(quick_run):
    pytest.importorskip("matplotlib")
    _, folder, names = quick_run
    assert names == ["ap_vs_occlusion.png"]
    assert (folder / names[0]).stat().st_size > 10_000


def test_a_seed_repeats_exactly():
    exp = ComposeExperiment()
    exp.configure({"n_frames": 1, "n_prune_frames": 1, "cpsat_frames": 1})
    a = exp.run_seed(4, quick=True, progress=Progress(enabled=False))
    b = exp.run_seed(4, quick=True, progress=Progress(enabled=False))
    timing = {"bp_solver_ms", "ilp_solver_ms"}
    assert {k: v for k, v in a.items() if k not in timing} == {k: v for k, v in b.items() if k not in timing}
