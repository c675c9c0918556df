"""GAR against hand-computed attention, the normalised variant, per-turn reduction, the metric."""

import numpy as np
import pytest
import torch

from paperworks.goal_accessibility import gar_by_turn, goal_accessibility_ratio, goal_mass, uniform_share


def test_gar_matches_a_hand_computed_attention_matrix():
    # one layer, one episode, two heads, 4 positions; goal = position 0
    a = torch.tensor(
        [
            [[1.0, 0, 0, 0], [0.5, 0.5, 0, 0], [0.2, 0.3, 0.5, 0], [0.1, 0.1, 0.1, 0.7]],
            [[1.0, 0, 0, 0], [0.9, 0.1, 0, 0], [0.6, 0.2, 0.2, 0], [0.3, 0.3, 0.2, 0.2]],
        ]
    )[None]  # (B=1, H=2, 4, 4)
    goal = torch.tensor([[True, False, False, False]])
    rows = torch.tensor([[False, False, True, True]])
    # rows 2 and 3: head means (0.2+0.6)/2 = 0.4 and (0.1+0.3)/2 = 0.2 -> 0.3
    assert goal_accessibility_ratio(a, goal, rows).item() == pytest.approx(0.3)
    # normalised: uniform share 1/3 at row 2, 1/4 at row 3 -> (0.4*3 + 0.2*4)/2 = 1.0
    assert goal_accessibility_ratio(a, goal, rows, normalize=True).item() == pytest.approx(1.0)
    assert uniform_share(goal)[0].tolist() == pytest.approx([1, 1 / 2, 1 / 3, 1 / 4])


def test_gar_is_a_brute_force_loop_over_rows_heads_and_layers():
    g = torch.Generator().manual_seed(1)
    L, B, H, T = 3, 2, 4, 9
    a = torch.softmax(torch.randn(L, B, H, T, T, generator=g), -1)
    goal = torch.rand(B, T, generator=g) < 0.4
    goal[:, 0] = True
    rows = torch.rand(B, T, generator=g) < 0.5
    rows[0, -1] = True
    want = []
    for li in range(L):
        vals = [
            sum(float(a[li, b, h, i, j]) for j in range(T) if goal[b, j])
            for b in range(B)
            for i in range(T)
            if rows[b, i]
            for h in range(H)
        ]
        want.append(np.mean(vals))
    got = goal_accessibility_ratio(list(a), goal, rows)
    assert got.tolist() == pytest.approx(want, rel=1e-5)


def test_gar_by_turn_equals_gar_of_each_turns_rows():
    g = torch.Generator().manual_seed(2)
    a = torch.softmax(torch.randn(2, 3, 2, 8, 8, generator=g), -1)
    goal = torch.zeros(3, 8, dtype=torch.bool)
    goal[:, :2] = True
    turns = torch.full((3, 8), -1)
    turns[:, 3:5], turns[:, 6:8] = 0, 1
    got, count = gar_by_turn(goal_mass(a, goal), turns, 2)
    for t in range(2):
        assert got[:, t].tolist() == pytest.approx(goal_accessibility_ratio(a, goal, turns == t).tolist())
    assert count.tolist() == [6, 6]


@pytest.mark.parametrize(
    "goal, match",
    [
        (torch.zeros(1, 4, dtype=torch.bool), "goal_mask"),
        (torch.ones(1, 5, dtype=torch.bool), "goal_mask"),
        (torch.ones(4), "goal_mask"),
    ],
)
def test_bad_goal_masks_are_rejected(goal, match):
    a = torch.softmax(torch.randn(1, 1, 4, 4), -1)
    with pytest.raises(ValueError, match=match):
        goal_accessibility_ratio(a, goal)


def test_empty_rows_are_rejected():
    a = torch.softmax(torch.randn(1, 1, 4, 4), -1)
    with pytest.raises(ValueError, match="rows"):
        goal_accessibility_ratio(a, torch.ones(1, 4, dtype=torch.bool), torch.zeros(1, 4, dtype=torch.bool))


def test_torchmetrics_metric_accumulates_like_the_pooled_function():
    tm = pytest.importorskip("torchmetrics")
    from paperworks.goal_accessibility import GoalAccessibilityRatio

    g = torch.Generator().manual_seed(3)
    metric = GoalAccessibilityRatio(num_layers=2, num_turns=2)
    assert isinstance(metric, tm.Metric)
    batches = []
    for _ in range(3):
        a = torch.softmax(torch.randn(2, 2, 2, 6, 6, generator=g), -1)
        goal = torch.zeros(2, 6, dtype=torch.bool)
        goal[:, 0] = True
        turns = torch.tensor([[-1, 0, 0, 1, 1, 1], [-1, -1, 0, 1, -1, 1]])
        metric.update(a, goal, turns)
        batches.append((a, goal, turns))
    a = torch.cat([b[0] for b in batches], 1)
    goal = torch.cat([b[1] for b in batches])
    turns = torch.cat([b[2] for b in batches])
    want = torch.stack([goal_accessibility_ratio(a, goal, turns == t) for t in range(2)], 1)
    assert torch.allclose(metric.compute().float(), want, atol=1e-6)
    assert {s: metric._reductions[s].__name__ for s in ("mass_sum", "count")} == {
        "mass_sum": "dim_zero_sum",
        "count": "dim_zero_sum",
    }
    metric.reset()
    assert float(metric.count.sum()) == 0.0
