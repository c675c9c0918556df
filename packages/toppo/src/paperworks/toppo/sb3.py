"""stable-baselines3 integration (extra ``sb3``): an ``ActorCriticPolicy`` with TOPPO's LN-c critic.

``PPO(LNCriticPolicy, env)`` trains SB3's PPO with a value network whose hidden layers are
``Linear -> LayerNorm -> activation`` (pre-activation LayerNorm) and an unchanged policy network, so
the LN-c module drops into any SB3 on-policy algorithm. Use it with
:class:`~paperworks.toppo.envs.MultiTaskEnv` (the task one-hot is part of the observation). Per-task
PopArt and the gradient combiners change the algorithm's loss and update, which SB3's ``PPO.train``
does not expose; they live in :class:`~paperworks.toppo.ppo.MultiTaskPPO` (and
:class:`~paperworks.toppo.combiners.GradientCombiner` wraps any ``torch.optim`` optimiser).
"""

from __future__ import annotations

import torch
from stable_baselines3.common.policies import ActorCriticPolicy
from torch import nn

__all__ = ["LNCriticExtractor", "LNCriticPolicy"]


class LNCriticExtractor(nn.Module):
    """SB3 ``MlpExtractor`` look-alike: separate policy and value MLPs, LayerNorm in the value MLP."""

    def __init__(self, feature_dim: int, pi: list[int], vf: list[int], activation_fn: type[nn.Module]):
        super().__init__()

        def build(sizes: list[int], layer_norm: bool) -> tuple[nn.Sequential, int]:
            layers: list[nn.Module] = []
            d = feature_dim
            for h in sizes:
                layers.append(nn.Linear(d, h))
                if layer_norm:
                    layers.append(nn.LayerNorm(h))
                layers.append(activation_fn())
                d = h
            return nn.Sequential(*layers), d

        self.policy_net, self.latent_dim_pi = build(pi, False)
        self.value_net, self.latent_dim_vf = build(vf, True)

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(features)


class LNCriticPolicy(ActorCriticPolicy):
    """``ActorCriticPolicy`` whose value network uses pre-activation LayerNorm (TOPPO's LN-c).

    ``net_arch``: SB3's ``dict(pi=[...], vf=[...])`` or a list used for both (default ``[64, 64]``).
    """

    def _build_mlp_extractor(self) -> None:
        arch = self.net_arch
        if isinstance(arch, dict):
            pi, vf = list(arch.get("pi", [])), list(arch.get("vf", []))
        else:
            pi = vf = list(arch) if arch else [64, 64]
        self.mlp_extractor = LNCriticExtractor(self.features_dim, pi, vf, self.activation_fn).to(self.device)
