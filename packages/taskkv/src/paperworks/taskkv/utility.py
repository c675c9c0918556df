"""Signed directional utility labels (contribution 1) on a ``transformers`` causal LM.

The paper's label is "the first-order change in the log-likelihood of the correct next action when
the step is removed (gradient times the step's contribution)". Both readings below put a
multiplicative gate ``m_s`` on step ``s`` as the decision tokens (the action prompt) see it, in every
layer and head, and take ``u_s = d log p(a* | context, m) / d m_s`` at ``m = 1`` (the full cache), the
first-order estimate of ``log p(m_s = 1) - log p(m_s = 0)``:

* ``gate="removal"`` (default, used in the experiment): the gate scales the step's *unnormalised*
  attention ``m_s exp(l_t)`` (implemented as an attention-logit bias ``log m_s``; ``d/dm`` at
  ``m = 1`` equals ``d/db`` at ``b = 0``). Its end point ``m_s = 0`` is exactly the removal the policy
  performs (the step's tokens leave the softmax, the rest renormalise), so the label is the
  first-order change *when the step is removed*. Per layer and head it equals
  ``<d log p / d o, c_s - A_s o>``: gradient times the step's contribution ``c_s = sum_{t in s} a_t
  W_o v_t`` net of the renormalisation (``A_s`` the step's attention share, ``o`` the output).
* ``gate="contribution"``: the gate scales the step's value vectors (equivalently its post-softmax
  attention weights), so ``u_s = <d log p / d o, c_s>``, gradient times contribution taken literally.
  Its end point ``m_s = 0`` is *not* a removal: the step keeps its softmax share and dilutes the
  other steps' contributions. Kept as a comparator.

Helpful steps get ``u_s > 0``, confusing distractors ``u_s < 0`` (unsigned saliency would rank both
high).

:func:`leave_one_step_out` computes the exact difference (the step's tokens pruned from the cache,
as KV eviction does), one removal at a time, for checking either first-order label.

The context is prefilled once with the full cache (the context tokens themselves saw every step, as
in KV eviction after prefill); only the decision tokens see the gated cache.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = [
    "answer_logprob",
    "GATES",
    "cache_layers",
    "leave_one_step_out",
    "prefill",
    "query_logits",
    "step_utility_labels",
]


def prefill(model, context: torch.Tensor):
    """Run the context through ``model`` once; returns its ``DynamicCache`` (keys/values per layer)."""
    with torch.no_grad():
        return model(input_ids=context, use_cache=True).past_key_values


def _cache_from(layers: list[tuple[torch.Tensor, torch.Tensor]]):
    from transformers import DynamicCache

    cache = DynamicCache()
    for i, (k, v) in enumerate(layers):
        cache.update(k, v, i)
    return cache


def cache_layers(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The (keys, values) of every layer of a ``transformers`` cache, each (batch, heads, seq, d)."""
    return [(layer.keys, layer.values) for layer in cache.layers]


def query_logits(
    model,
    layers: list[tuple[torch.Tensor, torch.Tensor]],
    query: torch.Tensor,
    context_len: int,
    key_bias: torch.Tensor | None = None,
    value_gate: torch.Tensor | None = None,
) -> torch.Tensor:
    """Logits of the query tokens (batch, q, vocab) attending to a (possibly pruned) cache.

    ``layers``: per-layer (keys, values) of ``n_cached`` tokens; ``query`` (batch, q) token ids placed at
    positions ``context_len .. context_len + q - 1`` (RoPE positions continue after the full context,
    whatever was pruned); ``key_bias`` (batch, n_cached) is added to the attention logits of the query
    tokens on the cached keys (0: unchanged, a large negative number: removed); ``value_gate``
    (batch, n_cached) multiplies the cached value vectors (1: unchanged, 0: contribution removed).
    The cache is copied.
    """
    b, q = query.shape
    n_cached = layers[0][0].shape[2]
    dtype = layers[0][0].dtype
    neg = torch.finfo(dtype).min
    causal = torch.triu(torch.full((q, q), neg, dtype=dtype), diagonal=1)
    cached = (
        torch.zeros(b, q, n_cached, dtype=dtype)
        if key_bias is None
        else key_bias.to(dtype)[:, None, :].expand(b, q, n_cached)
    )
    mask = torch.cat([cached, causal.expand(b, q, q)], dim=2)[:, None]
    pos = torch.arange(context_len, context_len + q).expand(b, q)
    if value_gate is None:
        cache = _cache_from([(k.clone(), v.clone()) for k, v in layers])
    else:
        g = value_gate.to(dtype)[:, None, :, None]
        cache = _cache_from([(k.clone(), v * g) for k, v in layers])
    out = model(input_ids=query, past_key_values=cache, attention_mask=mask, position_ids=pos, use_cache=True)
    return out.logits


