"""A plain NumPy ring buffer of transitions that samples through any replay sampler.

Transitions ``(obs, action, reward, next_obs, done)`` are written in batches (one row per
vectorised environment); when full, the oldest are overwritten. Age ``a`` (0 = newest) maps to
storage slot ``(cursor - 1 - a) mod capacity``, so every age sampler of
:mod:`paperworks.tg_replay.samplers` works unchanged; :class:`~paperworks.tg_replay.per.PrioritizedSampler`
samples slots directly and returns importance weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .per import PrioritizedSampler
from .samplers import Sampler, UniformSampler

__all__ = ["RingBuffer", "TransitionBatch"]


@dataclass(frozen=True)
class TransitionBatch:
    """A sampled batch: arrays with leading dimension ``B``; ``weights`` are 1 unless PER."""

    obs: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    next_obs: np.ndarray
    done: np.ndarray
    slots: np.ndarray
    ages: np.ndarray
    weights: np.ndarray

    def to_torch(self, device: Any = "cpu") -> dict[str, Any]:
        """The batch as a dict of ``torch.Tensor`` on ``device`` (torch imported lazily)."""
        import torch

        return {k: torch.as_tensor(getattr(self, k), device=device) for k in self.__dataclass_fields__}


class RingBuffer:
    """Fixed-capacity FIFO replay buffer.

    Args:
        capacity: number of transitions kept.
        obs_shape: shape of one observation, e.g. ``(4,)``.
        action_shape: shape of one action, ``()`` for discrete actions.
        sampler: an age sampler (default uniform) or a :class:`PrioritizedSampler` of the same capacity.
        obs_dtype, action_dtype: storage dtypes.
        seed: seed of the buffer's random generator.
    """

    def __init__(
        self,
        capacity: int,
        obs_shape: tuple[int, ...],
        action_shape: tuple[int, ...] = (),
        *,
        sampler: Sampler | PrioritizedSampler | None = None,
        obs_dtype: Any = np.float32,
        action_dtype: Any = np.int64,
        seed: int | None = None,
    ) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 1:
            raise ValueError(f"capacity: expected a positive int, got {capacity!r}")
        self.capacity = int(capacity)
        self.sampler = UniformSampler() if sampler is None else sampler
        if not isinstance(self.sampler, (Sampler, PrioritizedSampler)):
            raise TypeError(
                f"sampler: expected a Sampler or PrioritizedSampler, got {type(sampler).__name__}"
            )
        if isinstance(self.sampler, PrioritizedSampler) and self.sampler.capacity != self.capacity:
            raise ValueError(
                f"sampler: PrioritizedSampler capacity {self.sampler.capacity} != "
                f"buffer capacity {self.capacity}"
            )
        self.obs_shape = tuple(int(d) for d in obs_shape)
        self.action_shape = tuple(int(d) for d in action_shape)
        self.obs = np.zeros((self.capacity, *self.obs_shape), dtype=obs_dtype)
        self.next_obs = np.zeros((self.capacity, *self.obs_shape), dtype=obs_dtype)
        self.action = np.zeros((self.capacity, *self.action_shape), dtype=action_dtype)
        self.reward = np.zeros(self.capacity, dtype=np.float32)
        self.done = np.zeros(self.capacity, dtype=np.float32)
        self.cursor = 0  # next slot to write
        self.size = 0
        self.rng = np.random.default_rng(seed)

    def __len__(self) -> int:
        return self.size

    def _check(self, name: str, arr: Any, tail: tuple[int, ...], n: int | None) -> np.ndarray:
        a = np.asarray(arr)
        if a.ndim != len(tail) + 1 or a.shape[1:] != tail:
            raise ValueError(
                f"{name}: expected shape (n, {', '.join(map(str, tail))}), got {a.shape}".replace(", )", ")")
            )
        if n is not None and a.shape[0] != n:
            raise ValueError(f"{name}: expected {n} rows like obs, got {a.shape[0]}")
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            raise ValueError(f"{name}: contains NaN or inf")
        return a

    def add(self, obs: Any, action: Any, reward: Any, next_obs: Any, done: Any) -> np.ndarray:
        """Append ``n`` transitions (leading dimension ``n`` on every argument); return their slots."""
        o = self._check("obs", obs, self.obs_shape, None)
        n = o.shape[0]
        if n == 0:
            raise ValueError("obs: expected at least one transition, got an empty batch")
        a = self._check("action", action, self.action_shape, n)
        r = self._check("reward", reward, (), n)
        no = self._check("next_obs", next_obs, self.obs_shape, n)
        d = self._check("done", done, (), n)
        if n > self.capacity:  # only the newest `capacity` survive
            o, a, r, no, d = (
                o[-self.capacity :],
                a[-self.capacity :],
                r[-self.capacity :],
                no[-self.capacity :],
                d[-self.capacity :],
            )
            self.cursor = (self.cursor + n - self.capacity) % self.capacity
            n = self.capacity
        slots = (self.cursor + np.arange(n)) % self.capacity
        self.obs[slots] = o
        self.action[slots] = a
        self.reward[slots] = r
        self.next_obs[slots] = no
        self.done[slots] = d
        self.cursor = int((self.cursor + n) % self.capacity)
        self.size = min(self.capacity, self.size + n)
        if isinstance(self.sampler, PrioritizedSampler):
            self.sampler.add(slots)
        return slots

    def ages_to_slots(self, ages: np.ndarray) -> np.ndarray:
        """Storage slots of ages (0 = newest), shape preserved."""
        return (self.cursor - 1 - np.asarray(ages, dtype=np.int64)) % self.capacity

    def slots_to_ages(self, slots: np.ndarray) -> np.ndarray:
        """Ages (0 = newest) of storage slots, shape preserved."""
        return (self.cursor - 1 - np.asarray(slots, dtype=np.int64)) % self.capacity

    def sample_slots(
        self, batch_size: int, *, replace: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Draw ``(slots, ages, weights)``, each shape ``(batch_size,)``, without gathering data."""
        if self.size == 0:
            raise ValueError("RingBuffer.sample: cannot sample from an empty buffer; add transitions first")
        if isinstance(self.sampler, PrioritizedSampler):
            if not replace:
                raise ValueError("replace: PrioritizedSampler samples with replacement only")
            slots, weights = self.sampler.sample(batch_size, rng=self.rng)
            return slots, self.slots_to_ages(slots), weights
        ages = self.sampler.sample(self.size, batch_size, rng=self.rng, replace=replace)
        return self.ages_to_slots(ages), ages, np.ones(ages.shape[0], dtype=np.float32)

    def sample(self, batch_size: int, *, replace: bool = True) -> TransitionBatch:
        """Draw a :class:`TransitionBatch` of ``batch_size`` transitions through the sampler."""
        slots, ages, weights = self.sample_slots(batch_size, replace=replace)
        return TransitionBatch(
            obs=self.obs[slots],
            action=self.action[slots],
            reward=self.reward[slots],
            next_obs=self.next_obs[slots],
            done=self.done[slots],
            slots=slots,
            ages=ages,
            weights=weights,
        )

    def update_priorities(self, slots: np.ndarray, td_errors: np.ndarray) -> None:
        """Forward TD errors to a :class:`PrioritizedSampler`; a no-op for age samplers."""
        if isinstance(self.sampler, PrioritizedSampler):
            self.sampler.update_priorities(slots, td_errors)
