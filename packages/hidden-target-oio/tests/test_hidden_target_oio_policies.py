"""The protocol: y_t always feasible, the queue recursion pathwise, a 1-D regret against its exact
value, MaxCOSD's cycles, repeatability, and bad input at every public boundary."""

from __future__ import annotations

import numpy as np
import pytest

import paperworks.hidden_target_oio as oio


def _runs():
    rng = np.random.default_rng(0)
    A = np.abs(rng.normal(size=(2, 3))) + 0.2
    sets = [
        oio.Box(0.0, [6.0, 8.0, 10.0]),
        oio.BoxBudget(0.0, 10.0, 12.0, n=3),
        oio.Band(0.0, 9.0, 1.0, n=3),
        oio.Band(0.0, 9.0, 0.0, n=3),
        oio.Polytope(A, np.array([10.0, 9.0]), lo=0.0, hi=9.0),
    ]
    demand = oio.Intermittent(n=3, p=0.3, delta=0.5, excess=3.0, cv=0.7).sample(400, rng=1)
    return sets, demand


SETS, DEMAND = _runs()


@pytest.mark.parametrize("Y", SETS, ids=[repr(s) for s in SETS])
def test_every_policy_is_always_feasible_and_the_queue_inequality_holds_pathwise(Y):
    loss = oio.NewsvendorLoss(1.0, 3.0)
    steps = np.array([0.05, 0.3, 1.5])  # three rows, from cautious to reckless
    z0 = Y.center()
    pols = {
        "hidden": oio.HiddenTargetPolicy(Y, oio.OGD(Y, steps, z0)),
        "maxcosd": oio.MaxCOSD(Y, steps, z0),
        "direct": oio.DirectOGD(Y, steps, z0),
    }
    res = oio.simulate(pols, Y, loss, DEMAND, record=True)
    for name, r in res.items():
        assert r.infeasibility <= 1e-9, name
        x, y = r.states, r.levels
        assert (y >= x - 1e-9).all() and (Y.violation(y.reshape(-1, 3)) <= 1e-9).all()
        # lost-sales dynamics
        assert np.allclose(x[1:], np.maximum(y[:-1] - DEMAND[:-1, None, :], 0.0))
    q = res["hidden"].queue
    assert q.violations() == 0
    assert (q.slack() >= -1e-9).all()
    # the recursion is tight somewhere (not a vacuous bound) and the Lindley queue dominates r_t
    assert (q.distance > 1e-6).any()
    assert (q.distance <= q.lindley() + 1e-9).all()
    # the trace is what it says: r_t = ||z_t - y_t||
    r = res["hidden"]
    assert np.allclose(q.service, DEMAND.min(axis=1)[:, None])
    assert q.distance.shape == r.losses.shape == (len(DEMAND), 3)


def test_queue_trace_flags_a_broken_inequality():
    q = oio.QueueTrace(np.array([[0.0], [2.0]]), np.array([[0.5], [0.0]]), np.array([[0.0], [0.0]]))
    assert q.violations() == 1  # r_2 = 2 > (0 + 0.5 - 0)_+
    assert np.allclose(
        oio.lindley(np.array([1.0]), np.array([[1.0], [1.0]]), np.array([[3.0], [0.0]])), [[1.0], [0.0]]
    )


def test_one_product_regret_against_its_exact_value():
    """Capacity 4 below a constant demand of 10: the target climbs by 3 eta a round from 0 to 4.

    y_t = min(0.3 (t - 1), 4) (the state stays 0), so regret = 3 sum_{j=0}^{13} (4 - 0.3 j) = 86.1.
    """
    Y = oio.Box(0.0, 4.0, n=1)
    loss = oio.NewsvendorLoss(1.0, 3.0)
    d = np.full((40, 1), 10.0)
    pol = oio.HiddenTargetPolicy(Y, oio.OGD(Y, 0.1, np.zeros(1)))
    run = oio.simulate({"h": pol}, Y, loss, d)["h"]
    u, best = oio.best_fixed_level(Y, loss, d)
    assert u == pytest.approx([4.0]) and best == pytest.approx(40 * 18.0)
    assert run.total_loss[0] - best == pytest.approx(3 * sum(4 - 0.3 * j for j in range(14)), abs=1e-9)


