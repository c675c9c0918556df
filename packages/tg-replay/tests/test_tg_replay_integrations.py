import numpy as np
import pytest

from paperworks.tg_replay import TruncatedGeometricSampler


def test_torchrl_sampler_draws_recent_indices_across_wraparound():
    pytest.importorskip("torchrl")
    import torch
    from torchrl.data import LazyTensorStorage, ReplayBuffer

    from paperworks.tg_replay.torchrl_sampler import TGSampler

    rb = ReplayBuffer(storage=LazyTensorStorage(100), sampler=TGSampler(p=0.05, seed=0), batch_size=20_000)
    with pytest.raises(ValueError, match="empty buffer"):
        rb.sample()
    rb.extend(torch.arange(250))  # wraps around: storage holds 150..249
    values = rb.sample()
    ages = 249 - values.numpy()
    assert ages.min() >= 0 and ages.max() < 100
    assert abs(ages.mean() - TruncatedGeometricSampler(0.05).expected_recency(100)) < 0.5
    with pytest.raises(ValueError, match="p"):
        TGSampler()


def test_transition_batch_to_torch():
    torch = pytest.importorskip("torch")
    from paperworks.tg_replay import RingBuffer

    buf = RingBuffer(8, (2,), seed=0)
    buf.add(np.ones((5, 2), np.float32), np.zeros(5, np.int64), np.ones(5), np.ones((5, 2)), np.zeros(5))
    t = buf.sample(3).to_torch()
    assert tuple(t["obs"].shape) == (3, 2) and t["obs"].dtype == torch.float32


def test_sb3_replay_buffer_samples_recent_positions():
    pytest.importorskip("stable_baselines3")
    from gymnasium import spaces

    from paperworks.tg_replay.sb3_buffer import TGReplayBuffer

    obs_space = spaces.Box(-np.inf, np.inf, (1,), np.float32)
    buf = TGReplayBuffer(50, obs_space, spaces.Discrete(2), device="cpu", p=0.1, seed=0)
    with pytest.raises(ValueError, match="empty buffer"):
        buf.sample(4)
    for t in range(120):  # wraps around twice
        o = np.array([[t]], np.float32)
        buf.add(o, o + 1, np.array([0]), np.array([float(t)]), np.array([False]), [{}])
    batch = buf.sample(20_000)
    ages = 119 - batch.rewards.numpy().ravel()
    assert ages.min() >= 0 and ages.max() < 50
    assert abs(ages.mean() - TruncatedGeometricSampler(0.1).expected_recency(50)) < 0.2
    with pytest.raises(ValueError, match="optimize_memory_usage"):
        TGReplayBuffer(50, obs_space, spaces.Discrete(2), p=0.1, optimize_memory_usage=True)
