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

from .samplers import Sampler, resolve_sampler, sampler_from_state

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

    def state_dict(self) -> dict[str, Any]:
        """The age sampler and its generator's state (the data and ``pos`` are SB3's own attributes,
        which ``save_replay_buffer`` pickles with this object, generator included)."""
        return {"rng": self._age_rng.bit_generator.state, "sampler": self.age_sampler.state_dict()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not isinstance(state_dict, dict) or set(state_dict) != {"rng", "sampler"}:
            raise ValueError("state_dict: expected the mapping that TGReplayBuffer.state_dict returns")
        sampler = sampler_from_state(state_dict["sampler"])
        rng = np.random.default_rng()
        try:
            rng.bit_generator.state = state_dict["rng"]
        except (TypeError, ValueError, KeyError) as e:
            raise ValueError(f"state_dict: the generator state does not load ({e})") from None
        self.age_sampler, self._age_rng = sampler, rng
