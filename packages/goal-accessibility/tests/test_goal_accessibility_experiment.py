"""The quick run: report structure, one-seed verdicts, the figure, config, seeds, device."""

import dataclasses
import math

import pytest

from paperworks.core import INCONCLUSIVE_1_SEED
from paperworks.goal_accessibility.experiments import (
    QUICK,
    GoalAccessibilityExperiment,
)


@pytest.fixture(scope="module")
def quick_report():
    return GoalAccessibilityExperiment().run(quick=True, seeds=1)


def test_quick_report_structure(quick_report):
    m = quick_report.per_seed[0]
    assert [c.claim.key for c in quick_report.claims] == [c.key for c in GoalAccessibilityExperiment.claims]
    assert all(math.isfinite(v) for v in m.values())
    for c in quick_report.claims:
        assert c.verdict == INCONCLUSIVE_1_SEED
    assert 0 <= m["recall_open"] <= 1 and 0 <= m["recall_forced"] <= 1
    # force closure leaves every turn before t0 as it was and closes the goal after it
    assert m["gar_forced_after_t0"] == 0.0
    assert "Closures on the reference model" in quick_report.to_markdown()


def test_quick_figure_is_a_png(quick_report, tmp_path):
    pytest.importorskip("matplotlib")
    names = GoalAccessibilityExperiment().figures(quick_report, tmp_path)
    png = (tmp_path / names[0]).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_config_is_one_frozen_dataclass():
    exp = GoalAccessibilityExperiment()
    q, f = exp.config(True), exp.config(False)
    assert type(q) is type(f) and q == QUICK and q != f
    with pytest.raises(dataclasses.FrozenInstanceError):
        q.n_eval = 3
    with pytest.raises(ValueError, match="eval_turns"):
        dataclasses.replace(f, eval_turns=3)


def test_embedding_control_is_an_equivalence_band_around_chance():
    by_key = {c.key: c for c in GoalAccessibilityExperiment.claims}
    hi, lo = by_key["embedding_probe_not_above_chance"], by_key["embedding_probe_not_below_chance"]
    assert (hi.metric, hi.op, hi.threshold) == ("probe_auc_embedding", "<=", 0.55)
    assert (lo.metric, lo.op, lo.threshold) == ("probe_auc_embedding", ">=", 0.45)


def test_device_comes_from_the_core(monkeypatch):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    monkeypatch.setenv("PAPERWORKS_DEVICE", "cuda")
    with pytest.raises(ValueError, match="device"):
        GoalAccessibilityExperiment().run_seed(0, quick=True, progress=None)
