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

__all__ = [
    "MarginDistribution",
    "margin_distribution",
    "multiclass_margins",
    "normalized_margins",
    "spectral_complexity",
]


def multiclass_margins(logits: Tensor, target: Tensor) -> Tensor:
    """Per-sample margins ``f_y - max_{j != y} f_j``.

    Args:
        logits: ``(N, C)`` with ``C >= 2``.
        target: ``(N,)`` integer class indices in ``[0, C)``.

    Returns:
        ``(N,)`` margins in the logits' dtype.
    """
    if not isinstance(logits, Tensor) or not logits.is_floating_point():
        raise TypeError("logits: expected a floating-point torch.Tensor of shape (N, C)")
    if logits.dim() != 2 or logits.shape[1] < 2:
        raise ValueError(f"logits: expected shape (N, C) with C >= 2, got {tuple(logits.shape)}")
    if not isinstance(target, Tensor) or target.is_floating_point() or target.dtype == torch.bool:
        raise TypeError("target: expected an integer torch.Tensor of class indices")
    if tuple(target.shape) != (logits.shape[0],):
        raise ValueError(f"target: expected shape ({logits.shape[0]},), got {tuple(target.shape)}")
    if logits.shape[0] == 0:
        raise ValueError("logits: expected a non-empty batch")
    if int(target.min()) < 0 or int(target.max()) >= logits.shape[1]:
        raise ValueError(f"target: expected class indices in [0, {logits.shape[1] - 1}]")
    t = target.long().unsqueeze(1)
    f_y = logits.gather(1, t).squeeze(1)
    others = logits.scatter(1, t, float("-inf"))
    return f_y - others.amax(dim=1)


def spectral_complexity(model: nn.Module) -> float:
    """Product of the spectral norms of every ``nn.Linear`` weight in ``model`` (a Lipschitz bound).

    Raises if the model has no ``nn.Linear`` or has convolutions (whose operator norm this does not
    compute).
    """
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if not linears:
        raise ValueError("model: expected at least one nn.Linear layer")
    if any(isinstance(m, nn.modules.conv._ConvNd) for m in model.modules()):
        raise ValueError("model: convolutional layers are not supported by spectral_complexity")
    with torch.no_grad():
        norms = [torch.linalg.matrix_norm(m.weight.double(), ord=2).item() for m in linears]
    return float(np.prod(norms))


def normalized_margins(model: nn.Module, inputs: Tensor, target: Tensor) -> Tensor:
    """Spectrally normalised margins ``(f_y - max_{j!=y} f_j) / prod_l ||W_l||_2``, shape ``(N,)``."""
    with torch.no_grad():
        logits = model(inputs)
    return multiclass_margins(logits, target) / spectral_complexity(model)


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
    m = margins.detach().cpu().double().numpy() if isinstance(margins, Tensor) else np.asarray(margins, float)
    if m.ndim != 1 or m.size == 0:
        raise ValueError(f"margins: expected a non-empty 1-D array, got shape {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError("margins: expected finite values")
    lv = tuple(float(x) for x in levels)
    if not lv or any(not 0.0 <= x <= 1.0 for x in lv):
        raise ValueError(f"levels: expected quantile levels in [0, 1], got {levels!r}")
    q = tuple(float(x) for x in np.quantile(m, lv))
    return MarginDistribution(
        lv, q, float(m.mean()), float(np.median(m)), float(np.mean(m <= 0)), int(m.size)
    )
