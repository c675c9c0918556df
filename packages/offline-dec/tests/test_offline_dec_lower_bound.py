import numpy as np
import pytest

from paperworks.offline_dec import (
    collect_dataset,
    completeness_residual,
    concentrability,
    data_log_likelihood,
    greedy_policy,
    lower_bound_pair,
    optimal_actions,
    realisability_residual,
    span_residual,
)


def test_identical_data_likelihoods_and_different_optimal_actions():
    pair = lower_bound_pair(0.9, 0.5, leak=0.0)
    assert optimal_actions(pair) == (1, 0)
    assert pair.data_kl_per_sample() == 0.0
    for n in (10, 1000):
        d = collect_dataset(pair.plus, pair.behaviour, n, rng=n)
        assert data_log_likelihood(pair.plus, pair.behaviour, d) == data_log_likelihood(
            pair.minus, pair.behaviour, d
        )


def test_leaky_variant_is_kl_close_and_matches_closed_form():
    gamma, delta, leak = 0.9, 0.2, 0.01
    pair = lower_bound_pair(gamma, delta, leak)
    p, q = (1.5 + delta) / 2, (1.5 - delta) / 2  # P(reward = +1) at the probe: (1 + r) / 2
    kl = p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))
    mu_probe = pair.plus.occupancy(pair.behaviour)[1].sum()
    assert pair.data_kl_per_sample() == pytest.approx(mu_probe * kl, rel=1e-12)
    # Monte Carlo: mean log-likelihood ratio of data drawn from plus
    d = collect_dataset(pair.plus, pair.behaviour, 200_000, rng=0)
    llr = data_log_likelihood(pair.plus, pair.behaviour, d) - data_log_likelihood(
        pair.minus, pair.behaviour, d
    )
    assert llr / len(d) == pytest.approx(pair.data_kl_per_sample(), rel=0.25)
    # both comparators covered once leak > 0
    for m in pair.mdps:
        assert np.isfinite(concentrability(m, greedy_policy(m.optimal_q()), pair.behaviour))


def test_realisability_and_completeness_by_direct_check():
    pair = lower_bound_pair()
    for m in pair.mdps:
        assert span_residual(m, pair.features) < 1e-12
        assert realisability_residual(m, pair.features) < 1e-12
        assert completeness_residual(m, pair.features) < 1e-9
        # a negative control: drop the probe's feature and both properties fail
        poor = pair.features[:, :, [0, 1, 3]]
        assert completeness_residual(m, poor) > 1e-3
    assert realisability_residual(pair.plus, pair.features[:, :, [0, 1, 3]]) > 1e-3  # Q*_plus(probe) = 1


def test_coverage_one_finite_one_infinite_and_worst_case_floor():
    pair = lower_bound_pair(0.9, 0.5, 0.0)
    cs = [concentrability(m, greedy_policy(m.optimal_q()), pair.behaviour) for m in pair.mdps]
    assert np.isinf(cs[0]) and np.isfinite(cs[1])
    for p in np.linspace(0, 1, 11):
        pi = np.array([[1 - p, p], [0.5, 0.5], [0.5, 0.5]])
        assert pair.worst_suboptimality(pi) >= pair.delta_gap / 2 - 1e-12


def test_bad_construction_input():
    with pytest.raises(ValueError, match="delta"):
        lower_bound_pair(delta=0.7)
    with pytest.raises(ValueError, match="leak"):
        lower_bound_pair(leak=1.0)


def test_decision_rules_on_the_finite_class():
    from paperworks.offline_dec import dec_policy, excess_td_loss, gde_policy, version_space

    pair = lower_bound_pair(0.9, 0.4, leak=0.0)
    cands = np.stack([m.optimal_q() for m in pair.mdps])
    d = collect_dataset(pair.plus, pair.behaviour, 2000, rng=0)
    assert list(version_space(cands, d, 0.9, 0.05)) == [0, 1]  # the data cannot tell them apart
    for rule in (dec_policy, gde_policy):
        assert pair.worst_suboptimality(rule(cands, d, 0.9, 0.05, pair.plus.initial)) == pytest.approx(
            pair.delta_gap
        )
    # with the probe in the data the wrong candidate's excess TD loss grows and it leaves the version space
    leaky = lower_bound_pair(0.9, 0.4, leak=0.3)
    d = collect_dataset(leaky.minus, leaky.behaviour, 5000, rng=1)
    cands = np.stack([m.optimal_q() for m in leaky.mdps])
    e = excess_td_loss(cands, d, 0.9)
    assert e[1] == 0.0 and e[0] > 1e-3  # the finite class is not complete: a weak but positive signal
    pi = gde_policy(cands, d, 0.9, 1e-3, leaky.minus.initial)
    assert leaky.minus.optimal_value() - leaky.minus.value(pi) == pytest.approx(0.0, abs=1e-12)
