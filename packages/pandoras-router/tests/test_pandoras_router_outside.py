"""The outside option end to end: declined queries earn the outside value, never the last specialist's."""

import numpy as np
import pytest

from paperworks.pandoras_router import (
    PandorasRouter,
    RoutingResult,
    cheap_only,
    evaluate,
    index_policy,
    pandoras_route,
)


def _instance(seed=0, n=400, k=3):
    rng = np.random.default_rng(seed)
    m = rng.normal(0.0, 0.3, (n, k))
    s = np.full(k, 0.3)
    tau = np.full(k, 0.05)
    V = m + 0.3 * rng.standard_normal((n, k))
    Y = V + 0.05 * rng.standard_normal((n, k))
    price = rng.uniform(0.0, 0.01, (n, k))
    return m, s, tau, V, Y, price


@pytest.mark.parametrize("loading", [None, np.array([0.5, 0.5, 0.5])])
def test_declined_queries_earn_the_outside_value(loading):
    m, s, tau, V, Y, price = _instance()
    outside = 0.2
    res = pandoras_route(m, s, tau, np.full(3, 0.005), Y, loading=loading, outside=outside)
    declined = res.choice == -1
    assert 0.05 < declined.mean() < 0.95  # the option is used, and not always
    assert (res.expected_value[declined] == outside).all()
    ev = evaluate(res, V, price, 0.1)
    n = V.shape[0]
    idx = np.arange(n)
    safe = np.where(declined, 0, res.choice)
    gross = np.where(declined, outside, V[idx, safe])
    paid = np.where(declined, 0.0, price[idx, safe])
    assert ev["gross"] == pytest.approx(gross.mean(), abs=1e-12)
    assert ev["net"] == pytest.approx((gross - res.estimation_cost).mean(), abs=1e-12)
    assert ev["total_cost"] == pytest.approx((paid + 0.1 * res.estimation_cost).mean(), abs=1e-12)
    assert ev["declined"] == pytest.approx(declined.mean())
    # the 0.2.0 bug read V[:, -1] (the last specialist) for choice -1: that number must differ here
    wrong = np.where(declined, V[:, -1], V[idx, safe]).mean()
    assert abs(ev["gross"] - wrong) > 1e-3


def test_outside_value_per_query_and_in_the_router_object():
    m, s, tau, V, Y, price = _instance(1)
    per_query = np.where(np.arange(m.shape[0]) % 2 == 0, 10.0, -np.inf)  # even queries: decline pays
    res = pandoras_route(m, s, tau, np.full(3, 0.005), Y, outside=per_query)
    assert (res.choice[::2] == -1).all() and (res.choice[1::2] >= 0).all()
    assert (res.n_inspections[::2] == 0).all()  # nothing can beat 10: no reading is worth it
    assert evaluate(res, V, price, 0.1)["gross"] == pytest.approx(
        (10.0 * (m.shape[0] // 2) + V[1::2][np.arange(m.shape[0] // 2), res.choice[1::2]].sum()) / m.shape[0]
    )
    router = PandorasRouter(["a", "b", "c"], tau=tau, inspection_cost=[0.005] * 3, outside_value=0.3)
    obj = router.route(m=m, s=s, readings=Y)
    assert np.array_equal(obj.outside, np.full(m.shape[0], 0.3))
    assert obj.audit(int(np.flatnonzero(obj.choice == -1)[0]))["routed_on"] == "outside option"


def test_no_outside_option_means_always_route_and_evaluate_refuses_a_missing_value():
    m, s, tau, V, Y, price = _instance(2)
    res = pandoras_route(m, s, tau, np.full(3, 0.005), Y)
    assert (res.choice >= 0).all() and np.isneginf(res.outside).all()
    # a result claiming the outside option without its value is an error, not the last column
    bad = cheap_only(m)
    bad.choice[0] = -1
    with pytest.raises(ValueError, match="outside option"):
        evaluate(bad, V, price, 0.1)
    with pytest.raises(TypeError, match="result: expected a RoutingResult"):
        evaluate({"choice": res.choice}, V, price, 0.1)


def test_index_policy_outside_option_and_band_check():
    blind = np.array([[0.0, 0.1]])
    up, lo = np.array([[0.3, 0.4]]), np.array([[-0.3, -0.2]])
    cost = np.full((1, 2), 0.01)
    res = index_policy(blind, up, lo, cost, np.array([[0.5, -1.0]]), outside=0.35)
    assert isinstance(res, RoutingResult)
    # the outside option (0.35) already beats box 0's index (0.3): only box 1 (index 0.4) is read
    assert res.inspected.tolist() == [[False, True]] and res.choice.tolist() == [-1]
    with pytest.raises(ValueError, match="upper: expected upper >= lower"):
        index_policy(blind, lo, up, cost, np.zeros((1, 2)))
