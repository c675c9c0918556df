"""The DDPM sampler as analysed, and DDIM with the same schedule, as one step and as a loop.

DDPM (Li and Yan's form; diffusers' ``DDPMScheduler`` with ``variance_type="fixed_large"``)::

    Y_{t-1} = (Y_t + (1 - alpha_t) s_t(Y_t)) / sqrt(alpha_t) + sqrt(1 - alpha_t) Z_t

DDIM (Song et al. 2021, ``eta = 0``; diffusers' ``DDIMScheduler``), written with the score
``s_t = -eps / sqrt(1 - abar_t)``::

    Y_{t-1} = (Y_t + (1 - abar_t) s_t(Y_t)) / sqrt(alpha_t) - sqrt((1 - abar_{t-1})(1 - abar_t)) s_t(Y_t)

Both are ``Y_{t-1} = a_t Y_t + b_t s_t(Y_t) + sigma_t Z_t`` (:func:`step_coefficients`). The loop starts
from ``Y_T ~ N(0, I)`` and runs ``t = T, ..., 2``; its output ``Y_1`` is compared with ``X_1`` (the
target after the first, tiny, forward step), as in the analyses. The step functions use only
arithmetic on ``x`` and ``score``, so they take NumPy arrays and torch tensors alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from paperworks.core.validate import as_generator, one_of, positive_int

from .schedules import Schedule
from .targets import GaussianMixture

__all__ = ["METHODS", "ddim_step", "ddpm_step", "sample", "step_coefficients"]

METHODS = ("ddpm", "ddim")


def step_coefficients(schedule: Schedule, t: int, method: str = "ddpm") -> tuple[float, float, float]:
    """``(a_t, b_t, sigma_t)`` of the step ``Y_{t-1} = a_t Y_t + b_t s_t(Y_t) + sigma_t Z`` (t in 2..T;
    t = 1 is allowed and maps to the clean data for DDIM)."""
    method = one_of(method, "method", METHODS)
    beta, ab = schedule.beta(t), schedule.alpha_bar(t)
    ab_prev = schedule.alpha_bar(t - 1)
    alpha = 1.0 - beta
    a = 1.0 / math.sqrt(alpha)
    if method == "ddpm":
        return a, beta / math.sqrt(alpha), math.sqrt(beta)
    return a, (1.0 - ab) / math.sqrt(alpha) - math.sqrt((1.0 - ab_prev) * (1.0 - ab)), 0.0


def ddpm_step(x: Any, score: Any, t: int, schedule: Schedule, noise: Any) -> Any:
    """One DDPM step ``t -> t-1``: x, score, noise of one shape (n, d) (NumPy or torch); returns x_{t-1}."""
    a, b, sigma = step_coefficients(schedule, t, "ddpm")
    return a * x + b * score + sigma * noise


def ddim_step(x: Any, score: Any, t: int, schedule: Schedule) -> Any:
    """One DDIM (eta = 0) step ``t -> t-1``: x, score of one shape (n, d); returns x_{t-1}."""
    a, b, _ = step_coefficients(schedule, t, "ddim")
    return a * x + b * score


def sample(
    score: GaussianMixture | Callable[[np.ndarray, int], np.ndarray],
    schedule: Schedule,
    n: int,
    *,
    d: int | None = None,
    method: str = "ddpm",
    rng: object = None,
) -> np.ndarray:
    """``n`` draws of the sampler's output ``Y_1``: (n, d).

    ``score``: a :class:`GaussianMixture` (its exact scores) or a callable ``(x (n, d), t) -> (n, d)``
    (then ``d`` is required). ``rng``: a Generator or seed for ``Y_T`` and the DDPM noise.
    """
    method = one_of(method, "method", METHODS)
    n = positive_int(n, "n")
    gen = as_generator(rng)
    if isinstance(score, GaussianMixture):
        target = score
        d = target.d

        def fn(x: np.ndarray, t: int) -> np.ndarray:
            return target.score(x, schedule.alpha_bar(t))

    elif callable(score):
        if d is None:
            raise ValueError("d: expected the dimension when score is a callable")
        d = positive_int(d, "d")
        fn = score
    else:
        raise TypeError(f"score: expected a GaussianMixture or a callable, got {type(score).__name__}")
    y = gen.standard_normal((n, d))
    for t in range(schedule.T, 1, -1):
        s = fn(y, t)
        if method == "ddpm":
            y = ddpm_step(y, s, t, schedule, gen.standard_normal((n, d)))
        else:
            y = ddim_step(y, s, t, schedule)
    return y
