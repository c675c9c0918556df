"""The index policy against a brute-force dynamic program on small discrete instances."""

import itertools
from functools import cache

import numpy as np
import pytest
from scipy.optimize import brentq

from paperworks.pandoras_router import index_policy


def _discrete_reservation(x, p, c):
    up = brentq(lambda r: (p * np.maximum(x - r, 0)).sum() - c, x.min() - c - 1, x.max() + 1)
    lo = brentq(lambda r: (p * np.maximum(r - x, 0)).sum() - c, x.min() - 1, x.max() + c + 1)
    return up, lo


def _optimum(boxes, costs, outside, optional):
    """Bellman recursion over (uninspected set, best revealed value)."""
    n = len(boxes)

    @cache
    def value(left, y):
        best = y
        for k in left:
            x, p = boxes[k]
            if optional:
                best = max(best, float((p * x).sum()))
            rest = tuple(j for j in left if j != k)
            cont = -costs[k] + sum(pi * value(rest, max(y, xi)) for xi, pi in zip(x, p))
            best = max(best, cont)
        return best

    return value(tuple(range(n)), outside)


def _policy_value(boxes, costs, outside, inspection):
    supports = [list(zip(x, p)) for x, p in boxes]
    rows, weights = [], []
    for combo in itertools.product(*supports):
        rows.append([v for v, _ in combo])
        weights.append(np.prod([w for _, w in combo]))
    reveal = np.array(rows)
    weights = np.array(weights)
    N = reveal.shape[0]
    means = np.array([(p * x).sum() for x, p in boxes])
    res = [_discrete_reservation(x, p, c) for (x, p), c in zip(boxes, costs)]
    upper = np.tile([u for u, _ in res], (N, 1))
    # a box whose index falls below its lower index is never worth opening: the empty band lo = up
    lower = np.minimum(np.tile([lo for _, lo in res], (N, 1)), upper)
    out = index_policy(
        np.tile(means, (N, 1)),
        upper,
        lower,
        np.tile(costs, (N, 1)),
        reveal,
        outside=outside,
        inspection=inspection,
    )
    return float((weights * (out.expected_value - out.estimation_cost)).sum())


def _random_instance(rng, n, support=3):
    boxes = []
    for _ in range(n):
        x = np.sort(rng.normal(rng.normal(0, 0.5), rng.uniform(0.3, 1.5), support))
        p = rng.dirichlet(np.ones(support))
        boxes.append((x, p))
    costs = rng.uniform(0.01, 0.4, n)
    return boxes, costs


@pytest.mark.parametrize("seed", range(12))
def test_weitzman_index_is_optimal_with_obligatory_inspection(seed):
    rng = np.random.default_rng(seed)
    boxes, costs = _random_instance(rng, 3 + seed % 2)
    outside = float(rng.normal(-0.5, 0.5))
    assert _policy_value(boxes, costs, outside, "obligatory") == pytest.approx(
        _optimum(boxes, costs, outside, optional=False), abs=1e-9
    )


@pytest.mark.parametrize("seed", range(12))
def test_one_box_optional_inspection_is_optimal(seed):
    rng = np.random.default_rng(100 + seed)
    boxes, costs = _random_instance(rng, 1, support=4)
    outside = float(rng.normal(0, 1))
    assert _policy_value(boxes, costs, outside, "optional") == pytest.approx(
        _optimum(boxes, costs, outside, optional=True), abs=1e-9
    )


def test_optional_inspection_near_optimal_on_small_instances():
    """No index policy is optimal here (Doval 2018); ours stays below the optimum and close to it."""
    rng = np.random.default_rng(7)
    ratios = []
    for _ in range(25):
        boxes, costs = _random_instance(rng, 3)
        outside = float(rng.normal(0, 0.5))
        opt = _optimum(boxes, costs, outside, optional=True)
        ours = _policy_value(boxes, costs, outside, "optional")
        assert ours <= opt + 1e-9
        base = max(outside, max(float((p * x).sum()) for x, p in boxes))  # best without inspecting
        if opt - base > 1e-6:
            ratios.append((ours - base) / (opt - base))
    # share of the value of information the index policy captures, averaged over instances
    assert np.mean(ratios) > 0.9
