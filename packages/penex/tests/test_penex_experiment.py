"""Data, grid training determinism, the run's configuration, and the quick reproduction end to end."""

import dataclasses
import json

import numpy as np
import pytest
import torch

from paperworks.core import INCONCLUSIVE_1_SEED, torch_threads
from paperworks.penex.data import INTENTS, few_shot_split, load_tabular, make_text_task
from paperworks.penex.experiments import PenexConfig, PENEXExperiment, _member_scores, _select
from paperworks.penex.training import (
    Method,
    TrainConfig,
    accuracy,
    make_train_step,
    train_classifier,
    train_grid,
)


def test_few_shot_split_counts_and_disjointness():
    x, y = load_tabular("breast_cancer")
    s = few_shot_split(x, y, 5, 10, seed=3)
    assert np.bincount(s.y_train).tolist() == [5, 5] and np.bincount(s.y_val).tolist() == [10, 10]
    assert len(s.y_test) == len(y) - 30
    assert np.allclose(s.x_train.mean(0), 0, atol=1e-4)


def test_text_task_is_seeded_and_labelled():
    t1, l1 = make_text_task(4, seed=1)
    t2, l2 = make_text_task(4, seed=1)
    assert t1 == t2 and np.array_equal(l1, l2)
    assert np.bincount(l1).tolist() == [4] * len(INTENTS)


def test_grid_members_train_independently_and_deterministically():
    x, y = load_tabular("digits")
    s = few_shot_split(x, y, 5, 5, seed=0, max_test=300)
    methods = [Method("ce"), Method("dropout", 0.3), Method("weight_decay", 0.1), Method("penex", 1.0)]
    cfg = TrainConfig(hidden=32, steps=40)
    with torch_threads(1):  # a tiny MLP: several intra-op threads only slow it down on a busy machine
        a = train_grid(s.x_train, s.y_train, 10, methods, cfg, seed=0)
        b = train_grid(s.x_train, s.y_train, 10, methods, cfg, seed=0)
        only_ce = train_grid(s.x_train, s.y_train, 10, methods[:1], cfg, seed=0)
    xt = torch.from_numpy(s.x_test)
    assert torch.equal(a(xt), b(xt))
    assert torch.allclose(only_ce(xt)[0], a(xt)[0], atol=1e-5)  # other members do not leak into CE
    assert accuracy(a.member(3), xt, torch.from_numpy(s.y_test)) > 0.5


def test_train_classifier_runs_the_step_the_cost_claim_times():
    x, y = load_tabular("digits")
    s = few_shot_split(x, y, 5, 5, seed=0, max_test=200)
    cfg = TrainConfig(hidden=16, steps=7)
    xt = torch.from_numpy(s.x_test)
    with torch_threads(1):
        for method in (Method("ce"), Method("penex", 1.0)):
            model, per_step = train_classifier(s.x_train, s.y_train, 10, method, cfg, seed=3)
            twin, step = make_train_step(s.x_train, s.y_train, 10, method, cfg, seed=3)
            for _ in range(cfg.steps):
                step()
            assert per_step > 0
            assert torch.equal(model(xt), twin.eval()(xt))


def test_step_cost_is_timed_through_the_harness():
    exp = PENEXExperiment()
    cfg = dataclasses.replace(exp.config(True), cost_rounds=4, cost_steps=3, cost_warmup=1)
    with torch_threads(1):
        out = exp._step_cost(load_tabular("digits"), 0, cfg)
    assert set(out) == {
        "step_ms_ce",
        "step_ms_penex",
        "step_time_ratio",
        "step_time_ratio_lo",
        "step_time_ratio_hi",
    }
    assert out["step_ms_ce"] > 0 and out["step_ms_penex"] > 0
    assert 0 < out["step_time_ratio_lo"] <= out["step_time_ratio"] <= out["step_time_ratio_hi"]


def test_config_quick_and_full_are_one_frozen_dataclass():
    exp = PENEXExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is PenexConfig
    assert type(full).__dataclass_params__.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        full.steps = 1  # type: ignore[misc]
    assert full == PenexConfig() and quick != full
    # the full grid: the same number of values (seven) for every regulariser and PENEX, plain CE alone;
    # PENEX's includes the authors' default 0.1 and 0.3
    assert full.grid["ce"] == (0.0,) and {len(v) for k, v in full.grid.items() if k != "ce"} == {7}
    assert {0.1, 0.3} <= set(full.penex) and full.margin_alpha == 0.1 == full.cost_alpha
    assert all(len(v) == 1 for v in quick.grid.values()) and quick.penex == (0.1,)


