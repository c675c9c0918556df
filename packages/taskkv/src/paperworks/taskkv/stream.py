"""Streaming step-level retention: feed a trajectory step by step, re-select at every step boundary.

The paper's setting is a long-horizon agent whose context grows one step (observation/action turn)
at a time. :class:`TaskKVStream` holds a ``transformers`` decoder's cache of at most ``capacity``
tokens: :meth:`~TaskKVStream.append` runs one step through the model over the kept cache (RoPE
positions continue after everything seen, whatever was evicted), and if the cache is then larger
than ``capacity`` TaskKV scores the kept steps and evicts down to ``capacity`` tokens. Evictions are
final: an evicted token never returns. The step just appended is the window whose attention is the
attention-mass prior, and it is pinned (the current step). The instruction's mean content key is
remembered per layer when it is seen, so the intent prior still has its reference after the
instruction itself was evicted. :meth:`~TaskKVStream.query` answers over the kept cache without
adding to it.

Unlike the one-shot mode (prefill the full context, then compress once), later steps here are
computed over an already-pruned cache, as an agent that streams would compute them.
"""

from __future__ import annotations

import numpy as np
import torch

from ._validation import check_tensor, validate
from .attention import window_attention
from .policy import TaskKV
from .retention import gather_tokens, step_layout, token_priority
from .rope import rope_cos_sin, unrotate_keys
from .utility import _cache_from, _check_ids, query_logits

__all__ = ["TaskKVStream"]


class TaskKVStream:
    """A cache of at most ``capacity`` tokens kept by TaskKV while a trajectory streams in.

    model: a RoPE ``transformers`` decoder (Llama-like attention layers); policy: a :class:`TaskKV`
    (its ``instruction_step`` is the index of the instruction among the steps as they arrive; its
    ``budget`` is not used: ``capacity`` is the size). Attributes after each call: ``positions``
    (batch, n) absolute positions of the kept tokens, ``steps`` (batch, n) the step each came from,
    ``n_seen`` tokens seen, ``fallback`` the last eviction's regime flags (batch,).
    """

    def __init__(self, model, policy: TaskKV, capacity: int) -> None:
        if not isinstance(policy, TaskKV):
            raise TypeError(f"policy: expected a TaskKV, got {type(policy).__name__}")
        self.model, self.policy = model, policy
        self.capacity = validate.positive_int(capacity, "capacity")
        self.layers: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.positions = self.steps = None
        self.n_seen, self.n_steps_seen = 0, 0
        self.intent: list[torch.Tensor] | None = None
        self.fallback = np.zeros(0, dtype=bool)
        self.evictions = 0

    def _attention_modules(self):
        base = getattr(self.model, "model", self.model)
        return [layer.self_attn for layer in base.layers]

    @torch.no_grad()
    def append(self, step_ids: torch.Tensor) -> torch.Tensor:
        """Feed one step (batch, step_len) of token ids; returns its logits (batch, step_len, vocab)."""
        step_ids = _check_ids(
            step_ids, "step_ids", None if self.positions is None else self.positions.shape[0]
        )
        b, L = step_ids.shape
        dev = next(self.model.parameters()).device
        step_ids = step_ids.to(dev)
        captured: dict[int, tuple] = {}

        def hook(module, args, kwargs, output):
            captured[module.layer_idx] = (kwargs["hidden_states"], kwargs["position_embeddings"])

        handles = [m.register_forward_hook(hook, with_kwargs=True) for m in self._attention_modules()]
        try:
            pos = torch.arange(self.n_seen, self.n_seen + L, device=dev).expand(b, L)
            if not self.layers:
                out = self.model(input_ids=step_ids, position_ids=pos, use_cache=True)
            else:
                n = self.layers[0][0].shape[2]
                dtype = self.layers[0][0].dtype
                causal = torch.triu(torch.full((L, L), torch.finfo(dtype).min, dtype=dtype, device=dev), 1)
                mask = torch.cat([torch.zeros(b, L, n, dtype=dtype, device=dev), causal.expand(b, L, L)], 2)
                cache = _cache_from([(k, v) for k, v in self.layers])
                out = self.model(
                    input_ids=step_ids,
                    past_key_values=cache,
                    attention_mask=mask[:, None],
                    position_ids=pos,
                    use_cache=True,
                )
        finally:
            for h in handles:
                h.remove()
        cache = out.past_key_values
        self.layers = [(layer.keys, layer.values) for layer in cache.layers]
        step_col = torch.full((b, L), self.n_steps_seen, device=dev, dtype=torch.long)
        self.positions = pos if self.positions is None else torch.cat([self.positions, pos], 1)
        self.steps = step_col if self.steps is None else torch.cat([self.steps, step_col], 1)
        cos, sin = rope_cos_sin(self.model, 0, b, self.positions)
        content = [unrotate_keys(k, cos, sin) for k, _ in self.layers]
        if self.n_steps_seen == self.policy.config.instruction_step:  # remember the intent's reference
            self.intent = [c[:, :, -L:].float().mean(2).reshape(b, -1) for c in content]
        self.n_seen += L
        self.n_steps_seen += 1
        if self.layers[0][0].shape[2] > self.capacity:
            self._evict(content, captured, L)
        return out.logits

    def _evict(self, content, captured, L: int) -> None:
        b, n = self.steps.shape
        steps = self.steps.cpu().numpy()
        change = np.ones((b, n), dtype=bool)
        change[:, 1:] = steps[:, 1:] != steps[:, :-1]
        offsets = [np.r_[np.flatnonzero(row), n] for row in change]  # per row: kept steps' boundaries
        lay = step_layout(offsets, n, b, device=self.steps.device)
        attn = []
        for i, m in enumerate(self._attention_modules()):
            hidden, pe = captured[i]
            attn.append(window_attention(m, hidden, self.layers[i][0], L, pe))
        first = self.steps.gather(1, (lay.ends - lay.lengths).clamp_min(0))  # absolute step id of every slot
        instr = (first == self.policy.config.instruction_step) & lay.valid
        slot = torch.where(instr.any(1), instr.float().argmax(1), torch.full((b,), -1, device=instr.device))
        if self.intent is None:
            raise RuntimeError("stream: the instruction step has not been seen yet; capacity is too small")
        feats = self.policy.features(content, attn, lay, intent_keys=self.intent)
        scores, fallback, _ = self.policy.decide(feats, lay.valid, instruction_slot=slot)
        pins = self.policy._pin_mask(lay.valid, slot)
        pr = token_priority(scores, lay, (), pin_mask=pins)
        kept = torch.sort(torch.topk(pr, self.capacity, dim=1).indices, dim=1).values
        self.layers = [(gather_tokens(k, kept), gather_tokens(v, kept)) for k, v in self.layers]
        self.positions = self.positions.gather(1, kept)
        self.steps = self.steps.gather(1, kept)
        self.fallback = fallback
        self.evictions += 1

    @torch.no_grad()
    def query(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits (batch, q, vocab) of ``ids`` (batch, q) over the kept cache, at positions after all seen."""
        if not self.layers:
            raise RuntimeError("stream: append at least one step before querying")
        ids = _check_ids(ids, "ids", self.positions.shape[0])
        check_tensor(self.layers[0][0], "cache", ndim=4, floating=True)
        return query_logits(self.model, self.layers, ids, self.n_seen)
