import numpy as np
import pytest

from paperworks.tg_replay import DQNConfig, DQNPopulation, NumpyDQN, TD3Config, TD3Population
from paperworks.tg_replay.nets import MLPStack


def _numeric_grad(f, theta, h=1e-6):
    out = np.zeros_like(theta)
    for i in range(theta.size):
        old = theta[i]
        theta[i] = old + h
        up = f()
        theta[i] = old - h
        down = f()
        theta[i] = old
        out[i] = (up - down) / (2 * h)
    return out


@pytest.mark.parametrize("out_activation", [None, "tanh"])
def test_mlp_stack_backward_matches_finite_differences(out_activation):
    rng = np.random.default_rng(0)
    net = MLPStack(3, (4, 5, 6, 2), seed=1, tied_init=False, dtype=np.float64, out_activation=out_activation)
    x = rng.normal(size=(3, 7, 4))
    w = rng.normal(size=(3, 7, 2))

    def loss():
        return float((net.forward(x)[0] * w).sum())

    _, cache = net.forward(x, cache=True)
    dx = net.backward(cache, w, input_grad=True)
    np.testing.assert_allclose(net.grad, _numeric_grad(loss, net.theta), rtol=1e-5, atol=1e-7)
    # the input gradient, by finite differences on x
    flat_x = x.reshape(-1)

    def loss_x():
        return float((net.forward(flat_x.reshape(x.shape))[0] * w).sum())

    np.testing.assert_allclose(dx.reshape(-1), _numeric_grad(loss_x, flat_x), rtol=1e-5, atol=1e-7)


def test_agents_are_independent_in_the_stack():
    # the gradient of agent 0's loss touches only agent 0's parameters
    rng = np.random.default_rng(2)
    net = MLPStack(2, (3, 4, 1), seed=0, tied_init=False, dtype=np.float64)
    x = rng.normal(size=(2, 5, 3))
    _, cache = net.forward(x, cache=True)
    d = np.zeros((2, 5, 1))
    d[0] = 1.0
    net.backward(cache, d)
    for g in net.grads:
        assert np.abs(g[0]).sum() > 0 and np.all(g[1] == 0)


def _huber_loss(agent, theta, batch):
    o, a, r, no, d = batch
    saved = agent.theta.copy()
    agent.theta[...] = theta
    q = agent.q_values(o)
    agent.theta[...] = saved
    qn = agent.q_values(no, target=True)
    td = q[np.arange(len(a)), a] - (r + agent.config.gamma * (1 - d) * qn.max(axis=1))
    return np.where(np.abs(td) <= 1, 0.5 * td**2, np.abs(td) - 0.5).mean()


def test_dqn_gradient_matches_finite_differences():
    agent = NumpyDQN(3, 2, DQNConfig(hidden=6, lr=1e-300, target_every=10**9), seed=2)
    agent.target[...] += 0.05
    rng = np.random.default_rng(0)
    batch = (
        rng.normal(size=(7, 3)),
        rng.integers(0, 2, 7),
        rng.normal(size=7),
        rng.normal(size=(7, 3)),
        (rng.random(7) < 0.3).astype(float),
    )
    theta = agent.theta.copy()
    eye = np.eye(theta.size) * 1e-6
    numeric = np.array(
        [(_huber_loss(agent, theta + e, batch) - _huber_loss(agent, theta - e, batch)) / 2e-6 for e in eye]
    )
    agent.update(*batch)
    np.testing.assert_allclose(agent.grad, numeric, atol=1e-7)


