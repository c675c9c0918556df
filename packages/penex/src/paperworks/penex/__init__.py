"""PENEX: the penalized multi-class exponential loss for neural networks (arXiv 2510.02107)."""

from .baselines import confidence_penalty_loss
from .loss import (
    DEFAULT_CLIP,
    DEFAULT_EMA,
    DEFAULT_SENSITIVITY,
    PENALTY_MAX,
    PENALTY_MIN,
    PENALTY_MODES,
    STABLE_CLIP,
    PENEXLoss,
    adaptive_penalty,
    penex_loss,
)
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
    "DEFAULT_EMA",
    "DEFAULT_SENSITIVITY",
    "STABLE_CLIP",
    "PENALTY_MAX",
    "PENALTY_MIN",
    "PENALTY_MODES",
    "MarginDistribution",
    "PENEXLoss",
    "adaptive_penalty",
    "confidence_penalty_loss",
    "margin_distribution",
    "multiclass_margins",
    "normalized_margins",
    "penex_log_probabilities",
    "penex_loss",
    "penex_minimiser",
    "penex_probabilities",
    "spectral_complexity",
]
