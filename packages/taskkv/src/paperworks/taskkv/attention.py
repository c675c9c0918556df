"""The causal attention of an observation window (the last queries of a context) on a layer's cache."""

from __future__ import annotations

import math

import torch

from ._validation import validate
from .rope import _rotate_half

__all__ = ["window_attention"]


def window_attention(
    module, hidden_states: torch.Tensor, keys: torch.Tensor, window: int, position_embeddings
):
    """Causal attention of the last ``window`` queries on all ``seq`` keys, (batch, heads, window, seq).

    module: a Llama-like ``transformers`` attention layer (``q_proj``, ``head_dim``, ``config``);
    hidden_states: the layer's input (batch, seq, hidden); keys: its cached keys after RoPE
    (batch, kv_heads, seq, d); position_embeddings: the ``(cos, sin)`` the layer received. Query ``i``
    of the window sees the keys up to its own position (softmax in float32, as eager attention).
    """
    b, kvh, seq, d = keys.shape
    w = validate.int_in_range(window, "window", 1, seq)
    h = hidden_states[:, -w:]
    q = module.q_proj(h).view(b, w, -1, module.head_dim).transpose(1, 2)
    if hasattr(module, "q_norm"):  # Qwen3 / Gemma3 normalise queries before RoPE
        q = module.q_norm(q)
    cos, sin = position_embeddings
    cos, sin = cos[:, -w:].unsqueeze(1), sin[:, -w:].unsqueeze(1)
    q = q * cos + _rotate_half(q) * sin
    groups = q.shape[1] // kvh
    k = keys.repeat_interleave(groups, dim=1) if groups > 1 else keys  # grouped-query attention
    scale = getattr(module, "scaling", None) or 1.0 / math.sqrt(d)
    logits = torch.matmul(q, k.transpose(2, 3)).float() * scale  # (b, h, w, seq)
    future = (
        torch.arange(seq, device=keys.device)[None, :]
        > (seq - w + torch.arange(w, device=keys.device))[:, None]
    )
    logits = logits.masked_fill(future, -torch.inf)
    return torch.softmax(logits, dim=-1)
