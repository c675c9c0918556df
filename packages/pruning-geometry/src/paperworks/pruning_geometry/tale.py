"""TALE: task-aware greedy layer elimination (Naim, Sharma, Barman & Asher, arXiv 2510.22767).

Start from all ``L`` decoder layers. At each step, evaluate every single further removal with the
task's validation function (``val_fn(model) -> float``, higher is better, e.g. accuracy on a batched
validation set) and keep the removal with the best score when it changes the current score by at
least ``min_gain`` (``0``: a removal that does not lower validation accuracy is kept, TALE's
threshold rule at the current accuracy; a positive value asks for a strict improvement; a negative
one trades accuracy for depth). Stop when no candidate qualifies, at the layer budget
``max_remove`` or when one layer is left. A search costs at most ``L (L + 1) / 2`` evaluations.

Each candidate is evaluated in place with :func:`~paperworks.pruning_geometry.layers.without_layers`
(no model copy); the pruned model is copied once at the end.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn

from paperworks.core.validate import finite_float, nonnegative_int

from .layers import find_layers, remove_layers, without_layers

__all__ = ["TaleResult", "TaleStep", "greedy_search", "scalar_score", "tale_prune", "tale_search"]


def scalar_score(value: object, name: str = "val_fn") -> float:
    """``value`` as a finite float: a Python/NumPy real or a one-element tensor; else a clear error."""
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise TypeError(f"{name}: expected a scalar score, got a tensor of shape {tuple(value.shape)}")
        value = value.detach().reshape(()).item()
    elif hasattr(value, "item") and getattr(value, "shape", None) == ():
        value = value.item()  # a NumPy scalar
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a scalar score (a float), got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name}: expected a finite score, got {v}")
    return v


@dataclass(frozen=True)
class TaleStep:
    """One greedy step: every candidate's score (original layer index -> score) and the choice."""

    candidates: dict[int, float]
    chosen: int
    score: float
    accepted: bool


@dataclass
class TaleResult:
    """What a search found: ``removed`` (original indices, in removal order), scores and the trace."""

    n_layers: int
    removed: list[int]
    base_score: float
    score: float
    steps: list[TaleStep] = field(default_factory=list)
    evaluations: int = 0
    model: nn.Module | None = None

    @property
    def kept(self) -> list[int]:
        return [i for i in range(self.n_layers) if i not in self.removed]


def greedy_search(
    model: nn.Module,
    score_fn: Callable[[nn.Module], object],
    *,
    max_remove: int | None = None,
    min_gain: float | None = 0.0,
    layers_attr: str | None = None,
) -> TaleResult:
    """Greedy layer elimination maximising ``score_fn``; ``min_gain=None``: no stopping rule.

    With ``min_gain=None`` it removes exactly ``max_remove`` layers, each step taking the best
    candidate (SLEB's rule, with ``score_fn`` a negative calibration loss). Ties go to the lowest
    layer index. ``model`` is unchanged.
    """
    _, _, layers = find_layers(model, layers_attr)
    n = len(layers)
    if not callable(score_fn):
        raise TypeError(f"val_fn: expected a callable model -> float, got {type(score_fn).__name__}")
    budget = n - 1 if max_remove is None else nonnegative_int(max_remove, "max_remove")
    if budget > n - 1:
        raise ValueError(f"max_remove: expected at most {n - 1} (one layer must stay), got {budget}")
    if min_gain is None and max_remove is None:
        raise ValueError("max_remove: expected a layer count when min_gain is None (no stopping rule)")
    gain = None if min_gain is None else finite_float(min_gain, "min_gain")
    with torch.inference_mode():
        current = scalar_score(score_fn(model))
    result = TaleResult(n_layers=n, removed=[], base_score=current, score=current, evaluations=1)
    while len(result.removed) < budget:
        scores: dict[int, float] = {}
        for cand in range(n):
            if cand in result.removed:
                continue
            with without_layers(model, [*result.removed, cand], layers_attr=layers_attr) as m:
                with torch.inference_mode():
                    scores[cand] = scalar_score(score_fn(m))
            result.evaluations += 1
        best = max(scores, key=lambda k: (scores[k], -k))
        ok = gain is None or scores[best] - current >= gain
        result.steps.append(TaleStep(scores, best, scores[best], ok))
        if not ok:
            break
        result.removed.append(best)
        current = scores[best]
        result.score = current
    return result


def tale_search(
    model: nn.Module,
    val_fn: Callable[[nn.Module], object],
    *,
    max_remove: int | None = None,
    min_gain: float = 0.0,
    layers_attr: str | None = None,
) -> TaleResult:
    """TALE's greedy search on ``val_fn`` (higher is better); the model is not copied or changed."""
    return greedy_search(model, val_fn, max_remove=max_remove, min_gain=min_gain, layers_attr=layers_attr)


def tale_prune(
    model: nn.Module,
    val_fn: Callable[[nn.Module], object],
    *,
    max_remove: int | None = None,
    min_gain: float = 0.0,
    layers_attr: str | None = None,
) -> TaleResult:
    """TALE: search, then return the result with ``result.model`` a pruned copy (config updated).

    ``val_fn(model) -> float``: the task's validation score, higher is better, computed on a
    batched validation set (one forward pass per call, vectorised over samples). The pruned copy of
    a Hugging Face model saves with ``save_pretrained`` and reloads with ``from_pretrained``.

    Example::

        res = tale_prune(model, lambda m: accuracy(m, val_ids, val_answers))
        res.model.save_pretrained("pruned"); print(res.removed, res.base_score, res.score)
    """
    res = tale_search(model, val_fn, max_remove=max_remove, min_gain=min_gain, layers_attr=layers_attr)
    res.model = remove_layers(model, res.removed, layers_attr=layers_attr) if res.removed else _copy(model)
    return res


def _copy(model: nn.Module) -> nn.Module:
    import copy

    return copy.deepcopy(model)
