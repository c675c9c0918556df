"""A plain NumPy ring buffer of transitions that samples through any replay sampler.

Transitions ``(obs, action, reward, next_obs, done)`` are written in batches (one row per
vectorised environment); when full, the oldest are overwritten. Age ``a`` (0 = newest) maps to
storage slot ``(cursor - 1 - a) mod capacity``, so every age sampler of
:mod:`paperworks.tg_replay.samplers` works unchanged; :class:`~paperworks.tg_replay.per.PrioritizedSampler`
samples slots directly and returns importance weights. Discrete actions are stored as integers
(``action_shape=()``), continuous ones as floats (``action_shape=(act_dim,)``,
``action_dtype=np.float32``). :meth:`RingBuffer.state_dict` / :meth:`RingBuffer.dumps` keep the
data, the cursor, the generator's state and the sampler, so a reloaded buffer draws what the
original would have drawn.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from paperworks.core.io import atomic_write_bytes
from paperworks.core.validate import finite_array, positive_int

from .per import PrioritizedSampler
from .samplers import Sampler, UniformSampler, sampler_from_state

__all__ = ["RingBuffer", "TransitionBatch"]

_FIELDS = ("obs", "action", "reward", "next_obs", "done")


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


def _shape(shape: object, name: str) -> tuple[int, ...]:
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, Sequence) or isinstance(shape, str):
        raise TypeError(f"{name}: expected a tuple of positive ints, got {shape!r}")
    return tuple(positive_int(d, f"{name}[{i}]") for i, d in enumerate(shape))


class RingBuffer:
    """Fixed-capacity FIFO replay buffer.

    Args:
        capacity: number of transitions kept.
        obs_shape: shape of one observation, e.g. ``(4,)``.
        action_shape: shape of one action, ``()`` for discrete actions, ``(act_dim,)`` for continuous.
        sampler: an age sampler (default uniform) or a :class:`PrioritizedSampler` of the same capacity.
        obs_dtype, action_dtype: storage dtypes (floats for observations; ints or floats for actions).
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
        self.capacity = positive_int(capacity, "capacity")
        self.sampler = UniformSampler() if sampler is None else sampler
        if not isinstance(self.sampler, Sampler | PrioritizedSampler):
            raise TypeError(
                f"sampler: expected a Sampler or PrioritizedSampler, got {type(sampler).__name__}"
            )
        if isinstance(self.sampler, PrioritizedSampler) and self.sampler.capacity != self.capacity:
            raise ValueError(
                f"sampler: PrioritizedSampler capacity {self.sampler.capacity} != "
                f"buffer capacity {self.capacity}"
            )
        self.obs_shape = _shape(obs_shape, "obs_shape")
        self.action_shape = () if action_shape == () else _shape(action_shape, "action_shape")
        try:
            obs_dt, act_dt = np.dtype(obs_dtype), np.dtype(action_dtype)
        except TypeError as e:
            raise TypeError(f"obs_dtype, action_dtype: expected NumPy dtypes ({e})") from None
        if obs_dt.kind != "f":
            raise TypeError(f"obs_dtype: expected a float dtype, got {obs_dt}")
        if act_dt.kind not in "iuf":
            raise TypeError(f"action_dtype: expected an int or float dtype, got {act_dt}")
        if seed is not None and (
            isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0
        ):
            raise ValueError(f"seed: expected a non-negative int or None, got {seed!r}")
        self.obs = np.zeros((self.capacity, *self.obs_shape), dtype=obs_dt)
        self.next_obs = np.zeros((self.capacity, *self.obs_shape), dtype=obs_dt)
        self.action = np.zeros((self.capacity, *self.action_shape), dtype=act_dt)
        self.reward = np.zeros(self.capacity, dtype=np.float32)
        self.done = np.zeros(self.capacity, dtype=np.float32)
        self.cursor = 0  # next slot to write
        self.size = 0
        self.rng = np.random.default_rng(seed)

    def __len__(self) -> int:
        return self.size

    def _check(
        self, name: str, arr: Any, tail: tuple[int, ...], n: int | None, kind: str | None
    ) -> np.ndarray:
        shape = (None, *tail) if n is None else (n, *tail)
        try:
            return finite_array(arr, name, shape=shape, dtype_kind=kind)
        except ValueError as e:
            if n is not None and np.ndim(arr) == len(shape) and np.shape(arr)[1:] == tail:
                raise ValueError(f"{name}: expected {n} rows like obs, got {np.shape(arr)[0]}") from None
            raise e

    def add(self, obs: Any, action: Any, reward: Any, next_obs: Any, done: Any) -> np.ndarray:
        """Append ``n`` transitions (leading dimension ``n`` on every argument); return their slots.

        ``obs``, ``next_obs``: finite, shape ``(n, *obs_shape)``; ``action``: ``(n, *action_shape)``,
        integers when the action storage is integer (a float action is an error, not truncated),
        finite numbers otherwise; ``reward``: finite, ``(n,)``; ``done``: 0/1 or bool, ``(n,)``
        (termination, not time-limit truncation). Everything is checked before anything is written.
        """
        o = self._check("obs", obs, self.obs_shape, None, "f")
        n = o.shape[0]
        int_actions = self.action.dtype.kind in "iu"
        a = self._check("action", action, self.action_shape, n, "i" if int_actions else "f")
        if int_actions:
            info = np.iinfo(self.action.dtype)
            if a.min() < info.min or a.max() > info.max:
                raise ValueError(f"action: values outside the range of the {self.action.dtype} storage")
        r = self._check("reward", reward, (), n, "f")
        no = self._check("next_obs", next_obs, self.obs_shape, n, "f")
        d = self._check("done", done, (), n, None)
        if not np.isin(d, (0, 1)).all():
            raise ValueError("done: expected 0/1 (or bool) termination flags")
        if n > self.capacity:  # only the newest `capacity` survive
            o, a, r, no, d = (x[-self.capacity :] for x in (o, a, r, no, d))
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

    def _ages_or_slots(self, x: object, name: str) -> np.ndarray:
        a = finite_array(x, name, dtype_kind="i", allow_empty=True).astype(np.int64, copy=False)
        if a.size and (a.min() < 0 or a.max() >= max(self.size, 1)):
            raise ValueError(f"{name}: expected values in [0, {self.size}), got [{a.min()}, {a.max()}]")
        return a

    def ages_to_slots(self, ages: object) -> np.ndarray:
        """Storage slots of ages (0 = newest, ints in ``[0, len(self))``), shape preserved."""
        return (self.cursor - 1 - self._ages_or_slots(ages, "ages")) % self.capacity

    def slots_to_ages(self, slots: object) -> np.ndarray:
        """Ages (0 = newest) of storage slots (ints in ``[0, len(self))``), shape preserved."""
        return (self.cursor - 1 - self._ages_or_slots(slots, "slots")) % self.capacity

    def sample_slots(
        self, batch_size: int, *, replace: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Draw ``(slots, ages, weights)``, each shape ``(batch_size,)``, without gathering data."""
        if self.size == 0:
            raise ValueError("RingBuffer.sample: cannot sample from an empty buffer; add transitions first")
        if isinstance(self.sampler, PrioritizedSampler):
            if replace is not True:
                raise ValueError("replace: PrioritizedSampler samples with replacement only")
            slots, weights = self.sampler.sample(batch_size, rng=self.rng)
            return slots, (self.cursor - 1 - slots) % self.capacity, weights
        ages = self.sampler.sample(self.size, batch_size, rng=self.rng, replace=replace)
        return (self.cursor - 1 - ages) % self.capacity, ages, np.ones(ages.shape[0], dtype=np.float32)

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

    def update_priorities(self, slots: object, td_errors: object) -> None:
        """Forward TD errors to a :class:`PrioritizedSampler`; a no-op for age samplers."""
        if isinstance(self.sampler, PrioritizedSampler):
            self.sampler.update_priorities(slots, td_errors)

    # -- saving and loading
    def state_dict(self) -> dict[str, Any]:
        """Everything that determines what the buffer holds and draws next: the stored transitions,
        the cursor and size, the generator's state and the sampler's (PER priorities included)."""
        meta = {
            "capacity": self.capacity,
            "obs_shape": list(self.obs_shape),
            "action_shape": list(self.action_shape),
            "cursor": self.cursor,
            "size": self.size,
            "rng": self.rng.bit_generator.state,
            "sampler_kind": "per" if isinstance(self.sampler, PrioritizedSampler) else "age",
        }
        state: dict[str, Any] = {"meta": meta, "sampler": self.sampler.state_dict()}
        for f in _FIELDS:
            state[f] = getattr(self, f).copy()
        return state

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict` into this buffer (same capacity and shapes); the sampler is
        replaced by the saved one (an age sampler) or its priorities restored (PER)."""
        if not isinstance(state_dict, Mapping) or "meta" not in state_dict:
            raise ValueError("state_dict: expected the mapping that RingBuffer.state_dict returns")
        meta = state_dict["meta"]
        for key, mine in (
            ("capacity", self.capacity),
            ("obs_shape", list(self.obs_shape)),
            ("action_shape", list(self.action_shape)),
        ):
            got = list(meta[key]) if isinstance(mine, list) else meta[key]
            if got != mine:
                raise ValueError(f"state_dict: {key} {meta[key]} != this buffer's {mine}")
        size, cursor = int(meta["size"]), int(meta["cursor"])
        if not (0 <= size <= self.capacity and 0 <= cursor < self.capacity):
            raise ValueError(
                f"state_dict: size {size} / cursor {cursor} outside the capacity {self.capacity}"
            )
        arrays = {}
        for f in _FIELDS:
            arr = np.asarray(state_dict[f])
            if arr.shape != getattr(self, f).shape:
                raise ValueError(
                    f"state_dict[{f!r}]: expected shape {getattr(self, f).shape}, got {arr.shape}"
                )
            arrays[f] = arr
        rng = np.random.default_rng()
        try:
            rng.bit_generator.state = meta["rng"]
        except (TypeError, ValueError, KeyError) as e:
            raise ValueError(f"state_dict: the generator state does not load ({e})") from None
        if meta["sampler_kind"] == "per":
            if not isinstance(self.sampler, PrioritizedSampler):
                raise ValueError("state_dict: saved with a PrioritizedSampler; build the buffer with one")
            self.sampler.load_state_dict(state_dict["sampler"])
        else:
            if isinstance(self.sampler, PrioritizedSampler):
                raise ValueError(
                    "state_dict: saved with an age sampler, but this buffer holds a PrioritizedSampler"
                )
            self.sampler = sampler_from_state(state_dict["sampler"])
        for f, arr in arrays.items():
            getattr(self, f)[...] = arr
        self.size, self.cursor, self.rng = size, cursor, rng

    def dumps(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`state_dict` to ``path`` (a ``.npz`` file, written atomically); return the path."""
        import io

        state = self.state_dict()
        extra = (
            {"priorities": state["sampler"].pop("priorities")}
            if state["meta"]["sampler_kind"] == "per"
            else {}
        )
        header = json.dumps({"meta": state["meta"], "sampler": state["sampler"]})
        buf = io.BytesIO()
        np.savez(buf, header=np.array(header), **{f: state[f] for f in _FIELDS}, **extra)
        return atomic_write_bytes(Path(path), buf.getvalue())

    def loads(self, path: str | os.PathLike[str]) -> None:
        """Load what :meth:`dumps` wrote into this buffer."""
        with np.load(Path(path), allow_pickle=False) as z:
            header = json.loads(str(z["header"]))
            state: dict[str, Any] = {"meta": header["meta"], "sampler": header["sampler"]}
            for f in _FIELDS:
                state[f] = z[f]
            if header["meta"]["sampler_kind"] == "per":
                state["sampler"]["priorities"] = z["priorities"]
        self.load_state_dict(state)
