"""The three quantities that govern non-uniform replay (arXiv 2605.10236, Sec. 3).

* **replay volume**: replayed transitions per environment step, ``V = UTD x batch_size``
  (gradient updates per environment step times transitions per update);
* **expected recency**: the expected age ``E[a]`` of a sampled transition (0 = newest), also
  given relative to the buffer, ``E[a] / (n - 1)`` (0 = always newest, 0.5 = uniform);
* **entropy**: ``H(P) = -sum_a P(a) log P(a)`` of the sampling distribution over the ``n`` stored
  transitions (nats; ``log n`` for uniform).

Pure functions work on any pmf over ages (so on any sampler, through ``sampler.pmf(n)``);
:class:`ReplayMonitor` accumulates the same quantities from the ages a training run actually
sampled (torchmetrics-style ``update`` / ``compute``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import finite_array, nonnegative_int, positive_float, positive_int

__all__ = [
    "ReplayMonitor",
    "ReplayStats",
    "expected_recency",
    "relative_recency",
    "replay_volume",
    "sampling_entropy",
]


def _check_pmf(pmf: object) -> np.ndarray:
    p = finite_array(pmf, "pmf", ndim=1)
    if np.any(p < 0):
        raise ValueError("pmf: probabilities must be >= 0")
    if not math.isclose(float(p.sum()), 1.0, rel_tol=0, abs_tol=1e-6):
        raise ValueError(f"pmf: probabilities must sum to 1, got {float(p.sum()):.6g}")
    return p


def replay_volume(batch_size: float, updates_per_step: float) -> float:
    """Replay volume ``V = updates_per_step * batch_size`` (replayed transitions per env step)."""
    b = positive_float(batch_size, "batch_size")
    u = positive_float(updates_per_step, "updates_per_step")
    return b * u


def expected_recency(pmf: np.ndarray) -> float:
    """Expected age ``sum_a a P(a)`` of a pmf over ages ``0..n-1`` (shape ``(n,)``)."""
    p = _check_pmf(pmf)
    return float(np.dot(np.arange(p.size, dtype=float), p))


def relative_recency(pmf: np.ndarray) -> float:
    """Expected age divided by the oldest age ``n - 1`` (0 for ``n = 1``): 0.5 for uniform."""
    p = _check_pmf(pmf)
    return 0.0 if p.size == 1 else expected_recency(p) / (p.size - 1)


def sampling_entropy(pmf: np.ndarray) -> float:
    """Shannon entropy ``-sum P log P`` in nats of a pmf over ages (shape ``(n,)``)."""
    p = _check_pmf(pmf)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


@dataclass(frozen=True)
class ReplayStats:
    """What :class:`ReplayMonitor` measured over a run."""

    replay_volume: float
    mean_age: float
    mean_relative_age: float
    env_steps: int
    replayed: int


class ReplayMonitor:
    """Accumulate replay volume and recency from a run's sampled ages.

    ``step(n)`` counts ``n`` environment transitions; ``update(ages, size)`` records a batch of
    sampled ages (shape ``(B,)``) from a buffer holding ``size`` transitions. ``compute()`` gives
    the empirical replay volume (replayed / env steps) and the mean absolute and relative age.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._env_steps = 0
        self._replayed = 0
        self._age_sum = 0.0
        self._rel_sum = 0.0

    def step(self, n: int = 1) -> None:
        """Count ``n >= 0`` environment transitions."""
        self._env_steps += nonnegative_int(n, "n")

    def update(self, ages: np.ndarray, size: int) -> None:
        """Record sampled ages (ints in ``[0, size)``, shape ``(B,)``) from a buffer of ``size``."""
        size = positive_int(size, "size")
        a = finite_array(ages, "ages", ndim=1, dtype_kind="i")
        if a.min() < 0 or a.max() >= size:
            raise ValueError(f"ages: expected values in [0, size={size}), got [{a.min()}, {a.max()}]")
        self._replayed += a.size
        self._age_sum += float(a.sum())
        self._rel_sum += float(a.sum()) / (size - 1) if size > 1 else 0.0

    def compute(self) -> ReplayStats:
        """The statistics so far; needs at least one :meth:`update` and one environment step."""
        if self._replayed == 0:
            raise ValueError("ReplayMonitor.compute: no sampled ages recorded; call update() first")
        if self._env_steps == 0:
            raise ValueError(
                "ReplayMonitor.compute: no environment steps counted, so the replay volume is undefined; "
                "call step(n) for the transitions collected"
            )
        volume = self._replayed / self._env_steps
        return ReplayStats(
            replay_volume=volume,
            mean_age=self._age_sum / self._replayed,
            mean_relative_age=self._rel_sum / self._replayed,
            env_steps=self._env_steps,
            replayed=self._replayed,
        )
