"""Multi-class margins and their distributions (arXiv 2510.02107, margin analysis).

The multi-class margin of a sample is ``m(x, y) = f_y(x) - max_{j != y} f_j(x)``: positive iff the
sample is classified correctly, and the quantity margin-based generalisation bounds control. Raw
margins scale with the logits, so comparisons across losses use the *spectrally normalised* margin
``m / prod_l ||W_l||_2`` (Bartlett, Foster & Telgarsky 2017) of a network whose layers are
``nn.Linear``: multiplying the output layer by a constant leaves it unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from paperworks.core.validate import finite_array, fraction

from ._checks import (
    check_scores_and_targets,
    check_values_now,
    class_scores,
    class_targets,
    float_tensor,
    validate_flag,
)

__all__ = [
    "MarginDistribution",
    "margin_distribution",
    "multiclass_margins",
    "normalized_margins",
    "spectral_complexity",
]


def multiclass_margins(logits: Tensor, target: Tensor, *, validate: bool | None = None) -> Tensor:
    """Per-sample margins ``f_y - max_{j != y} f_j``.

    Args:
        logits: ``(N, C)`` with ``N >= 1`` and ``C >= 2``.
        target: ``(N,)`` integer class indices in ``[0, C)``.
        validate: value checks (finite logits, targets in range); default on CPU tensors.

    Returns:
        ``(N,)`` margins in the logits' dtype.
    """
    validate = validate_flag(validate)
    class_scores(logits)
    if logits.dim() != 2 or logits.shape[1] < 2:
        raise ValueError(f"logits: expected shape (N, C) with C >= 2, got {tuple(logits.shape)}")
    class_targets(target, logits)
    if check_values_now(validate, logits, target):
        check_scores_and_targets(logits, target, logits.shape[1], None)
    t = target.long().unsqueeze(1)
    f_y = logits.gather(1, t).squeeze(1)
    others = logits.scatter(1, t, float("-inf"))
    return f_y - others.amax(dim=1)


def spectral_complexity(model: nn.Module) -> float:
    """Product of the spectral norms of every ``nn.Linear`` weight in ``model`` (a Lipschitz bound).

    Raises if the model has no ``nn.Linear`` or has convolutions (whose operator norm this does not
    compute).
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if not linears:
        raise ValueError("model: expected at least one nn.Linear layer")
    if any(isinstance(m, nn.modules.conv._ConvNd) for m in model.modules()):
        raise ValueError("model: convolutional layers are not supported by spectral_complexity")
    with torch.no_grad():
        norms = [torch.linalg.matrix_norm(m.weight.double(), ord=2).item() for m in linears]
    out = float(np.prod(norms))
    if not np.isfinite(out) or out <= 0:
        raise ValueError(
            f"model: expected finite, non-zero nn.Linear weights, got a spectral complexity of {out}"
        )
    return out


def normalized_margins(model: nn.Module, inputs: Tensor, target: Tensor) -> Tensor:
    """Spectrally normalised margins ``(f_y - max_{j!=y} f_j) / prod_l ||W_l||_2``, shape ``(N,)``."""
    complexity = spectral_complexity(model)  # checks the model first
    float_tensor(inputs, "inputs", min_dim=1, what="a batch of model inputs (N, ...)")
    with torch.no_grad():
        logits = model(inputs)
    return multiclass_margins(logits, target) / complexity


@dataclass(frozen=True)
class MarginDistribution:
    """Summary of a margin sample: quantiles at ``levels``, mean, median, and the fraction ``<= 0``."""

    levels: tuple[float, ...]
    quantiles: tuple[float, ...]
    mean: float
    median: float
    fraction_nonpositive: float
    n: int


def margin_distribution(
    margins: Tensor | np.ndarray, levels: Sequence[float] = (0.1, 0.25, 0.5, 0.75, 0.9)
) -> MarginDistribution:
    """Quantiles, mean and error fraction of a 1-D sample of margins."""
    if isinstance(margins, Tensor):
        margins = margins.detach().cpu().double().numpy()
    m = finite_array(margins, "margins", ndim=1)
    if isinstance(levels, str) or not isinstance(levels, Sequence) or len(levels) == 0:
        raise TypeError(f"levels: expected a non-empty sequence of quantile levels in [0, 1], got {levels!r}")
    lv = tuple(fraction(x, "levels") for x in levels)
    q = tuple(float(x) for x in np.quantile(m, lv))
    return MarginDistribution(
        lv, q, float(m.mean()), float(np.median(m)), float(np.mean(m <= 0)), int(m.size)
    )
