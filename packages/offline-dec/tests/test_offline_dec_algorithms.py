import numpy as np
import pytest

from paperworks.offline_dec import (
    CQL,
    FQI,
    LCB,
    SoftQ,
    collect_dataset,
    cql_penalty,
    cql_penalty_grad,
    garnet_mdp,
    greedy_policy,
    one_hot_features,
    partial_support_behaviour,
    softmax_policy,
)
from paperworks.offline_dec.mdp import _soft_max_value


@pytest.fixture(scope="module")
def setup():
    m = garnet_mdp(12, 3, 2, gamma=0.8, rng=0)
    pi_star = greedy_policy(m.optimal_q())
    mu = partial_support_behaviour(pi_star, 1, 0.3, rng=0)
    return m, mu, collect_dataset(m, mu, 3000, rng=1)


def test_cql_penalty_gradient_matches_autograd(setup):
    torch = pytest.importorskip("torch")
    m, _, d = setup
    q = np.random.default_rng(0).normal(size=(m.n_states, m.n_actions))
    qt = torch.tensor(q, requires_grad=True, dtype=torch.float64)
    s, a = torch.tensor(d.states.copy()), torch.tensor(d.actions.copy())
    loss = 0.7 * (torch.logsumexp(qt[s], dim=1) - qt[s, a]).mean()
    loss.backward()
    assert loss.item() == pytest.approx(cql_penalty(q, d, 0.7), rel=1e-12)
    np.testing.assert_allclose(cql_penalty_grad(q, d, 0.7), qt.grad.numpy(), atol=1e-12)


def test_cql_inner_solution_is_stationary(setup):
    m, _, d = setup
    alpha = 0.3
    res = CQL(alpha=alpha, gamma=m.gamma).fit(d)
    n, r_hat, P_hat = d.empirical_model()
    y = r_hat + m.gamma * P_hat @ res.q.max(axis=1)  # the converged target
    td_grad = 2 * n * (res.q - y) / len(d)
    g = td_grad + cql_penalty_grad(res.q, d, alpha)
    assert np.max(np.abs(g[n > 0])) < 1e-7
    v_min = -1 / (1 - m.gamma)
    visited = n.sum(axis=1) > 0
    assert np.all(res.q[(n == 0) & visited[:, None]] == v_min)


def test_fqi_and_softq_match_empirical_fixed_points(setup):
    m, _, d = setup
    n, r_hat, P_hat = d.empirical_model()
    seen = n > 0
    q = FQI(m.gamma, ridge=1e-9, tol=1e-12).fit(d).q
    np.testing.assert_allclose(q[seen], (r_hat + m.gamma * P_hat @ q.max(axis=1))[seen], atol=1e-5)
    assert np.all(q[~seen] == 0.0)
    tau = 0.3
    res = SoftQ(tau, m.gamma, beta=0.0, ridge=1e-9, tol=1e-12).fit(d)
    target = r_hat + m.gamma * P_hat @ _soft_max_value(res.q, tau)
    np.testing.assert_allclose(res.q[seen], target[seen], atol=1e-5)
    np.testing.assert_allclose(res.policy, softmax_policy(res.q, tau))


def test_linear_one_hot_features_equal_the_tabular_path(setup):
    m, _, d = setup
    phi = one_hot_features(m.n_states, m.n_actions)
    for alg in (FQI(m.gamma), LCB(m.gamma), SoftQ(0.2, m.gamma)):
        np.testing.assert_allclose(alg.fit(d, phi).q, alg.fit(d).q, atol=1e-6)


def test_pessimism_beats_greedy_fqi_under_partial_support(setup):
    m, _, d = setup
    j = m.optimal_value()
    gaps = {
        type(a).__name__: j - m.value(a.fit(d).policy)
        for a in (FQI(m.gamma), LCB(m.gamma), CQL(0.2, m.gamma))
    }
    assert gaps["LCB"] < gaps["FQI"] and gaps["CQL"] < gaps["FQI"]


def test_bad_learner_input(setup):
    _, _, d = setup
    with pytest.raises(ValueError, match="tau"):
        SoftQ(tau=0.0).fit(d)
    with pytest.raises(ValueError, match="alpha"):
        CQL(alpha=-1.0).fit(d)
    with pytest.raises(ValueError, match="gamma"):
        LCB(gamma=1.0).fit(d)
    with pytest.raises(ValueError, match="features"):
        FQI().fit(d, np.zeros((2, 2, 3)))