@pytest.mark.parametrize(
    "bad",
    [
        {"datasets": ("mnist",)},
        {"datasets": ("breast_cancer",)},  # the step cost needs digits
        {"budgets": ()},
        {"budgets": (5, 5)},
        {"steps": 0},
        {"penex": (0.0, 1.0)},
        {"dropout": ()},
        {"margin_alpha": 0.5},  # not in the PENEX grid
        {"margin_budget": 7},  # not a run cell
        {"cost_alpha": -1.0},
        {"cost_rounds": 1},  # the harness pairs rounds: an interval needs two
        {"cost_warmup": -1},
        {"cost_steps": 0},
    ],
)
def test_config_rejects_bad_settings(bad):
    with pytest.raises(ValueError, match="PenexConfig"):
        PenexConfig(**bad)


def test_selection_breaks_accuracy_ties_by_validation_nll():
    val_acc = np.array([0.9, 0.9, 0.8, 0.9])
    val_nll = np.array([0.50, 0.30, 0.10, 0.40])
    assert _select([0, 1, 2, 3], val_acc, val_nll) == 1  # not the first of the tied values
    assert _select([2], val_acc, val_nll) == 2


def test_member_scores_use_each_methods_read_out():
    x, y = load_tabular("digits")
    s = few_shot_split(x, y, 5, 5, seed=0, max_test=100)
    methods = [Method("ce"), Method("penex", 0.3)]
    model = train_grid(s.x_train, s.y_train, 10, methods, TrainConfig(hidden=16, steps=5), seed=0)
    acc, nll = _member_scores(model, methods, s.x_val, s.y_val, "cpu")
    xt, yt = torch.from_numpy(s.x_val), torch.from_numpy(s.y_val)
    with torch.inference_mode():
        f = model(xt)
    want = -torch.log_softmax(1.3 * f[1], dim=1)[torch.arange(len(yt)), yt].double().mean()
    assert nll[1] == pytest.approx(float(want), rel=1e-6)
    assert acc[0] == pytest.approx(float((f[0].argmax(1) == yt).double().mean()))


def test_quick_reproduction_report(tmp_path):
    exp = PENEXExperiment()
    report = exp.run(quick=True, seeds=1)
    assert report.slug == "penex" and report.quick and report.seeds == [0]
    # the recorded configuration is the quick one (tuples become lists in the record)
    assert report.config == json.loads(json.dumps(dataclasses.asdict(exp.config(True))))
    by_key = {c.claim.key: c for c in report.claims}
    assert set(by_key) == {
        "acc_over_ce",
        "matches_best_regulariser",
        "larger_margins",
        "larger_margins_alpha01",
        "larger_raw_margins",
        "larger_raw_margins_alpha01",
        "comparable_cost",
    }
    # one seed, no per-seed standard error: no interval, so no verdict either way
    for c in report.claims:
        assert c.verdict == INCONCLUSIVE_1_SEED and c.n == 1 and c.lo is None and not c.holds
        assert c.estimate == report.per_seed[0][c.claim.metric]
    assert all(c.claim.paired for c in report.claims)
    assert by_key["comparable_cost"].claim.machine_dependent
    seed0 = report.per_seed[0]
    # quick grid: alpha 0.1 only, so the selected alpha is 0.1 and both margin readings coincide
    assert seed0["margin_alpha_selected"] == 0.1
    assert seed0["margin_ratio_norm_selected"] == seed0["margin_ratio_norm_a01"] > 0
    assert seed0["margin_q50_raw_ce"] == seed0["margin_median_raw_ce"]
    assert -1 <= by_key["acc_over_ce"].estimate <= 1
    assert by_key["matches_best_regulariser"].estimate in (0.0, 0.5, 1.0)  # two cells in quick mode
    s = report.summary
    for m in ("ce", "penex", "label_smoothing", "dropout"):
        assert 0.5 < s[f"acc/digits/n20/{m}"].mean <= 1.0
    assert s["step_time_ratio"].mean > 0
    assert any(t.startswith("Test accuracy: digits") for t in report.tables)
    assert "| 20 |" in report.to_markdown()
    # the figure: a non-empty PNG drawn from the report's per-seed metrics
    pytest.importorskip("matplotlib")
    names = exp.figures(report, tmp_path)
    assert names == ["penex.png"]
    png = (tmp_path / "penex.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
