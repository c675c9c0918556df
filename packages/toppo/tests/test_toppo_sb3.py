import pytest

pytest.importorskip("stable_baselines3")
import torch
from stable_baselines3 import PPO

from paperworks.core import torch_threads
from paperworks.toppo.envs import MultiTaskEnv, make_gym_task
from paperworks.toppo.sb3 import LNCriticPolicy
from paperworks.toppo.tasks import DEFAULT_TASKS


def test_sb3_ppo_trains_with_the_ln_critic_policy(tmp_path):
    env = MultiTaskEnv([make_gym_task(t) for t in DEFAULT_TASKS[:2]])
    with torch_threads(1):
        model = PPO(LNCriticPolicy, env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
        model.learn(128)
        value_layers = list(model.policy.mlp_extractor.value_net)
        assert any(isinstance(m, torch.nn.LayerNorm) for m in value_layers)
        assert not any(isinstance(m, torch.nn.LayerNorm) for m in model.policy.mlp_extractor.policy_net)
        obs, _ = env.reset(seed=0)
        a, _ = model.predict(obs, deterministic=True)
        model.save(tmp_path / "m")
        again = PPO.load(tmp_path / "m", device="cpu")
        b, _ = again.predict(obs, deterministic=True)
    assert (a == b).all()
