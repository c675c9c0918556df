"""DDPM convergence with exact scores: the sampler as analysed, DDIM, and exact output laws.

The DDPM sampler ``Y_{t-1} = (Y_t + (1 - alpha_t) s_t(Y_t)) / sqrt(alpha_t) + sqrt(1 - alpha_t) Z`` with the
Li-Yan-type schedule (Jiao, Zhou and Li, arXiv 2510.27562, build on it), DDIM with the same schedule,
exact scores of Gaussian and Gaussian-mixture targets, and the sampler's exact output law in three
families (Gaussian; product and collinear mixtures through 1-D grids), from which KL and TV follow with
no density estimation. ``ExactScoreModel`` (torch) wraps a target as a diffusers epsilon-prediction model.
"""

from __future__ import annotations

from typing import Any

from .laws import (
    AxisMixtureLaw,
    GaussianLaw,
    GridLaw,
    axis_mixture_law,
    gaussian_kl,
    gaussian_output_law,
    grid_law,
    grid_size,
    product_kl,
    steps_for_tv,
)
from .samplers import METHODS, ddim_step, ddpm_step, sample, step_coefficients
from .schedules import Schedule, cosine_schedule, li_yan_schedule, linear_schedule
from .smoothness import SmoothnessProxy, smoothness_proxy
from .targets import GaussianMixture, axis_mixture, gaussian, mixture_1d

__all__ = [
    "METHODS",
    "AxisMixtureLaw",
    "ExactScoreModel",
    "ExactScoreOutput",
    "GaussianLaw",
    "GaussianMixture",
    "GridLaw",
    "Schedule",
    "SmoothnessProxy",
    "axis_mixture",
    "axis_mixture_law",
    "cosine_schedule",
    "ddim_step",
    "ddpm_step",
    "gaussian",
    "gaussian_kl",
    "gaussian_output_law",
    "grid_law",
    "grid_size",
    "li_yan_schedule",
    "linear_schedule",
    "mixture_1d",
    "product_kl",
    "sample",
    "smoothness_proxy",
    "step_coefficients",
    "steps_for_tv",
]


def __getattr__(name: str) -> Any:
    """``ExactScoreModel`` and ``ExactScoreOutput`` load torch, so they are imported on first use."""
    if name in ("ExactScoreModel", "ExactScoreOutput"):
        from . import exact_model

        return getattr(exact_model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
