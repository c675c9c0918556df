"""TaskKV as a kvpress press (``pip install paperworks-taskkv[kvpress]``): ``with press(model): model(ids)``.

kvpress calls :meth:`TaskKVPress.compress` once per attention layer during the prefill; the press
computes that layer's step features (window attention of the last ``window`` queries, keys), scores
steps with the TaskKV scorer, applies the regime classifier and keeps exactly
``floor((1 - compression_ratio) * seq)`` tokens by whole steps, the same for every head. Unlike the
:class:`~.policy.TaskKV` function route, which averages scores over layers, a press decides layer by
layer (later layers are not computed yet when a layer is compressed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from kvpress.presses.base_press import BasePress
from kvpress.presses.snapkv_press import SnapKVPress

from .policy import TaskKV, TaskKVConfig
from .retention import check_offsets

__all__ = ["TaskKVPress"]


@dataclass
class TaskKVPress(BasePress):
    """kvpress press running TaskKV. ``step_offsets`` are the step boundaries of the prefilled context
    (set them before each call, they must cover the context); ``policy`` holds the fitted scorer and
    regime classifier (default: priors only). ``last_fallback`` records each layer's regime flags."""

    compression_ratio: float = 0.0
    step_offsets: tuple[int, ...] | None = None
    policy: TaskKV = field(default_factory=TaskKV)
    window_size: int = 4
    last_fallback: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if not 0.0 <= self.compression_ratio < 1.0:
            raise ValueError(f"compression_ratio: expected a value in [0, 1), got {self.compression_ratio}")
        if self.window_size < 1:
            raise ValueError(f"window_size: expected a positive int, got {self.window_size}")

    def _window_attention(self, module, hidden_states, keys, attentions, kwargs) -> torch.Tensor:
        if attentions is not None:
            return attentions[..., -self.window_size :, :]
        w = SnapKVPress.compute_window_attention(
            module, hidden_states, keys, self.window_size, kwargs["position_embeddings"]
        )
        return torch.nn.functional.pad(w, (0, self.window_size))

    def compress(self, module, hidden_states, keys, values, attentions, kwargs):
        if self.compression_ratio == 0:
            return keys, values
        if self.step_offsets is None:
            raise ValueError(
                "step_offsets: set the step boundaries of the context on the press before prefilling"
            )
        offsets = check_offsets(self.step_offsets, keys.shape[2])
        if module.layer_idx == 0:
            self.last_fallback = []
        budget = 1.0 - self.compression_ratio
        policy = TaskKV(
            TaskKVConfig(**{**self.policy.config.__dict__, "budget": budget, "window": self.window_size}),
            self.policy.scorer,
            self.policy.classifier,
        )
        attn = self._window_attention(module, hidden_states, keys, attentions, kwargs)
        new_k, new_v, _, fallback = policy.compress([keys], [values], [attn], offsets)
        self.last_fallback.append(fallback)
        return new_k[0].contiguous(), new_v[0].contiguous()
