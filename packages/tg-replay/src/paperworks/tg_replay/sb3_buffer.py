"""Stable-Baselines3 drop-in: a ``ReplayBuffer`` that samples Truncated Geometric ages.

Requires the ``sb3`` extra (``pip install paperworks-tg-replay[sb3]``). Pass it to any off-policy
SB3 algorithm: ``DQN(..., replay_buffer_class=TGReplayBuffer, replay_buffer_kwargs={"p": 1e-3})``.
SB3 stores ``n_envs`` transitions per position; the age is drawn over positions (0 = the newest
position, ``self.pos - 1``) and SB3 picks the environment column uniformly, as it does for
uniform replay.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.buffers import ReplayBuffer

from .samplers import Sampler, resolve_sampler

__all__ = ["TGReplayBuffer"]


class TGReplayBuffer(ReplayBuffer):
    """SB3 ``ReplayBuffer`` whose ``sample`` draws positions by age through an age sampler.

    Extra keyword arguments: ``p`` (TG parameter in ``(0, 1]``) or ``sampler`` (any age sampler),
    and ``seed``. ``optimize_memory_usage=True`` is not supported (it invalidates the newest slot).
    """

    def __init__(
        self,
        *args: Any,
        p: float | None = None,
        sampler: Sampler | None = None,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        if kwargs.get("optimize_memory_usage", False):
            raise ValueError(
                "optimize_memory_usage: TGReplayBuffer supports only optimize_memory_usage=False"
            )
        super().__init__(*args, **kwargs)
        self.age_sampler = resolve_sampler(p, sampler)
        self._age_rng = np.random.default_rng(seed)

    def sample(self, batch_size: int, env: Any = None) -> Any:
        size = self.buffer_size if self.full else self.pos
        if size == 0:
            raise ValueError("TGReplayBuffer: cannot sample from an empty buffer; add transitions first")
        ages = self.age_sampler.sample(size, batch_size, rng=self._age_rng)
        batch_inds = (self.pos - 1 - ages) % self.buffer_size
        return self._get_samples(batch_inds, env=env)
