"""Truncated Geometric replay and the quantities that govern non-uniform replay (arXiv 2605.10236).

Samplers over transition ages (uniform, Truncated Geometric, recency window, and a matched
window), prioritized replay on a sum-tree, the replay diagnostics (replay volume, expected recency,
entropy), a NumPy ring buffer, and the NumPy learners of the reproduction (DQN and TD3, trained as
populations of agents side by side on vectorised classic-control tasks). TorchRL and
Stable-Baselines3 drop-ins live in :mod:`paperworks.tg_replay.torchrl_sampler` and
:mod:`paperworks.tg_replay.sb3_buffer` (optional extras, imported on demand).
"""

from .buffer import RingBuffer, TransitionBatch
from .diagnostics import (
    ReplayMonitor,
    ReplayStats,
    expected_recency,
    relative_recency,
    replay_volume,
    sampling_entropy,
)
from .dqn import DQNConfig, DQNPopulation, NumpyDQN
from .per import PrioritizedSampler, SumTree
from .samplers import (
    MatchedWindowSampler,
    RecencyWindowSampler,
    Sampler,
    TruncatedGeometricSampler,
    UniformSampler,
    make_sampler,
    sampler_from_state,
    truncated_geometric_mean,
)
from .tasks import TASKS, make_task
from .td3 import TD3Config, TD3Population
from .training import RunConfig, RunResult, run_dqn, run_population, run_td3

__all__ = [
    "TASKS",
    "DQNConfig",
    "DQNPopulation",
    "MatchedWindowSampler",
    "NumpyDQN",
    "PrioritizedSampler",
    "RecencyWindowSampler",
    "ReplayMonitor",
    "ReplayStats",
    "RingBuffer",
    "RunConfig",
    "RunResult",
    "Sampler",
    "SumTree",
    "TD3Config",
    "TD3Population",
    "TransitionBatch",
    "TruncatedGeometricSampler",
    "UniformSampler",
    "expected_recency",
    "make_sampler",
    "make_task",
    "relative_recency",
    "replay_volume",
    "run_dqn",
    "run_population",
    "run_td3",
    "sampler_from_state",
    "sampling_entropy",
    "truncated_geometric_mean",
]
