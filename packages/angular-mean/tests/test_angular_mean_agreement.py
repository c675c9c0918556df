"""Agreement and IP: closed form against Monte Carlo, vectorised code against loops."""

import itertools

import numpy as np
import pytest

from paperworks.angular_mean import (
    PairwiseAgreement,
    batch_agreement,
    gaussian_agreement,
    gaussian_items,
    ip_violation,
    long_run_agreement,
    long_run_ip,
    per_batch_ip,
    per_batch_ip_many,
    random_instance,
)


def loop_agreement(theta, thetas, batch):
    out = []
    for v in thetas:
        agree = 0.0
        pairs = list(itertools.combinations(range(len(batch)), 2))
        for j, k in pairs:
            a = np.sign(batch[j] @ theta - batch[k] @ theta)
            b = np.sign(batch[j] @ v - batch[k] @ v)
            agree += 1.0 if a == b and a != 0 else (0.5 if a == 0 or b == 0 else 0.0)
        out.append(agree / len(pairs))
    return np.array(out)


def test_batch_agreement_matches_a_loop_over_pairs_with_ties():
    rng = np.random.default_rng(0)
    thetas = rng.standard_normal((3, 4))
    theta = rng.standard_normal(4)
    batch = rng.integers(-2, 3, size=(9, 4)).astype(float)  # integer items: ties occur
    np.testing.assert_allclose(batch_agreement(theta, thetas, batch), loop_agreement(theta, thetas, batch))
    stacked = batch_agreement(theta, thetas, np.stack([batch, batch[::-1]]))
    assert stacked.shape == (2, 3)
    np.testing.assert_allclose(stacked[0], stacked[1])


@pytest.mark.parametrize("use_cov", [False, True])
def test_closed_form_agreement_matches_monte_carlo(use_cov):
    rng = np.random.default_rng(1)
    d = 6
    cov = None
    if use_cov:
        a = rng.standard_normal((d, d))
        cov = a @ a.T / d + 0.2 * np.eye(d)
    thetas, _ = random_instance(5, d, seed=2)
    theta = rng.standard_normal(d)
    items = gaussian_items(4000, 12, d, cov=cov, seed=3)  # 264k pairs
    mc = batch_agreement(theta, thetas, items).mean(axis=0)
    exact = gaussian_agreement(theta, thetas, cov=cov)
    # pairs within a batch are dependent; 4000 batches give a standard error below 0.005
    np.testing.assert_allclose(mc, exact, atol=0.015)
    # and the identity metric is not right when items are correlated
    if use_cov:
        assert np.abs(gaussian_agreement(theta, thetas) - exact).max() > 0.02


def test_long_run_agreement_on_a_pool_exact_and_monte_carlo():
    rng = np.random.default_rng(4)
    pool = rng.standard_normal((40, 3))
    thetas = rng.standard_normal((4, 3))
    theta = rng.standard_normal(3)
    exact = long_run_agreement(theta, thetas, items=pool)
    np.testing.assert_allclose(exact, loop_agreement(theta, thetas, pool))
    mc = long_run_agreement(theta, thetas, items=pool, n_pairs=200_000, seed=1)
    np.testing.assert_allclose(mc, exact, atol=0.01)


def test_stateful_metric_equals_pair_weighted_mean():
    rng = np.random.default_rng(5)
    thetas = rng.standard_normal((3, 4))
    theta = rng.standard_normal(4)
    metric = PairwiseAgreement(theta, thetas)
    b1, b2 = rng.standard_normal((6, 4)), rng.standard_normal((2, 11, 4))
    metric.update(b1)
    metric.update(b2)
    w = np.array([15, 55, 55], dtype=float)
    per = np.vstack([batch_agreement(theta, thetas, b1), batch_agreement(theta, thetas, b2)])
    np.testing.assert_allclose(metric.compute(), w @ per / w.sum())
    metric.reset()
    with pytest.raises(RuntimeError, match="before any update"):
        metric.compute()


def test_opposed_voters_split_every_batch():
    thetas = np.array([[1.0, 0.5], [-1.0, -0.5]])
    x = gaussian_items(50, 7, 2, seed=0)
    res = per_batch_ip(np.array([0.3, 1.0]), thetas, np.array([0.5, 0.5]), x)
    np.testing.assert_allclose(res.agreement.sum(axis=1), 1.0)
    # 21 pairs: nobody can have exactly one half, so every batch violates per-batch IP
    assert res.violation_rate == 1.0
    assert res.gap > 0


def test_ip_violation_and_long_run_ip():
    assert ip_violation(np.array([0.5, 0.2]), np.array([0.6, 0.4])) == pytest.approx(0.2)
    np.testing.assert_allclose(ip_violation(np.array([[0.7, 0.3], [0.9, 0.1]]), [0.6, 0.4]), [0.1, 0.3])
    thetas = np.array([[1.0, 0.0], [0.0, 1.0]])
    res = long_run_ip(np.array([1.0, 1.0]), thetas, [0.5, 0.5])
    np.testing.assert_allclose(res.agreement, [0.75, 0.75])
    assert res.satisfied and res.violation == 0.0
    np.testing.assert_allclose(res.slack, [0.25, 0.25])


def test_two_gap_readings_by_hand_and_their_order():
    # two types, three batches with agreements chosen by hand through the shortfall definition
    res = per_batch_ip(
        np.array([1.0, 0.0]), np.array([[1.0, 0.0], [-1.0, 0.0]]), [0.6, 0.4], gaussian_items(3, 5, 2)
    )
    sf = np.maximum(np.array([0.6, 0.4]) - res.agreement, 0.0)
    np.testing.assert_allclose(res.shortfall, sf)
    assert res.gap == pytest.approx(sf.max(axis=1).mean())  # E_X max_i
    assert res.worst_type_gap == pytest.approx(sf.mean(axis=0).max())  # max_i E_X
    rng = np.random.default_rng(7)
    thetas, alpha = random_instance(4, 3, seed=7)
    r = per_batch_ip(rng.standard_normal(3), thetas, alpha, gaussian_items(200, 6, 3, seed=1))
    assert r.worst_type_gap <= r.gap + 1e-15  # a max of means never exceeds the mean of maxes
    np.testing.assert_allclose(r.violation, r.shortfall.max(axis=1))


def test_per_batch_ip_many_equals_one_rule_at_a_time():
    thetas, alpha = random_instance(5, 4, seed=8)
    rules = np.random.default_rng(2).standard_normal((3, 4))
    x = gaussian_items(30, 9, 4, seed=3)
    many = per_batch_ip_many(rules, thetas, alpha, x, tol=1e-6)
    for rule, res in zip(rules, many):
        one = per_batch_ip(rule, thetas, alpha, x, tol=1e-6)
        np.testing.assert_array_equal(res.agreement, one.agreement)
        assert res.gap == one.gap and res.worst_type_gap == one.worst_type_gap
    np.testing.assert_allclose(many[0].agreement, batch_agreement(rules[0], thetas, x))
