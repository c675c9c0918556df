import numpy as np
import pytest

from paperworks.tg_replay import MatchedWindowSampler, TruncatedGeometricSampler


def _torchrl_rb(sampler, size=100, batch_size=64):
    from torchrl.data import LazyTensorStorage, ReplayBuffer

    return ReplayBuffer(storage=LazyTensorStorage(size), sampler=sampler, batch_size=batch_size)


def test_torchrl_sampler_draws_recent_indices_across_wraparound():
    pytest.importorskip("torchrl")
    import torch

    from paperworks.tg_replay.torchrl_sampler import TGSampler

    rb = _torchrl_rb(TGSampler(p=0.05, seed=0), batch_size=20_000)
    with pytest.raises(ValueError, match="empty buffer"):
        rb.sample()
    rb.extend(torch.arange(250))  # wraps around: storage holds 150..249
    values = rb.sample()
    ages = 249 - values.numpy()
    assert ages.min() >= 0 and ages.max() < 100
    assert abs(ages.mean() - TruncatedGeometricSampler(0.05).expected_recency(100)) < 0.5
    with pytest.raises(ValueError, match="p"):
        TGSampler()


@pytest.mark.parametrize("via", ["dumps", "state_dict"])
def test_torchrl_round_trip_keeps_anchor_and_rng(via, tmp_path):
    pytest.importorskip("torchrl")
    import torch

    from paperworks.tg_replay.torchrl_sampler import TGSampler

    tg = TruncatedGeometricSampler(0.1)
    rb = _torchrl_rb(TGSampler(sampler=MatchedWindowSampler(tg), seed=4))
    rb.extend(torch.arange(50))  # newest value 49 at slot 49 (issue 26: seen at slot 0 after loads)
    rb.sample()  # advance the generator
    if via == "dumps":
        rb.dumps(tmp_path / "rb")
    else:
        state = rb.state_dict()
    expected = [rb.sample().clone() for _ in range(3)]

    fresh = _torchrl_rb(TGSampler(p=0.5, seed=99))  # another sampler and seed: replaced by the load
    fresh.extend(torch.zeros(5, dtype=torch.int64))  # a lazy storage loads into an initialised one
    assert fresh._sampler._last == 4
    if via == "dumps":
        fresh.loads(tmp_path / "rb")
    else:
        fresh.load_state_dict(state)
    assert fresh._sampler._last == 49
    assert fresh._sampler.age_sampler == MatchedWindowSampler(tg)
    for want in expected:
        torch.testing.assert_close(fresh.sample(), want)
    # writing on after the load moves the anchor as in the original buffer
    rb.extend(torch.arange(50, 60))
    fresh.extend(torch.arange(50, 60))
    torch.testing.assert_close(fresh.sample(), rb.sample())
    assert fresh._sampler._last == 59


def test_torchrl_loads_refuses_a_missing_state(tmp_path):
    pytest.importorskip("torchrl")
    from paperworks.tg_replay.torchrl_sampler import TGSampler

    with pytest.raises(FileNotFoundError, match=r"tg_sampler\.json"):
        TGSampler(p=0.1).loads(tmp_path)
    with pytest.raises(ValueError, match="state_dict"):
        TGSampler(p=0.1).load_state_dict({"last": 3})


def test_transition_batch_to_torch():
    torch = pytest.importorskip("torch")
    from paperworks.tg_replay import RingBuffer

    buf = RingBuffer(8, (2,), seed=0)
    buf.add(np.ones((5, 2), np.float32), np.zeros(5, np.int64), np.ones(5), np.ones((5, 2)), np.zeros(5))
    t = buf.sample(3).to_torch()
    assert tuple(t["obs"].shape) == (3, 2) and t["obs"].dtype == torch.float32


def _sb3_fill(buf, start, stop):
    for t in range(start, stop):
        o = np.array([[t]], np.float32)
        buf.add(o, o + 1, np.array([0]), np.array([float(t)]), np.array([False]), [{}])


def test_sb3_replay_buffer_samples_recent_positions():
    pytest.importorskip("stable_baselines3")
    from gymnasium import spaces

    from paperworks.tg_replay.sb3_buffer import TGReplayBuffer

    obs_space = spaces.Box(-np.inf, np.inf, (1,), np.float32)
    buf = TGReplayBuffer(50, obs_space, spaces.Discrete(2), device="cpu", p=0.1, seed=0)
    with pytest.raises(ValueError, match="empty buffer"):
        buf.sample(4)
    _sb3_fill(buf, 0, 120)  # wraps around twice
    batch = buf.sample(20_000)
    ages = 119 - batch.rewards.numpy().ravel()
    assert ages.min() >= 0 and ages.max() < 50
    assert abs(ages.mean() - TruncatedGeometricSampler(0.1).expected_recency(50)) < 0.2
    with pytest.raises(ValueError, match="optimize_memory_usage"):
        TGReplayBuffer(50, obs_space, spaces.Discrete(2), p=0.1, optimize_memory_usage=True)


def test_sb3_save_and_load_replay_buffer_round_trip(tmp_path):
    pytest.importorskip("stable_baselines3")
    import gymnasium as gym
    from stable_baselines3 import DQN

    from paperworks.tg_replay.sb3_buffer import TGReplayBuffer

    env = gym.make("CartPole-v1")
    model = DQN(
        "MlpPolicy",
        env,
        buffer_size=64,
        learning_starts=10**9,  # never trains: this test is about the buffer
        replay_buffer_class=TGReplayBuffer,
        replay_buffer_kwargs={"p": 0.2, "seed": 5},
        device="cpu",
    )
    model.learn(150)  # fills and wraps the 64-position buffer
    rb = model.replay_buffer
    rb.sample(8)
    model.save_replay_buffer(tmp_path / "rb.pkl")
    expected = [rb.sample(16).observations.clone() for _ in range(3)]

    other = DQN("MlpPolicy", env, buffer_size=64, device="cpu")  # a plain uniform buffer, replaced
    other.load_replay_buffer(tmp_path / "rb.pkl")
    loaded = other.replay_buffer
    assert isinstance(loaded, TGReplayBuffer) and loaded.pos == rb.pos and loaded.full
    assert loaded.age_sampler == TruncatedGeometricSampler(0.2)
    for want in expected:
        np.testing.assert_array_equal(loaded.sample(16).observations.numpy(), want.numpy())
    # the state_dict path restores the sampler and its generator too
    fresh = TGReplayBuffer(64, env.observation_space, env.action_space, device="cpu", p=0.9, seed=0)
    fresh.load_state_dict(loaded.state_dict())
    assert fresh.age_sampler == loaded.age_sampler
    assert fresh._age_rng.bit_generator.state == loaded._age_rng.bit_generator.state
