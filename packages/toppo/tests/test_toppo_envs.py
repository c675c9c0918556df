import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

from paperworks.toppo.envs import MultiTaskEnv, make_gym_task  # noqa: E402
from paperworks.toppo.tasks import DEFAULT_TASKS, OBS_DIM  # noqa: E402


def test_multitask_env_passes_gymnasium_checker_and_exposes_task_id():
    env = MultiTaskEnv([make_gym_task(t) for t in DEFAULT_TASKS])
    check_env(env, skip_render_check=True)
    seen = []
    env.reset(seed=0)
    env._next = 0
    for _ in range(5):
        obs, info = env.reset()
        seen.append(info["task_id"])
        assert obs.shape == (OBS_DIM + 5,) and obs[OBS_DIM + info["task_id"]] == 1.0
        _, _, _, _, info2 = env.step(env.action_space.sample())
        assert info2["task_id"] == info["task_id"]
    assert sorted(seen) == list(range(5))
    _, info = env.reset(options={"task_id": 3})
    assert info["task_id"] == 3


def test_reward_scale_and_time_limit():
    env = make_gym_task(DEFAULT_TASKS[1])  # CartPole x10
    env.reset(seed=0)
    _, r, *_ = env.step(np.array([0.5], dtype=np.float32))
    assert r == pytest.approx(10.0)
    env = make_gym_task(DEFAULT_TASKS[2])
    env.reset(seed=0)
    for _ in range(200):
        *_, term, trunc, _ = env.step(np.zeros(1, dtype=np.float32))
    assert trunc and not term


def test_bad_input():
    raw = [gym.make("CartPole-v1"), gym.make("Pendulum-v1")]
    with pytest.raises(ValueError, match="observation spaces differ"):
        MultiTaskEnv(raw)
    with pytest.raises(ValueError, match="action spaces differ"):
        MultiTaskEnv(raw, pad=True)
    pendulum = gym.wrappers.RescaleAction(gym.make("Pendulum-v1"), -1.0, 1.0)
    padded = MultiTaskEnv([pendulum, gym.make("MountainCarContinuous-v0")], pad=True)
    obs, _ = padded.reset(options={"task_id": 1})
    assert obs.shape == (3 + 2,) and obs[2] == 0.0 and obs[3 + 1] == 1.0
    env = MultiTaskEnv([make_gym_task(t) for t in DEFAULT_TASKS[:2]])
    with pytest.raises(ValueError, match="task_id"):
        env.reset(options={"task_id": 2})
    with pytest.raises(ValueError, match="envs"):
        MultiTaskEnv([])
