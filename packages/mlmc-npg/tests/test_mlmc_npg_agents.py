"""The gymnasium environment (gymnasium's checker) and the agent on it and on mo-gymnasium."""

import numpy as np
import pytest

from paperworks.mlmc_npg import MLMCNPGAgent, proportional_fairness, random_mdp, state_index

gym = pytest.importorskip("gymnasium")


@pytest.fixture(scope="module")
def env():
    from paperworks.mlmc_npg.gym_env import TabularMOEnv

    return TabularMOEnv(random_mdp(5, 3, 2, 0.8, rng=0), max_episode_steps=30)


def test_env_passes_gymnasium_checker(env):
    from gymnasium.utils.env_checker import check_env

    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    _, r, *_ = env.step(1)
    assert env.observation_space.contains(obs) and r.shape == (2,) and env.reward_space.contains(r)


def test_agent_improves_the_utility_on_the_tabular_env(env):
    from paperworks.mlmc_npg import softmax_policy

    f = proportional_fairness(2)
    mdp = env.mdp
    start = float(f.value(mdp.returns(np.full((5, 3), 1 / 3))))
    agent = MLMCNPGAgent(f, gamma=0.8, estimator="mlmc", batch=32, eta=0.3, max_steps=30, seed=0)
    agent.learn(env, budget=400)
    assert agent.episodes_ >= 400 and agent.policy_.shape == (5, 3)
    end = float(f.value(mdp.returns(softmax_policy(agent.theta_))))
    assert end > start
    plug = MLMCNPGAgent(f, gamma=0.8, estimator="plugin", batch=16, eta=0.3, max_steps=30, seed=0)
    assert float(f.value(mdp.returns(plug.learn(env, 200).policy_))) > start


def test_state_dict_round_trip(env):
    f = proportional_fairness(2)
    a = MLMCNPGAgent(f, gamma=0.8, batch=8, max_steps=20, seed=1).learn(env, 30)
    b = MLMCNPGAgent(f, gamma=0.8, batch=8, max_steps=20, seed=99).load_state_dict(a.state_dict())
    assert np.array_equal(a.theta_, b.theta_) and a.episodes_ == b.episodes_
    a.learn(env, 20)
    b.learn(env, 20)
    assert np.array_equal(a.theta_, b.theta_)  # the generator state travelled too


def test_reward_dimension_must_match(env):
    agent = MLMCNPGAgent(proportional_fairness(3), gamma=0.8, max_steps=5, seed=0)
    with pytest.raises(ValueError, match="reward dimension 2 does not match"):
        agent.learn(env, 5)
    with pytest.raises(RuntimeError, match="learn"):
        _ = MLMCNPGAgent(proportional_fairness(2)).policy_
    with pytest.raises(ValueError, match="gamma"):
        MLMCNPGAgent(proportional_fairness(2), gamma=1.0)


def test_state_index_flattens_integer_boxes():
    n, index = state_index(gym.spaces.Box(0, 10, shape=(2,), dtype=np.int32))
    assert n == 121 and index(np.array([3, 4])) == 3 * 11 + 4
    with pytest.raises(ValueError, match="observation_space"):
        state_index(gym.spaces.Box(0.0, 1.0, shape=(2,)))


def test_agent_on_mo_gymnasium_deep_sea_treasure():
    mo_gym = pytest.importorskip("mo_gymnasium")
    env = mo_gym.make("deep-sea-treasure-v0")
    # treasure value and time penalty, shifted so proportional fairness is defined at reachable J
    from paperworks.mlmc_npg import ConcaveScalarization

    shift = np.array([0.0, 100.0])
    f = ConcaveScalarization(
        "log(treasure + 1) + log(time + 100)",
        2,
        lambda J: np.log(J + 1 + shift).sum(-1),
        lambda J: 1 / (J + 1 + shift),
        domain_fn=lambda J: np.all(J + 1 + shift > 0, axis=-1),
    )
    agent = MLMCNPGAgent(f, gamma=0.99, batch=16, max_level=3, eta=0.5, max_steps=100, seed=0)
    agent.learn(env, budget=64)
    assert agent.theta_.shape == (144, 4) and agent.history_
    assert np.all(np.isfinite(agent.theta_))
