"""TorchRL drop-in: a ``torchrl.data.replay_buffers.Sampler`` that draws Truncated Geometric ages.

Requires the ``torchrl`` extra (``pip install paperworks-tg-replay[torchrl]``). Works with a
one-dimensional storage written round-robin (TorchRL's default ``RoundRobinWriter``): the sampler
follows the last written index through the ``add`` / ``extend`` hooks that ``ReplayBuffer`` calls
on every write, and maps age ``a`` to ``(last - a) mod max_size``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torchrl.data.replay_buffers.samplers import Sampler as _TorchRLSampler

from .samplers import Sampler, resolve_sampler

__all__ = ["TGSampler"]


class TGSampler(_TorchRLSampler):
    """Age-based sampler for TorchRL replay buffers (default: Truncated Geometric).

    Args:
        p: TG parameter in ``(0, 1]`` (ignored if ``sampler`` is given).
        sampler: any age sampler of :mod:`paperworks.tg_replay.samplers`.
        seed: seed of the sampler's NumPy generator.

    Example::

        rb = ReplayBuffer(storage=LazyTensorStorage(10_000), sampler=TGSampler(p=1e-3))
    """

    def __init__(
        self, p: float | None = None, *, sampler: Sampler | None = None, seed: int | None = None
    ) -> None:
        super().__init__()
        self.age_sampler = resolve_sampler(p, sampler)
        self._rng = np.random.default_rng(seed)
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
        ages = self.age_sampler.sample(size, batch_size, rng=self._rng)
        index = (self._last - ages) % storage.max_size
        return torch.as_tensor(index, dtype=torch.long), {"ages": torch.as_tensor(ages)}

    def _empty(self) -> None:
        self._last = -1

    def dumps(self, path: Any) -> None:
        return None

    def loads(self, path: Any) -> None:
        return None

    def state_dict(self) -> dict[str, Any]:
        return {"last": self._last}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._last = int(state_dict["last"])
