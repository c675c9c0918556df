"""TorchRL drop-in: a ``torchrl.data.replay_buffers.Sampler`` that draws Truncated Geometric ages.

Requires the ``torchrl`` extra (``pip install paperworks-tg-replay[torchrl]``). Works with a
one-dimensional storage written round-robin (TorchRL's default ``RoundRobinWriter``): the sampler
follows the last written index through the ``add`` / ``extend`` hooks that ``ReplayBuffer`` calls
on every write, and maps age ``a`` to ``(last - a) mod max_size``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torchrl.data.replay_buffers.samplers import Sampler as _TorchRLSampler

from paperworks.core.io import atomic_write_text
from paperworks.core.validate import int_in_range

from .samplers import Sampler, resolve_sampler, sampler_from_state

__all__ = ["TGSampler"]

_STATE_FILE = "tg_sampler.json"


class TGSampler(_TorchRLSampler):
    """Age-based sampler for TorchRL replay buffers (default: Truncated Geometric).

    Args:
        p: TG parameter in ``(0, 1]`` (ignored if ``sampler`` is given).
        sampler: any age sampler of :mod:`paperworks.tg_replay.samplers`.
        seed: seed of the sampler's NumPy generator.

    ``state_dict`` / ``dumps`` / ``loads`` keep the newest-index anchor, the generator's state and
    the age sampler, so ``ReplayBuffer.dumps`` then ``loads`` (or ``state_dict`` then
    ``load_state_dict``) resumes the exact stream of draws.

    Example::

        rb = ReplayBuffer(storage=LazyTensorStorage(10_000), sampler=TGSampler(p=1e-3))
    """

    def __init__(
        self, p: float | None = None, *, sampler: Sampler | None = None, seed: int | None = None
    ) -> None:
        super().__init__()
        self.age_sampler = resolve_sampler(p, sampler)
        if seed is not None:
            int_in_range(seed, "seed", 0)
        # not `_rng`: TorchRL's ReplayBuffer sets `sampler._rng` to its own torch generator (or None)
        self._np_rng = np.random.default_rng(seed)
        self._last = -1

    def _note(self, index: Any) -> None:
        idx = torch.as_tensor(index).reshape(-1)
        if idx.numel():
            self._last = int(idx[-1])

    def add(self, index: int) -> None:
        self._note(index)

    def extend(self, index: torch.Tensor) -> None:
        self._note(index)

    def sample(self, storage: Any, batch_size: int) -> tuple[torch.Tensor, dict]:
        size = len(storage)
        if size == 0 or self._last < 0:
            raise ValueError("TGSampler: cannot sample from an empty buffer; extend it first")
        if getattr(storage, "ndim", 1) != 1:
            raise ValueError(f"storage: TGSampler needs a 1-d storage, got ndim={storage.ndim}")
        if self._last >= storage.max_size:
            raise ValueError(
                f"TGSampler: newest index {self._last} lies outside the storage "
                f"(max_size {storage.max_size}); "
                "was the sampler state loaded from another buffer?"
            )
        ages = self.age_sampler.sample(size, batch_size, rng=self._np_rng)
        index = (self._last - ages) % storage.max_size
        return torch.as_tensor(index, dtype=torch.long), {"ages": torch.as_tensor(ages)}

    def _empty(self) -> None:
        self._last = -1

    def state_dict(self) -> dict[str, Any]:
        """The newest written index, the NumPy generator's state and the age sampler."""
        return {
            "last": self._last,
            "rng": self._np_rng.bit_generator.state,
            "sampler": self.age_sampler.state_dict(),
        }

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        if not isinstance(state_dict, Mapping) or not {"last", "rng", "sampler"} <= set(state_dict):
            raise ValueError("state_dict: expected the mapping that TGSampler.state_dict returns")
        last = int_in_range(state_dict["last"], "state_dict['last']", -1)
        sampler = sampler_from_state(state_dict["sampler"])
        rng = np.random.default_rng()
        try:
            rng.bit_generator.state = state_dict["rng"]
        except (TypeError, ValueError, KeyError) as e:
            raise ValueError(f"state_dict: the generator state does not load ({e})") from None
        self._last, self._np_rng, self.age_sampler = last, rng, sampler

    def dumps(self, path: Any) -> None:
        """Write the state into the folder ``path`` (``ReplayBuffer.dumps`` passes ``<dir>/sampler``)."""
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(folder / _STATE_FILE, json.dumps(self.state_dict()))

    def loads(self, path: Any) -> None:
        """Read what :meth:`dumps` wrote into the folder ``path``."""
        file = Path(path) / _STATE_FILE
        if not file.is_file():
            raise FileNotFoundError(f"path: no {_STATE_FILE} in {Path(path)} (written by TGSampler.dumps)")
        self.load_state_dict(json.loads(file.read_text()))
