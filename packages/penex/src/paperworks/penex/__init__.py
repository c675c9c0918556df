"""PENEX: the penalized multi-class exponential loss for neural networks (arXiv 2510.02107)."""

from .baselines import confidence_penalty_loss
from .loss import DEFAULT_CLIP, PENEXLoss, penex_loss, resolve_penalty
from .margins import (
    MarginDistribution,
    margin_distribution,
    multiclass_margins,
    normalized_margins,
    spectral_complexity,
)
from .readout import penex_log_probabilities, penex_minimiser, penex_probabilities

__all__ = [
    "DEFAULT_CLIP",
    "MarginDistribution",
    "PENEXLoss",
    "confidence_penalty_loss",
    "margin_distribution",
    "multiclass_margins",
    "normalized_margins",
    "penex_log_probabilities",
    "penex_loss",
    "penex_minimiser",
    "penex_probabilities",
    "resolve_penalty",
    "spectral_complexity",
]
