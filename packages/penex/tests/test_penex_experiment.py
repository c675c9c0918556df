"""Data, grid training determinism, and the quick reproduction end to end."""

import numpy as np
import torch

from paperworks.penex.data import INTENTS, few_shot_split, load_tabular, make_text_task
from paperworks.penex.experiments import PENEXExperiment
from paperworks.penex.training import Method, TrainConfig, accuracy, train_grid


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
    a = train_grid(s.x_train, s.y_train, 10, methods, cfg, seed=0)
    b = train_grid(s.x_train, s.y_train, 10, methods, cfg, seed=0)
    xt = torch.from_numpy(s.x_test)
    assert torch.equal(a(xt), b(xt))
    only_ce = train_grid(s.x_train, s.y_train, 10, methods[:1], cfg, seed=0)
    assert torch.allclose(only_ce(xt)[0], a(xt)[0], atol=1e-5)  # other members do not leak into CE
    assert accuracy(a.member(3), xt, torch.from_numpy(s.y_test)) > 0.5


def test_quick_reproduction_report():
    report = PENEXExperiment().run(quick=True, seeds=1)
    assert report.slug == "penex" and report.quick and report.seeds == [0]
    assert {c.claim.key for c in report.claims} == {
        "acc_over_ce",
        "matches_best_regulariser",
        "larger_margins",
        "comparable_cost",
    }
    s = report.summary
    for m in ("ce", "penex", "label_smoothing", "dropout"):
        assert 0.5 < s[f"acc/digits/n20/{m}"].mean <= 1.0
    assert s["margin_median_ratio"].mean > 0 and s["step_time_ratio"].mean > 0
    assert any(t.startswith("Test accuracy: digits") for t in report.tables)
    assert "| 20 |" in report.to_markdown()
