"""TaskKV as a kvpress press (``pip install paperworks-taskkv[kvpress]``): ``with press(model): model(ids)``.

:class:`TaskKVPress` is a kvpress ``ScorerPress``: kvpress calls :meth:`TaskKVPress.score` once per
attention layer during the prefill, and the press returns per-token scores whose top-k keeps whole
steps in TaskKV's order (:func:`~.retention.token_priority`), the same for every head. So kvpress's
wrappers that take a ``ScorerPress`` compose with it (``AdaKVPress``, ``KeyRerotationPress``, ...),
and plain ``ScorerPress.compress`` keeps exactly ``int((1 - compression_ratio) * seq)`` tokens.

Per layer the press computes that layer's step features from the layer's content keys (the cached
keys with RoPE undone, :func:`~.rope.unrotate_keys`) and the causal attention of the last
``window_size`` queries on the whole context, the window included (:func:`window_attention`): read
from the attention weights under eager attention, recomputed from the queries otherwise (sdpa,
flash), so both give the same tokens. Unlike the :class:`~.policy.TaskKV` function route, which
averages scores over layers, a press decides layer by layer (later layers are not computed yet
when a layer is compressed); with one layer, or layer by layer, the two routes keep the same tokens.

``step_offsets``: the step boundaries of the prefilled context, shared by the batch (1-D) or one per
row (a 2-D array or a list, rows may have different numbers of steps); set them before each prefill
(:func:`~.chat.step_offsets_from_chat` computes them from a chat template).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from kvpress.presses.scorer_press import ScorerPress

from ._validation import check_tensor, validate
from .attention import window_attention
from .policy import TaskKV
from .rope import _unrotate

__all__ = ["TaskKVPress"]


@dataclass
class TaskKVPress(ScorerPress):
    """kvpress ``ScorerPress`` running TaskKV. ``step_offsets``: the step boundaries of the prefilled
    context (shared or per row; set before each prefill, they must cover the context); ``policy``
    holds the fitted scorer and regime classifier (default: priors only; its ``budget`` is not used:
    ``compression_ratio`` sets the size). ``last_fallback`` records each layer's regime flags (batch,)."""

    compression_ratio: float = 0.0
    step_offsets: object = None
    policy: TaskKV = field(default_factory=TaskKV)
    window_size: int = 4
    last_fallback: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.compression_ratio = validate.fraction(
            self.compression_ratio, "compression_ratio", open_high=True
        )
        self.window_size = validate.positive_int(self.window_size, "window_size")
        if not isinstance(self.policy, TaskKV):
            raise TypeError(f"policy: expected a TaskKV, got {type(self.policy).__name__}")

    def _window_attention(self, module, hidden_states, keys, attentions, kwargs) -> torch.Tensor:
        if attentions is not None:  # eager: the layer's own (causal) weights
            return attentions[..., -self.window_size :, :].float()
        return window_attention(module, hidden_states, keys, self.window_size, kwargs["position_embeddings"])

    def score(self, module, hidden_states, keys, values, attentions, kwargs) -> torch.Tensor:
        """Per-token scores (batch, kv_heads, seq): any top-n keeps whole steps in TaskKV's order."""
        if self.step_offsets is None:
            raise ValueError(
                "step_offsets: set the step boundaries of the context on the press before prefilling"
            )
        keys = check_tensor(keys, "keys", ndim=4, floating=True, finite=False)  # finiteness: in features
        if keys.shape[2] <= self.window_size:
            raise ValueError(
                f"window_size: expected fewer than the {keys.shape[2]} context tokens, got {self.window_size}"
            )
        if module.layer_idx == 0:
            self.last_fallback = []
        cos, sin = kwargs["position_embeddings"]
        content = _unrotate(keys, cos, sin)
        attn = self._window_attention(module, hidden_states, keys, attentions, kwargs)
        scores, fallback = self.policy.token_scores([content], [attn], self.step_offsets)
        self.last_fallback.append(fallback)
        return scores[:, None, :].expand(-1, keys.shape[1], -1).contiguous()  # float64: exact ranks
