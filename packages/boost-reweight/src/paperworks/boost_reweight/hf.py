"""Hugging Face integration (extra ``hf``): per-trajectory weights in a real ``transformers.Trainer``.

- :func:`causal_lm_trajectory_nll`: (B, L, V) logits and (B, L) labels (``-100`` outside the agent's
  turns) -> (B,) mean NLL of each sequence's agent tokens; the ``loss_fn`` a
  :class:`~paperworks.boost_reweight.TrajectoryReweighter` takes for a causal LM.
- :class:`WeightedTrainer`: a ``Trainer`` whose ``compute_loss`` reads a per-sample ``weight`` column
  (e.g. BOOST's exported weights) and minimises ``mean_i w_i l_i``; with ``sample_weights=`` it
  instead draws training samples with a ``WeightedRandomSampler`` (the two hooks of the issue).
- :func:`weighted_sampler`: a ``WeightedRandomSampler`` from an id -> weight mapping.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch.utils.data import WeightedRandomSampler
from transformers import Trainer

__all__ = ["WeightedTrainer", "causal_lm_trajectory_nll", "weighted_sampler"]


def causal_lm_trajectory_nll(
    logits: torch.Tensor, labels: torch.Tensor, ignore_index: int = -100
) -> torch.Tensor:
    """Per-sequence mean next-token NLL over the labelled (agent) tokens: (B, L, V), (B, L) -> (B,)."""
    if logits.ndim != 3 or labels.shape != logits.shape[:2]:
        raise ValueError(
            f"logits, labels: expected (B, L, V) and (B, L), got {tuple(logits.shape)}, {tuple(labels.shape)}"
        )
    lg, lb = logits[:, :-1], labels[:, 1:]
    keep = lb != ignore_index
    n = keep.sum(1)
    if bool((n == 0).any()):
        bad = torch.nonzero(n == 0).flatten().tolist()[:5]
        raise ValueError(f"labels: trajectories {bad} have no agent turns (every label is {ignore_index})")
    nll = torch.nn.functional.cross_entropy(
        lg.reshape(-1, lg.shape[-1]), lb.clamp(min=0).reshape(-1), reduction="none"
    ).view_as(lb)
    return (nll * keep).sum(1) / n


def weighted_sampler(
    weights_by_id: Mapping[Any, float], ids: Sequence[Any], *, num_samples: int | None = None, seed: int = 0
) -> WeightedRandomSampler:
    """A ``WeightedRandomSampler`` drawing index i with probability ∝ ``weights_by_id[ids[i]]``."""
    missing = [i for i in ids if i not in weights_by_id]
    if missing:
        raise ValueError(f"ids: {len(missing)} ids have no weight (e.g. {missing[:3]})")
    w = torch.tensor([float(weights_by_id[i]) for i in ids], dtype=torch.double)
    if not bool(torch.isfinite(w).all()) or bool((w < 0).any()) or float(w.sum()) <= 0:
        raise ValueError("weights_by_id: expected finite non-negative weights with a positive sum")
    g = torch.Generator().manual_seed(int(seed))
    return WeightedRandomSampler(w, num_samples or len(ids), replacement=True, generator=g)


class WeightedTrainer(Trainer):
    """``transformers.Trainer`` with per-trajectory weights.

    Per-sample loss hook: each batch may carry ``weight_key`` (default ``"weight"``, shape (B,));
    the loss is ``mean_i w_i l_i`` with ``l_i`` = :func:`causal_lm_trajectory_nll` (a missing column
    means weight 1). Use ``TrainingArguments(remove_unused_columns=False)`` so the column reaches
    ``compute_loss``. Sampler hook: ``sample_weights`` (one weight per training sample) replaces the
    shuffling sampler by a ``WeightedRandomSampler`` seeded by ``args.seed``.
    """

    def __init__(
        self,
        *args: Any,
        sample_weights: Sequence[float] | torch.Tensor | None = None,
        weight_key: str = "weight",
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.weight_key = weight_key
        self.model_accepts_loss_kwargs = False
        if sample_weights is not None:
            w = torch.as_tensor(sample_weights, dtype=torch.double)
            n = len(self.train_dataset) if self.train_dataset is not None else None
            if w.ndim != 1 or (n is not None and w.numel() != n):
                raise ValueError(
                    f"sample_weights: expected one weight per training sample ({n}), "
                    f"got shape {tuple(w.shape)}"
                )
            if not bool(torch.isfinite(w).all()) or bool((w < 0).any()) or float(w.sum()) <= 0:
                raise ValueError("sample_weights: expected finite non-negative weights with a positive sum")
            self.sample_weights = w
        else:
            self.sample_weights = None

    def _get_train_sampler(self, train_dataset=None):
        if self.sample_weights is None:
            return super()._get_train_sampler(train_dataset)
        g = torch.Generator().manual_seed(int(self.args.seed))
        return WeightedRandomSampler(
            self.sample_weights, self.sample_weights.numel(), replacement=True, generator=g
        )

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        inputs = dict(inputs)
        w = inputs.pop(self.weight_key, None)
        labels = inputs.pop("labels")
        inputs.pop("ids", None)
        outputs = model(**inputs)
        per = causal_lm_trajectory_nll(outputs.logits, labels)
        if w is None:
            w = torch.ones_like(per)
        w = w.to(per.dtype).view(-1)
        if w.shape != per.shape:
            raise ValueError(
                f"{self.weight_key}: expected one weight per sample ({per.numel()}), got {w.numel()}"
            )
        loss = (w * per).mean()
        return (loss, outputs) if return_outputs else loss
