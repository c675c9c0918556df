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

from ._validation import check_answer, check_tensor, validate
from .retention import step_layout

__all__ = [
    "GATES",
    "answer_logprob",
    "cache_layers",
    "leave_one_step_out",
    "prefill",
    "query_logits",
    "step_utility_labels",
]


def _check_ids(x, name: str, batch: int | None = None) -> torch.Tensor:
    x = check_tensor(x, name, ndim=2, floating=False)
    if batch is not None and x.shape[0] != batch:
        raise ValueError(f"{name}: expected {batch} rows like context, got shape {tuple(x.shape)}")
    if bool((x < 0).any()):
        raise ValueError(f"{name}: expected non-negative token ids")
    return x


def _vocab(model) -> int | None:
    return getattr(getattr(model, "config", None), "vocab_size", None)


def prefill(model, context: torch.Tensor):
    """Run the context (batch, seq) token ids through ``model`` once; returns its ``DynamicCache``."""
    context = _check_ids(context, "context")
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
    layers = getattr(cache, "layers", None)
    if layers is None:
        raise TypeError(f"cache: expected a transformers Cache with .layers, got {type(cache).__name__}")
    return [(layer.keys, layer.values) for layer in layers]


def _check_cache_layers(layers) -> list[tuple[torch.Tensor, torch.Tensor]]:
    if not isinstance(layers, list | tuple) or not layers:
        raise TypeError("layers: expected a non-empty list of per-layer (keys, values) pairs")
    for i, kv in enumerate(layers):
        if not isinstance(kv, tuple | list) or len(kv) != 2:
            raise TypeError(f"layers[{i}]: expected a (keys, values) pair")
        k = check_tensor(kv[0], f"layers[{i}] keys", ndim=4, floating=True)
        v = check_tensor(kv[1], f"layers[{i}] values", ndim=4, floating=True)
        if k.shape[:3] != v.shape[:3] or k.shape[:3] != layers[0][0].shape[:3]:
            raise ValueError(
                f"layers[{i}]: expected keys and values of batch/heads/seq {tuple(layers[0][0].shape[:3])}"
            )
    return list(layers)


def query_logits(
    model,
    layers: list[tuple[torch.Tensor, torch.Tensor]],
    query: torch.Tensor,
    context_len: int,
    key_bias: torch.Tensor | None = None,
    value_gate: torch.Tensor | None = None,
    output_attentions: bool = False,
):
    """Logits of the query tokens (batch, q, vocab) attending to a (possibly pruned) cache.

    ``layers``: per-layer (keys, values) of ``n_cached`` tokens; ``query`` (batch, q) token ids placed at
    positions ``context_len .. context_len + q - 1`` (RoPE positions continue after the full context,
    whatever was pruned); ``key_bias`` (batch, n_cached) is added to the attention logits of the query
    tokens on the cached keys (0: unchanged, a large negative number: removed); ``value_gate``
    (batch, n_cached) multiplies the cached value vectors (1: unchanged, 0: contribution removed).
    The cache is copied. With ``output_attentions`` returns the model output (logits, attentions,
    the extended cache) instead of the logits.
    """
    layers = _check_cache_layers(layers)
    b, _, n_cached, _ = layers[0][0].shape
    query = _check_ids(query, "query", b)
    context_len = validate.int_in_range(context_len, "context_len", n_cached)
    q = query.shape[1]
    dtype, dev = layers[0][0].dtype, layers[0][0].device
    for name, t in (("key_bias", key_bias), ("value_gate", value_gate)):
        if t is not None:
            check_tensor(t, name, ndim=2, floating=True, finite=name == "value_gate")
            if tuple(t.shape) != (b, n_cached):
                raise ValueError(f"{name}: expected shape ({b}, {n_cached}), got {tuple(t.shape)}")
    neg = torch.finfo(dtype).min
    causal = torch.triu(torch.full((q, q), neg, dtype=dtype, device=dev), diagonal=1)
    cached = (
        torch.zeros(b, q, n_cached, dtype=dtype, device=dev)
        if key_bias is None
        else key_bias.to(dtype).clamp_min(neg)[:, None, :].expand(b, q, n_cached)
    )
    mask = torch.cat([cached, causal.expand(b, q, q)], dim=2)[:, None]
    pos = torch.arange(context_len, context_len + q, device=dev).expand(b, q)
    if value_gate is None:
        cache = _cache_from([(k.clone(), v.clone()) for k, v in layers])
    else:
        g = value_gate.to(dtype)[:, None, :, None]
        cache = _cache_from([(k.clone(), v * g) for k, v in layers])
    out = model(
        input_ids=query.to(dev),
        past_key_values=cache,
        attention_mask=mask,
        position_ids=pos,
        use_cache=True,
        output_attentions=output_attentions,
    )
    return out if output_attentions else out.logits


