"""The TaskKV retention policy: residual scorer + regime classifier + exact-budget step retention.

:class:`TaskKV` combines the three contributions over a cache given as per-layer content keys
(before RoPE, :func:`~.rope.content_keys`), values and the window attention of each layer:

1. step scores: the :class:`~.scorer.ResidualStepScorer` applied to each layer's
   :func:`~.scorer.step_features`, averaged over layers (one step-level decision for all layers);
2. regime: the :class:`~.scorer.RegimeClassifier` on a confidence signal over the droppable steps
   (default: the entropy of the raw window-attention mass, :func:`~.scorer.attention_entropy`); a
   confident ranking keeps the best-scored steps, an unconfident one falls back to contiguous
   (recency) retention, which keeps the instruction too when ``fallback_pin_instruction``;
3. retention: :func:`~.retention.select_tokens` keeps exactly ``floor(budget * seq)`` tokens and never
   drops the pinned steps (the current step, and the instruction when ``pin_instruction``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ._validation import check_layers, check_tensor, validate
from .retention import StepLayout, gather_tokens, n_keep_for, select_tokens, step_layout, token_priority
from .scorer import (
    FEATURE_NAMES,
    RegimeClassifier,
    ResidualStepScorer,
    _step_features,
    attention_entropy,
    score_entropy,
)

__all__ = ["REGIME_SIGNALS", "TaskKV", "TaskKVConfig"]

REGIME_SIGNALS = ("attention", "score")


@dataclass(frozen=True)
class TaskKVConfig:
    """Configuration of :class:`TaskKV`.

    budget: kept fraction of the cache in (0, 1] (the paper evaluates 0.2); window: number of last
    context tokens whose attention is the attention-mass prior (the current step); instruction_step:
    index of the instruction step (the intent the alignment prior compares with); pin_instruction /
    pin_current: never drop those steps; fallback_pin_instruction: the contiguous fallback keeps the
    instruction as well as the most recent steps; regime_signal: what the regime classifier reads,
    ``"attention"`` (entropy of the raw window-attention mass over the droppable steps) or
    ``"score"`` (entropy of ``softmax(scores / temperature)``); use_classifier / use_residual:
    ablation switches.
    """

    budget: float = 0.2
    window: int = 4
    instruction_step: int = 1
    pin_instruction: bool = True
    pin_current: bool = True
    fallback_pin_instruction: bool = True
    regime_signal: str = "attention"
    temperature: float = 1.0
    use_classifier: bool = True
    use_residual: bool = True

    def __post_init__(self) -> None:
        validate.fraction(self.budget, "budget", open_low=True)
        validate.positive_int(self.window, "window")
        validate.nonnegative_int(self.instruction_step, "instruction_step")
        validate.positive_float(self.temperature, "temperature")
        validate.one_of(self.regime_signal, "regime_signal", REGIME_SIGNALS)
        for k in (
            "pin_instruction",
            "pin_current",
            "fallback_pin_instruction",
            "use_classifier",
            "use_residual",
        ):
            if not isinstance(getattr(self, k), bool):
                raise TypeError(f"{k}: expected a bool, got {getattr(self, k)!r}")

    def pinned(self, n_steps: int | None = None) -> tuple[int, ...]:
        """The pinned steps: the instruction (when ``pin_instruction``) and ``-1`` (each row's last
        step, when ``pin_current``); with ``n_steps`` given, ``-1`` is resolved to ``n_steps - 1``."""
        out = []
        if self.pin_instruction:
            out.append(self.instruction_step)
        if self.pin_current:
            out.append(-1 if n_steps is None else n_steps - 1)
        return tuple(sorted(set(out), key=lambda s: (s < 0, s)))


class TaskKV:
    """TaskKV over per-layer caches. ``scorer=None`` uses the fixed priors only; ``classifier=None``
    uses ``RegimeClassifier()`` with its default threshold."""

    def __init__(
        self,
        config: TaskKVConfig | None = None,
        scorer: ResidualStepScorer | None = None,
        classifier: RegimeClassifier | None = None,
    ) -> None:
        if config is not None and not isinstance(config, TaskKVConfig):
            raise TypeError(f"config: expected a TaskKVConfig, got {type(config).__name__}")
        if scorer is not None and not isinstance(scorer, ResidualStepScorer):
            raise TypeError(f"scorer: expected a ResidualStepScorer, got {type(scorer).__name__}")
        if classifier is not None and not isinstance(classifier, RegimeClassifier):
            raise TypeError(f"classifier: expected a RegimeClassifier, got {type(classifier).__name__}")
        self.config = config or TaskKVConfig()
        self.scorer = scorer
        self.classifier = classifier or RegimeClassifier()

    # -- features and scores ------------------------------------------------------------------------
    def layout(self, offsets, seq_len: int, batch: int) -> StepLayout:
        lay = step_layout(offsets, seq_len, batch)
        if int(lay.n_steps.min()) <= self.config.instruction_step:
            raise ValueError(
                f"offsets: instruction_step={self.config.instruction_step} needs rows of more steps, "
                f"got a row of {int(lay.n_steps.min())}"
            )
        return lay

    def features(
        self,
        keys: Sequence[torch.Tensor],
        window_attention: Sequence[torch.Tensor],
        offsets,
        intent_keys: Sequence[torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """Per-layer step features stacked, shape (layers, batch, n_steps, 5).

        keys: per-layer content keys (batch, kv_heads, seq, d) (before RoPE); window_attention:
        per-layer (batch, heads, window, seq), non-negative; offsets: shared or per row;
        intent_keys: per-layer (batch, kv_heads * d) mean content key of the instruction (streaming,
        once the instruction may have left the cache; default: the ``instruction_step`` of the cache).
        """
        keys = check_layers(keys, "keys")
        window_attention = check_layers(window_attention, "window_attention")
        if len(keys) != len(window_attention):
            raise ValueError(
                f"window_attention: expected one tensor per layer ({len(keys)} layers), "
                f"got {len(window_attention)}"
            )
        b, _, seq, _ = keys[0].shape
        for i, a in enumerate(window_attention):
            if a.shape[0] != b or a.shape[-1] != seq:
                raise ValueError(
                    f"window_attention[{i}]: expected (batch={b}, heads, window, seq={seq}), "
                    f"got {tuple(a.shape)}"
                )
            if bool((a < 0).any()):
                raise ValueError(f"window_attention[{i}]: expected non-negative attention weights")
        if intent_keys is None:
            lay = self.layout(offsets, seq, b)
            intents = [None] * len(keys)
            step = self.config.instruction_step
        else:
            lay = step_layout(offsets, seq, b)
            intents, step = list(intent_keys), 0
            if len(intents) != len(keys):
                raise ValueError(
                    f"intent_keys: expected one tensor per layer ({len(keys)}), got {len(intents)}"
                )
            D = keys[0].shape[1] * keys[0].shape[3]
            for i, ik in enumerate(intents):
                check_tensor(ik, f"intent_keys[{i}]", ndim=2, floating=True)
                if tuple(ik.shape) != (b, D):
                    raise ValueError(f"intent_keys[{i}]: expected shape ({b}, {D}), got {tuple(ik.shape)}")
        lay = lay.to(keys[0].device)
        return torch.stack(
            [
                _step_features(k, a, lay, step, ik)
                for k, a, ik in zip(keys, window_attention, intents, strict=True)
            ]
        )

    @staticmethod
    def _check_features(features) -> torch.Tensor:
        f = check_tensor(features, "features", ndim=4, floating=True)
        if f.shape[-1] != len(FEATURE_NAMES):
            raise ValueError(
                f"features: expected (layers, batch, n_steps, {len(FEATURE_NAMES)}), got {tuple(f.shape)}"
            )
        return f

    def step_scores(self, features: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Scores (batch, n_steps): scorer (or prior) per layer, averaged over layers."""
        features = self._check_features(features)
        layers, b, s, f = features.shape
        flat = features.reshape(layers * b, s, f)
        m = None if mask is None else mask.expand(b, s).repeat(layers, 1)
        if self.scorer is not None and self.config.use_residual:
            sc = self.scorer.predict(flat, m)
        else:
            sc = ResidualStepScorer.prior(flat, m)
        return sc.reshape(layers, b, s).mean(0)

    def _pin_mask(self, mask: torch.Tensor, instruction_slot: torch.Tensor | None = None) -> torch.Tensor:
        """(batch, n_steps) bool of the scorer route's pinned steps (per-row last step)."""
        pins = torch.zeros_like(mask)
        rows = torch.arange(mask.shape[0], device=mask.device)
        if self.config.pin_instruction:
            if instruction_slot is None:
                pins[:, self.config.instruction_step] = True
            else:
                has = instruction_slot >= 0
                pins[rows[has], instruction_slot[has]] = True
        if self.config.pin_current:
            pins[rows, mask.sum(1) - 1] = True
        return pins

    def regime_signal(
        self,
        features: torch.Tensor,
        scores: torch.Tensor,
        mask: torch.Tensor,
        pins: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The regime classifier's input (batch,) in [0, 1]; 1: no confident ranking of droppable steps."""
        cand = mask & ~(self._pin_mask(mask) if pins is None else pins)
        if bool((cand.sum(1) < 2).any()):
            raise ValueError(
                f"offsets: TaskKV needs at least 2 droppable steps per row (steps minus pinned), "
                f"got {int(cand.sum(1).min())}"
            )
        if self.config.regime_signal == "attention":
            return attention_entropy(features[..., 0].mean(0), cand)
        return score_entropy(scores, cand, self.config.temperature)

    def fallback_scores(
        self, mask: torch.Tensor, instruction_slot: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Contiguous retention scores (batch, n_steps): most recent first, the instruction ahead of all
        unpinned steps when ``fallback_pin_instruction``."""
        b, s = mask.shape
        rec = torch.arange(s, dtype=torch.float32, device=mask.device).expand(b, s).clone()
        if self.config.fallback_pin_instruction:
            if instruction_slot is None:
                rec[:, self.config.instruction_step] = float(s) + 1.0
            else:
                has = instruction_slot >= 0
                rec[torch.arange(b, device=mask.device)[has], instruction_slot[has]] = float(s) + 1.0
        return rec * mask

    def decide(
        self,
        features: torch.Tensor,
        mask: torch.Tensor | None = None,
        instruction_slot: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, np.ndarray, torch.Tensor]:
        """(scores used for retention (batch, n_steps), fallback flags (batch,), regime signal (batch,)).

        features: (layers, batch, n_steps, 5) from :meth:`features`; mask: (batch, n_steps) bool of
        existing step slots (ragged layouts; default all); instruction_slot: (batch,) the instruction's
        slot in each row, -1 where it is no longer there (streaming; default ``instruction_step``).
        """
        features = self._check_features(features)
        b, s = features.shape[1:3]
        mask = torch.ones(b, s, dtype=torch.bool, device=features.device) if mask is None else mask
        scores = self.step_scores(features, mask)
        signal = self.regime_signal(features, scores, mask, self._pin_mask(mask, instruction_slot))
        if self.config.use_classifier:
            fallback = self.classifier.predict(signal.cpu().numpy())
        else:
            fallback = np.zeros(b, dtype=bool)
        if fallback.any():
            fb = torch.as_tensor(fallback, device=scores.device)
            scores = torch.where(fb[:, None], self.fallback_scores(mask, instruction_slot), scores)
        return scores, fallback, signal

    # -- retention ----------------------------------------------------------------------------------
    def token_scores(self, keys, window_attention, offsets) -> tuple[torch.Tensor, np.ndarray]:
        """Per-token retention scores (batch, seq) (:func:`~.retention.token_priority`: any top-n keeps
        what :func:`~.retention.select_tokens` keeps at that n) and the fallback flags (batch,)."""
        feats = self.features(keys, window_attention, offsets)
        b, seq = keys[0].shape[0], keys[0].shape[2]
        lay = self.layout(offsets, seq, b)
        scores, fallback, _ = self.decide(feats, lay.valid.to(feats.device))
        return token_priority(scores, lay, self.config.pinned()), fallback

    def keep_indices(self, keys, window_attention, offsets) -> tuple[torch.Tensor, np.ndarray]:
        """Kept token indices (batch, n_keep) and the fallback flags (batch,)."""
        feats = self.features(keys, window_attention, offsets)
        b, seq = keys[0].shape[0], keys[0].shape[2]
        lay = self.layout(offsets, seq, b)
        scores, fallback, _ = self.decide(feats, lay.valid.to(feats.device))
        kept = select_tokens(scores, lay, n_keep_for(self.config.budget, seq), self.config.pinned())
        return kept, fallback

    def compress(
        self,
        keys: Sequence[torch.Tensor],
        values: Sequence[torch.Tensor],
        window_attention,
        offsets,
        content_keys: Sequence[torch.Tensor] | None = None,
    ):
        """Prune per-layer keys and values (batch, heads, seq, d) to the budget.

        ``keys``/``values``: the cache's own tensors (gathered and returned); ``content_keys``: the keys
        the features read, before RoPE (:func:`~.rope.content_keys`; default ``keys``, right only for
        keys without a position encoding). Returns (keys, values, kept, fallback).
        """
        keys = check_layers(keys, "keys")
        values = check_layers(values, "values")
        if len(values) != len(keys):
            raise ValueError(f"values: expected {len(keys)} layers like keys, got {len(values)}")
        for i, (k, v) in enumerate(zip(keys, values, strict=True)):
            if v.shape[:3] != k.shape[:3]:
                raise ValueError(
                    f"values[{i}]: expected batch/heads/seq {tuple(k.shape[:3])}, got {tuple(v.shape)}"
                )
        ck = keys if content_keys is None else check_layers(content_keys, "content_keys")
        if len(ck) != len(keys) or any(c.shape != k.shape for c, k in zip(ck, keys, strict=True)):
            raise ValueError("content_keys: expected one tensor per layer, shaped like keys")
        kept, fallback = self.keep_indices(ck, window_attention, offsets)
        return (
            [gather_tokens(k, kept) for k in keys],
            [gather_tokens(v, kept) for v in values],
            kept,
            fallback,
        )
