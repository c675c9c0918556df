"""The TaskKV retention policy: residual scorer + regime classifier + exact-budget step retention.

:class:`TaskKV` combines the three contributions over a cache given as per-layer keys/values and the
window attention of each layer:

1. step scores: the :class:`~.scorer.ResidualStepScorer` applied to each layer's
   :func:`~.scorer.step_features`, averaged over layers (one step-level decision for all layers);
2. regime: the :class:`~.scorer.RegimeClassifier` on the normalised entropy of the scores over the
   droppable steps; a confident ranking keeps the best-scored steps, an unconfident one falls back
   to contiguous (recency) retention;
3. retention: :func:`~.retention.select_tokens` keeps exactly ``floor(budget * seq)`` tokens and never
   drops the pinned steps (the current step, and the instruction when ``pin_instruction``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .retention import (
    check_budget,
    check_offsets,
    contiguous_scores,
    gather_tokens,
    n_keep_for,
    select_tokens,
)
from .scorer import RegimeClassifier, ResidualStepScorer, score_entropy, step_features

__all__ = ["TaskKV", "TaskKVConfig"]


@dataclass(frozen=True)
class TaskKVConfig:
    """Configuration of :class:`TaskKV`.

    budget: kept fraction of the cache in (0, 1] (the paper evaluates 0.2); window: number of last
    context tokens whose attention is the attention-mass prior (the current step); instruction_step:
    index of the instruction step (the intent the alignment prior compares with); pin_instruction /
    pin_current: never drop those steps; temperature: of the softmax whose entropy the regime
    classifier reads; use_classifier / use_residual: ablation switches.
    """

    budget: float = 0.2
    window: int = 4
    instruction_step: int = 1
    pin_instruction: bool = True
    pin_current: bool = True
    temperature: float = 1.0
    use_classifier: bool = True
    use_residual: bool = True

    def __post_init__(self) -> None:
        check_budget(self.budget)
        if self.window < 1:
            raise ValueError(f"window: expected a positive number of tokens, got {self.window}")
        if self.instruction_step < 0:
            raise ValueError(f"instruction_step: expected a step index >= 0, got {self.instruction_step}")
        if not self.temperature > 0:
            raise ValueError(f"temperature: expected > 0, got {self.temperature}")

    def pinned(self, n_steps: int) -> tuple[int, ...]:
        out = []
        if self.pin_instruction:
            out.append(self.instruction_step)
        if self.pin_current:
            out.append(n_steps - 1)
        return tuple(sorted(set(out)))


class TaskKV:
    """TaskKV over per-layer caches. ``scorer=None`` uses the fixed priors only; ``classifier=None``
    uses ``RegimeClassifier()`` with its default threshold."""

    def __init__(
        self,
        config: TaskKVConfig | None = None,
        scorer: ResidualStepScorer | None = None,
        classifier: RegimeClassifier | None = None,
    ) -> None:
        self.config = config or TaskKVConfig()
        self.scorer = scorer
        self.classifier = classifier or RegimeClassifier()

    def features(
        self, keys: Sequence[torch.Tensor], window_attention: Sequence[torch.Tensor], offsets
    ) -> torch.Tensor:
        """Per-layer step features stacked, shape (layers, batch, n_steps, 5)."""
        if len(keys) != len(window_attention) or len(keys) == 0:
            raise ValueError(
                f"window_attention: expected one tensor per layer ({len(keys)} layers), "
                f"got {len(window_attention)}"
            )
        off = check_offsets(offsets, keys[0].shape[2])
        return torch.stack(
            [
                step_features(k, a, off, self.config.instruction_step)
                for k, a in zip(keys, window_attention, strict=True)
            ]
        )

    def step_scores(self, features: torch.Tensor) -> torch.Tensor:
        """Scores (batch, n_steps): scorer (or prior) per layer, averaged over layers."""
        layers, b, s, f = features.shape
        flat = features.reshape(layers * b, s, f)
        if self.scorer is not None and self.config.use_residual:
            sc = self.scorer.predict(flat)
        else:
            sc = ResidualStepScorer.prior(flat)
        return sc.reshape(layers, b, s).mean(0)

    def decide(self, features: torch.Tensor) -> tuple[torch.Tensor, np.ndarray, torch.Tensor]:
        """(scores used for retention (batch, n_steps), fallback flags (batch,), entropy (batch,))."""
        scores = self.step_scores(features)
        n_steps = scores.shape[1]
        cand = torch.ones(n_steps, dtype=torch.bool)
        cand[list(self.config.pinned(n_steps))] = False
        ent = score_entropy(scores, cand, self.config.temperature)
        fallback = (
            self.classifier.predict(ent.numpy()) if self.config.use_classifier else np.zeros(len(ent), bool)
        )
        if fallback.any():
            scores = scores.clone()
            scores[torch.as_tensor(fallback)] = contiguous_scores(n_steps, int(fallback.sum()))
        return scores, fallback, ent

    def keep_indices(self, keys, window_attention, offsets) -> tuple[torch.Tensor, np.ndarray]:
        """Kept token indices (batch, n_keep) and the fallback flags (batch,)."""
        feats = self.features(keys, window_attention, offsets)
        scores, fallback, _ = self.decide(feats)
        seq = keys[0].shape[2]
        n_keep = n_keep_for(self.config.budget, seq)
        kept = select_tokens(
            scores, check_offsets(offsets, seq), n_keep, self.config.pinned(len(offsets) - 1)
        )
        return kept, fallback

    def compress(
        self, keys: Sequence[torch.Tensor], values: Sequence[torch.Tensor], window_attention, offsets
    ):
        """Prune per-layer keys/values (batch, heads, seq, d) to the budget.

        Returns (keys, values, kept, fallback).
        """
        if len(values) != len(keys):
            raise ValueError(f"values: expected {len(keys)} layers like keys, got {len(values)}")
        for i, (k, v) in enumerate(zip(keys, values, strict=True)):
            if (
                k.ndim != 4
                or v.shape[:3] != k.shape[:3]
                or k.shape[0] != keys[0].shape[0]
                or k.shape[2] != keys[0].shape[2]
            ):
                raise ValueError(
                    f"keys/values: layer {i} has mismatched shapes {tuple(k.shape)} / {tuple(v.shape)}"
                )
        kept, fallback = self.keep_indices(keys, window_attention, offsets)
        return (
            [gather_tokens(k, kept) for k in keys],
            [gather_tokens(v, kept) for v in values],
            kept,
            fallback,
        )
