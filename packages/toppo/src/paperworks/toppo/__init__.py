"""TOPPO (arXiv 2605.11473): multi-task PPO with Critic Balancing, and its baselines.

Per-task PopArt value heads, a pre-activation LayerNorm critic (LN-c), per-side gradient combiners
(PCGrad, CAGrad, FairGrad), critic-Gram diagnostics, a batched classic-control task family equal to
gymnasium's dynamics, multi-task PPO (TOPPO and vanilla) and multi-task SAC trainers.
The gymnasium wrapper lives in :mod:`paperworks.toppo.envs` (extra ``gym``), the stable-baselines3
policy class in :mod:`paperworks.toppo.sb3` (extra ``sb3``).
"""

from .combiners import (
    COMBINERS,
    GradientCombiner,
    cagrad,
    combine,
    fairgrad,
    mean_combiner,
    pcgrad,
    per_task_gradients,
)
from .diagnostics import gram_diagnostics
from .networks import GaussianActor, LNCritic, mlp
from .popart import MultiHeadValue, PopArt, popart_preserve
from .ppo import MultiTaskPPO, PPOConfig, evaluate_policy, parameter_count
from .sac import MultiTaskSAC, SACConfig
from .tasks import (
    DEFAULT_TASKS,
    OBS_DIM,
    BatchedMultiTaskEnv,
    TaskSpec,
    default_family,
    normalised_return,
    random_policy_return,
)

__all__ = [
    "COMBINERS",
    "DEFAULT_TASKS",
    "OBS_DIM",
    "BatchedMultiTaskEnv",
    "GaussianActor",
    "GradientCombiner",
    "LNCritic",
    "MultiHeadValue",
    "MultiTaskPPO",
    "MultiTaskSAC",
    "PPOConfig",
    "PopArt",
    "SACConfig",
    "TaskSpec",
    "cagrad",
    "combine",
    "default_family",
    "evaluate_policy",
    "fairgrad",
    "gram_diagnostics",
    "mean_combiner",
    "mlp",
    "normalised_return",
    "parameter_count",
    "pcgrad",
    "per_task_gradients",
    "popart_preserve",
    "random_policy_return",
]