def answer_logprob(logits: torch.Tensor, answer: torch.Tensor) -> torch.Tensor:
    """log p(answer) at the last query position, shape (batch,). logits (batch, q, vocab); answer (batch,)."""
    logits = check_tensor(logits, "logits", ndim=3, floating=True, finite=False)
    answer = check_answer(answer, logits.shape[0], logits.shape[-1])
    return (
        torch.log_softmax(logits[:, -1].float(), dim=-1)
        .gather(1, answer[:, None].to(logits.device))
        .squeeze(1)
    )


GATES = ("removal", "contribution")


def _label_inputs(model, context, query, answer, offsets):
    context = _check_ids(context, "context")
    b, seq = context.shape
    query = _check_ids(query, "query", b)
    answer = check_answer(answer, b, _vocab(model))
    lay = step_layout(offsets, seq, b)
    return context, query, answer, lay


def step_utility_labels(
    model,
    context: torch.Tensor,
    query: torch.Tensor,
    answer: torch.Tensor,
    offsets,
    gate: str = "removal",
) -> torch.Tensor:
    """First-order signed utility ``u_s`` of every step, shape (batch, n_steps) (module docstring).

    context (batch, seq), query (batch, q) token ids, answer (batch,) the correct next action; offsets
    shared or per row (missing slots of shorter rows get 0). One prefill and one backward pass per
    batch; the gradient is taken with respect to the per-step gate ``m_s`` at ``m = 1``: on the
    step's unnormalised attention (``gate="removal"``; ``m_s = 0`` is exact removal) or on its value
    vectors (``gate="contribution"``, gradient times contribution).
    """
    gate = validate.one_of(gate, "gate", GATES)
    context, query, answer, lay = _label_inputs(model, context, query, answer, offsets)
    layers = cache_layers(prefill(model, context))
    dev = layers[0][0].device
    lay = lay.to(dev)
    m = torch.ones(context.shape[0], lay.max_steps, device=dev, requires_grad=True)
    with torch.enable_grad():
        gates = m.gather(1, lay.token_step)
        if gate == "contribution":
            logits = query_logits(model, layers, query, context.shape[1], value_gate=gates)
        else:  # d/dm at m=1 of a bias log(m) equals d/db at b=0
            logits = query_logits(model, layers, query, context.shape[1], key_bias=torch.log(gates))
        lp = answer_logprob(logits, answer).sum()
        (grad,) = torch.autograd.grad(lp, m)
    return (grad * lay.valid).detach()


@torch.no_grad()
def leave_one_step_out(
    model, context: torch.Tensor, query: torch.Tensor, answer: torch.Tensor, offsets
) -> torch.Tensor:
    """Exact ``log p(full) - log p(without step s)`` for every step, shape (batch, n_steps).

    offsets: shared by the batch (n_steps + 1,). Removal is done by pruning the step's tokens from
    the cache (an independent route from the gate).
    """
    context, query, answer, lay = _label_inputs(model, context, query, answer, offsets)
    if not lay.shared:
        raise ValueError(
            "offsets: leave_one_step_out prunes one span for the whole batch; pass shared offsets"
        )
    off = lay.offsets[0]
    layers = cache_layers(prefill(model, context))
    dev = layers[0][0].device
    full = answer_logprob(query_logits(model, layers, query, context.shape[1]), answer)
    out = torch.zeros(context.shape[0], len(off) - 1, device=dev)
    for s in range(len(off) - 1):  # one removal per step: a reference route, not a hot path
        keep = torch.as_tensor(np.r_[0 : off[s], off[s + 1] : off[-1]], device=dev)
        pruned = [(k[:, :, keep], v[:, :, keep]) for k, v in layers]
        out[:, s] = full - answer_logprob(query_logits(model, pruned, query, context.shape[1]), answer)
    return out
