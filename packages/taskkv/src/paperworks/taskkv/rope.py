"""Content keys: cached keys with their rotary position embedding (RoPE) undone.

A ``transformers`` cache stores keys after RoPE, ``k_rot = k * cos + rotate_half(k) * sin`` at each
token's position, so two tokens of identical content at different positions have different cached
keys. TaskKV's intent prior compares step *content*, so it reads ``k = k_rot * cos - rotate_half(k_rot)
* sin`` (the inverse rotation, as kvpress's ``KeyRerotationPress`` rotates keys to new positions).
"""

from __future__ import annotations

import torch

from ._validation import check_tensor

__all__ = ["content_keys", "rope_cos_sin", "unrotate_keys"]


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def unrotate_keys(keys: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Undo RoPE: keys (batch, kv_heads, seq, d) rotated with ``cos``/``sin`` (batch or 1, seq, d).

    ``cos``/``sin`` are what the model's rotary embedding returns for the tokens' positions (the
    ``position_embeddings`` a ``transformers`` attention layer receives).
    """
    keys = check_tensor(keys, "keys", ndim=4, floating=True)
    cos = check_tensor(cos, "cos", ndim=3, floating=True)
    sin = check_tensor(sin, "sin", ndim=3, floating=True)
    b, _, seq, d = keys.shape
    for name, t in (("cos", cos), ("sin", sin)):
        if t.shape[0] not in (1, b) or t.shape[1:] != (seq, d):
            raise ValueError(f"{name}: expected shape ({b} or 1, {seq}, {d}), got {tuple(t.shape)}")
    return _unrotate(keys, cos, sin)


def _unrotate(keys: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    c, s = cos[:, None].to(keys.dtype), sin[:, None].to(keys.dtype)
    return keys * c - _rotate_half(keys) * s


def rope_cos_sin(model, seq_len: int, batch: int = 1, position_ids: torch.Tensor | None = None):
    """``(cos, sin)`` of ``model``'s rotary embedding at positions ``0 .. seq_len - 1`` (or ``position_ids``
    (batch, seq_len)), each (batch, seq_len, head_dim). ``model``: a ``transformers`` decoder whose
    base model has ``rotary_emb`` (Llama, Mistral, Qwen2/3, ...)."""
    base = getattr(model, "model", model)
    rotary = getattr(base, "rotary_emb", None)
    if rotary is None:
        raise TypeError(f"model: expected a RoPE decoder with model.rotary_emb, got {type(model).__name__}")
    dev = next(model.parameters()).device
    if position_ids is None:
        position_ids = torch.arange(seq_len, device=dev).expand(batch, seq_len)
    dtype = next(model.parameters()).dtype
    with torch.no_grad():
        return rotary(torch.zeros(1, dtype=dtype, device=dev), position_ids.to(dev))


def content_keys(
    model, keys: list[torch.Tensor], position_ids: torch.Tensor | None = None
) -> list[torch.Tensor]:
    """Per-layer cached keys (batch, kv_heads, seq, d) of ``model`` with RoPE undone (positions
    ``0 .. seq - 1`` unless ``position_ids`` (batch, seq) says otherwise)."""
    if not isinstance(keys, list | tuple) or not keys:
        raise TypeError("keys: expected a non-empty list of per-layer key tensors")
    b, _, seq, _ = check_tensor(keys[0], "keys[0]", ndim=4, floating=True).shape
    cos, sin = rope_cos_sin(model, seq, b, position_ids)
    return [unrotate_keys(k, cos, sin) for k in keys]