def test_hidden_target_drains_where_maxcosd_holds_on_the_kit_segment():
    """One product unsold: the kit level cannot drop; a large step makes MaxCOSD's candidate
    infeasible at the common round, so it holds its level while the hidden target drains."""
    Y = oio.Band(0.0, 10.0, 0.0, n=2)
    loss = oio.NewsvendorLoss(1.0, 1.0)
    d = np.array([[0.0, 0.0]] * 5 + [[1.0, 1.0]] * 3)
    z0 = np.full(2, 8.0)
    pols = {"hidden": oio.HiddenTargetPolicy(Y, oio.OGD(Y, 2.0, z0)), "maxcosd": oio.MaxCOSD(Y, 2.0, z0)}
    res = oio.simulate(pols, Y, loss, d, x0=np.full(2, 0.0), record=True)
    hid, mc = res["hidden"].levels[:, 0, 0], res["maxcosd"].levels[:, 0, 0]
    assert mc[-1] == pytest.approx(8.0)  # candidate 8 - 2 * (accumulated) never within one round's demand
    assert hid[-1] < mc[-1] and hid[-1] == pytest.approx(6.0)  # drained by 1 in each of two common rounds


def test_same_seed_same_run_and_rows_are_independent():
    Y = oio.BoxBudget(0.0, 10.0, 12.0, n=3)
    loss = oio.NewsvendorLoss(1.0, 3.0)
    proc = oio.CorrelatedLognormal((3.0, 4.0, 5.0))
    a, b = proc.sample(300, rng=7), proc.sample(300, rng=7)
    assert np.array_equal(a, b)

    def run(steps):
        pol = oio.HiddenTargetPolicy(Y, oio.OGD(Y, steps, Y.center()))
        return oio.simulate({"h": pol}, Y, loss, a)["h"].total_loss

    both = run(np.array([0.1, 0.4]))
    assert both[0] == pytest.approx(run(0.1)[0]) and both[1] == pytest.approx(run(0.4)[0])


def test_step_rules():
    assert oio.static_step(4.0, 2.0, 100, p=1.0) == pytest.approx(4.0 / (2.0 * np.sqrt(300)))
    assert oio.static_step(4.0, 2.0, 100, p=0.5) < oio.static_step(4.0, 2.0, 100, p=1.0)
    assert oio.path_length_step(4.0, 2.0, 100, 0.0) == pytest.approx(oio.static_step(4.0, 2.0, 100))
    s = oio.StronglyConvexStep(0.5)
    assert s(4)[0] == pytest.approx(0.5)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: oio.static_step(1.0, 1.0, 10, p=0.0), "p: the common-demand probability is 0"),
        (lambda: oio.Intermittent(n=3, p=0.0), "no common demand"),
        (lambda: oio.ConstantStep(0.0), "eta"),
        (lambda: oio.ConstantStep(-1.0), "eta"),
        (lambda: oio.StronglyConvexStep(0.0), "mu"),
        (lambda: oio.NewsvendorLoss(h=0.0), "h"),
        (lambda: oio.OGD(oio.Box(0.0, 1.0, n=2), 0.1, z0=[2.0, 0.0]), "z0"),
    ],
)
def test_bad_parameters_raise_one_line_errors(call, message):
    with pytest.raises(ValueError, match=message) as e:
        call()
    assert "\n" not in str(e.value)


def test_bad_protocol_input_is_refused():
    Y = oio.Box(0.0, 5.0, n=2)
    loss = oio.NewsvendorLoss()
    pol = oio.HiddenTargetPolicy(Y, oio.OGD(Y, 0.1))
    with pytest.raises(ValueError, match="update"):
        pol.update(np.zeros(2))
    pol.act(np.zeros(2))
    with pytest.raises(ValueError, match="g: expected a subgradient of shape"):
        pol.update(np.zeros(3))
    with pytest.raises(ValueError, match="g: expected finite"):
        pol.update([np.nan, 0.0])
    with pytest.raises(ValueError, match="x: expected non-negative"):
        pol.act([-1.0, 0.0])
    d = np.ones((5, 2))
    with pytest.raises(ValueError, match="x0: the initial state is outside"):
        oio.simulate({"h": oio.HiddenTargetPolicy(Y, oio.OGD(Y, 0.1))}, Y, loss, d, x0=[6.0, 0.0])
    for bad, message in ((-d, "non-negative"), (d * np.nan, "finite"), (np.ones((5, 3)), "2 products")):
        with pytest.raises(ValueError, match=message):
            oio.simulate({"h": oio.HiddenTargetPolicy(Y, oio.OGD(Y, 0.1))}, Y, loss, bad)