def answer_logprob(logits: torch.Tensor, answer: torch.Tensor) -> torch.Tensor:
    """log p(answer) at the last query position, shape (batch,)."""
    return torch.log_softmax(logits[:, -1].float(), dim=-1).gather(1, answer[:, None]).squeeze(1)


def _token_steps(offsets) -> torch.Tensor:
    off = np.asarray(offsets, dtype=np.int64)
    return torch.as_tensor(np.repeat(np.arange(len(off) - 1), np.diff(off)))


GATES = ("removal", "contribution")


def step_utility_labels(
    model,
    context: torch.Tensor,
    query: torch.Tensor,
    answer: torch.Tensor,
    offsets,
    gate: str = "removal",
) -> torch.Tensor:
    """First-order signed utility ``u_s`` of every step, shape (batch, n_steps) (module docstring).

    One prefill and one backward pass per batch; the gradient is taken with respect to the per-step
    gate ``m_s`` at ``m = 1``: on the step's unnormalised attention (``gate="removal"``; ``m_s = 0`` is
    exact removal) or on its value vectors (``gate="contribution"``, gradient times contribution).
    """
    from .retention import check_offsets

    if gate not in GATES:
        raise ValueError(f"gate: expected one of {GATES}, got {gate!r}")
    off = check_offsets(offsets, context.shape[1])
    layers = cache_layers(prefill(model, context))
    m = torch.ones(context.shape[0], len(off) - 1, requires_grad=True)
    token_step = _token_steps(off)
    with torch.enable_grad():
        if gate == "contribution":
            logits = query_logits(model, layers, query, context.shape[1], value_gate=m[:, token_step])
        else:  # d/dm at m=1 of a bias log(m) equals d/db at b=0
            bias = torch.log(m)[:, token_step]
            logits = query_logits(model, layers, query, context.shape[1], key_bias=bias)
        lp = answer_logprob(logits, answer).sum()
        (grad,) = torch.autograd.grad(lp, m)
    return grad.detach()


@torch.no_grad()
def leave_one_step_out(
    model, context: torch.Tensor, query: torch.Tensor, answer: torch.Tensor, offsets
) -> torch.Tensor:
    """Exact ``log p(full) - log p(without step s)`` for every step, shape (batch, n_steps).

    Removal is done by pruning the step's tokens from the cache (an independent route from the gate).
    """
    from .retention import check_offsets

    off = check_offsets(offsets, context.shape[1])
    layers = cache_layers(prefill(model, context))
    full = answer_logprob(query_logits(model, layers, query, context.shape[1]), answer)
    out = torch.zeros(context.shape[0], len(off) - 1)
    for s in range(len(off) - 1):  # one removal per step: a reference route, not a hot path
        keep = torch.as_tensor(np.r_[0 : off[s], off[s + 1] : off[-1]])
        pruned = [(k[:, :, keep], v[:, :, keep]) for k, v in layers]
        out[:, s] = full - answer_logprob(query_logits(model, pruned, query, context.shape[1]), answer)
    return out
