"""Task-conditioned actor and critic (inputs ``[observation, task one-hot]``).

- :class:`LNCritic`: MLP body, ``Linear -> LayerNorm -> tanh`` in every hidden layer when
  ``layer_norm=True`` (TOPPO's pre-activation LN-c), ``Linear -> tanh`` otherwise, then ``K`` value
  heads (:class:`~paperworks.toppo.popart.PopArt` or plain :class:`~paperworks.toppo.popart.MultiHeadValue`).
- :class:`GaussianActor`: tanh MLP giving the mean of a diagonal Gaussian with a state-independent
  log standard deviation (PPO's usual continuous policy).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from paperworks.core.validate import positive_int

from .popart import MultiHeadValue, PopArt

__all__ = ["GaussianActor", "LNCritic", "mlp"]


def mlp(in_dim: int, hidden: tuple[int, ...], layer_norm: bool = False) -> nn.Sequential:
    """Hidden layers ``Linear [-> LayerNorm] -> tanh`` (orthogonal init, gain sqrt 2)."""
    layers: list[nn.Module] = []
    d = positive_int(in_dim, "in_dim")
    for h in hidden:
        lin = nn.Linear(d, positive_int(h, "hidden"))
        nn.init.orthogonal_(lin.weight, math.sqrt(2))
        nn.init.zeros_(lin.bias)
        layers.append(lin)
        if layer_norm:
            layers.append(nn.LayerNorm(h))
        layers.append(nn.Tanh())
        d = h
    return nn.Sequential(*layers)


class LNCritic(nn.Module):
    """``forward(obs (B, D), task_ids (B,)) -> normalised value (B,)``; ``value`` unnormalises it."""

    def __init__(
        self,
        obs_dim: int,
        n_tasks: int,
        hidden: tuple[int, ...] = (64, 64),
        *,
        layer_norm: bool = True,
        popart: bool = True,
        popart_beta: float = 0.1,
    ):
        super().__init__()
        if len(hidden) == 0:
            raise ValueError("hidden: expected at least one hidden layer")
        self.body = mlp(obs_dim, tuple(hidden), layer_norm)
        self.head: MultiHeadValue = (
            PopArt(hidden[-1], n_tasks, beta=popart_beta) if popart else MultiHeadValue(hidden[-1], n_tasks)
        )

    def forward(self, obs: torch.Tensor, task_ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(obs), task_ids)

    def value(self, obs: torch.Tensor, task_ids: torch.Tensor) -> torch.Tensor:
        return self.head.unnormalise(self.forward(obs, task_ids), task_ids)

    def shared_parameters(self) -> list[nn.Parameter]:
        return list(self.body.parameters())

    def task_parameters(self) -> list[nn.Parameter]:
        return list(self.head.parameters())


class GaussianActor(nn.Module):
    """``forward(obs (B, D)) -> torch.distributions.Normal`` over actions ``(B, act_dim)``."""

    def __init__(
        self, obs_dim: int, act_dim: int = 1, hidden: tuple[int, ...] = (64, 64), log_std: float = 0.0
    ):
        super().__init__()
        self.body = mlp(obs_dim, tuple(hidden))
        self.mean = nn.Linear(hidden[-1], positive_int(act_dim, "act_dim"))
        nn.init.orthogonal_(self.mean.weight, 0.01)
        nn.init.zeros_(self.mean.bias)
        self.log_std = nn.Parameter(torch.full((act_dim,), float(log_std)))

    def forward(self, obs: torch.Tensor) -> torch.distributions.Normal:
        mean = self.mean(self.body(obs))
        return torch.distributions.Normal(mean, self.log_std.exp().expand_as(mean))