def test_zero_weight_padding_gives_the_unpadded_gradient():
    # agents at several batch sizes share one population: the surplus samples get weight 0 and the
    # real ones batch / B_k, which must be the gradient of the agent's own batch
    rng = np.random.default_rng(5)
    pop_small = DQNPopulation(1, 3, 2, DQNConfig(hidden=8), seed=1, dtype=np.float64)
    pop_pad = DQNPopulation(1, 3, 2, DQNConfig(hidden=8), seed=1, dtype=np.float64)
    b, big = 5, 12
    o, no = rng.normal(size=(1, big, 3)), rng.normal(size=(1, big, 3))
    a, r, d = rng.integers(0, 2, (1, big)), rng.normal(size=(1, big)), np.zeros((1, big))
    pop_small.update(o[:, :b], a[:, :b], r[:, :b], no[:, :b], d[:, :b])
    w = np.zeros((1, big))
    w[:, :b] = big / b
    pop_pad.update(o, a, r, no, d, weights=w)
    np.testing.assert_allclose(pop_pad.net.grad, pop_small.net.grad, rtol=1e-10, atol=1e-14)


def test_td3_actor_gradient_ascends_the_first_critic():
    rng = np.random.default_rng(3)
    pop = TD3Population(2, 3, 1, 2.0, TD3Config(hidden=6), seed=0, dtype=np.float64)
    x = rng.normal(size=(2, 9, 3))

    def actor_loss():
        q1, _ = pop.q_values(x, pop.policy(x))
        return float(-q1.mean(axis=1).sum())

    numeric = _numeric_grad(actor_loss, pop.actor.theta)
    saved_opt = pop.actor_opt.step
    pop.actor_opt.step = lambda theta, grad: None  # keep the parameters where the gradient was taken
    pop._actor_step(x)
    pop.actor_opt.step = saved_opt
    np.testing.assert_allclose(pop.actor.grad, numeric, rtol=1e-5, atol=1e-8)


def test_td3_learns_a_one_step_bandit():
    # reward -(a - 0.5 s)^2, episodes of one step: the optimal action is 0.5 s
    rng = np.random.default_rng(0)
    pop = TD3Population(1, 1, 1, 1.0, TD3Config(hidden=32, lr=3e-3), seed=0)
    for _ in range(1500):
        s = rng.uniform(-1, 1, (1, 64, 1))
        a = rng.uniform(-1, 1, (1, 64, 1))
        r = -((a - 0.5 * s) ** 2)[..., 0]
        pop.update(s, a, r, s, np.ones((1, 64)))
    s = np.linspace(-1, 1, 11).reshape(1, 11, 1)
    np.testing.assert_allclose(pop.policy(s)[0, :, 0], 0.5 * s[0, :, 0], atol=0.1)


def test_dqn_fits_a_one_step_target_and_is_seeded():
    rng = np.random.default_rng(1)
    obs = rng.normal(size=(64, 2))
    action = rng.integers(0, 2, 64)
    reward = np.where(action == 0, obs[:, 0], -obs[:, 0])
    done = np.ones(64)

    def train():
        agent = NumpyDQN(2, 2, DQNConfig(hidden=16, lr=3e-3), seed=0)
        for _ in range(600):
            td = agent.update(obs, action, reward, obs, done)
        return agent, td

    a1, td1 = train()
    a2, _ = train()
    np.testing.assert_array_equal(a1.theta, a2.theta)
    assert np.abs(td1).mean() < 0.1
    acts = a1.act(obs, 0.0, rng)
    assert np.mean(acts == (obs[:, 0] < 0)) > 0.9


def test_population_agents_start_equal_and_share_exploration():
    pop = DQNPopulation(3, 4, 2, seed=7)
    x = np.random.default_rng(0).normal(size=(1, 5, 4)).repeat(3, axis=0)
    q = pop.q_values(x)
    np.testing.assert_array_equal(q[0], q[1])
    np.testing.assert_array_equal(q[0], q[2])
    a = pop.act(x, 1.0, np.random.default_rng(1))  # all random: one draw per column, shared
    np.testing.assert_array_equal(a[0], a[1])


def test_dqn_config_validation():
    with pytest.raises(ValueError, match="gamma"):
        DQNConfig(gamma=1.5)
    with pytest.raises(ValueError, match="lr"):
        DQNConfig(lr=0)
    with pytest.raises(ValueError, match="tau"):
        DQNConfig(tau=0.0)
    with pytest.raises(ValueError, match="policy_delay"):
        TD3Config(policy_delay=0)
