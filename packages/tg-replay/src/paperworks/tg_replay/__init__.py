"""Truncated Geometric replay and the quantities that govern non-uniform replay (arXiv 2605.10236).

Samplers over transition ages (uniform, Truncated Geometric, recency window, and a matched
window), prioritized replay on a sum-tree, the replay diagnostics (replay volume, expected recency,
entropy), a NumPy ring buffer, and a small NumPy DQN used by the reproduction. TorchRL and
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
from .dqn import DQNConfig, NumpyDQN
from .per import PrioritizedSampler, SumTree
from .samplers import (
    MatchedWindowSampler,
    RecencyWindowSampler,
    Sampler,
    TruncatedGeometricSampler,
    UniformSampler,
    make_sampler,
)

__all__ = [
    "DQNConfig",
    "MatchedWindowSampler",
    "NumpyDQN",
    "PrioritizedSampler",
    "RecencyWindowSampler",
    "ReplayMonitor",
    "ReplayStats",
    "RingBuffer",
    "Sampler",
    "SumTree",
    "TransitionBatch",
    "TruncatedGeometricSampler",
    "UniformSampler",
    "expected_recency",
    "make_sampler",
    "relative_recency",
    "replay_volume",
    "sampling_entropy",
]
