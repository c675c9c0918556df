"""The Gaussian signal model: preposterior, value of information and reservation values.

Model (our reading of the paper's "Gaussian signal model", Sec. "Pandora's Router"). For a query
``x`` and specialist ``k`` the value ``V`` of routing ``x`` to ``k`` (answer quality minus price) is
unknown. The cheap estimator gives the belief ``V ~ N(m, s^2)``. The expensive estimator, run at
cost ``c``, returns ``Y = V + e`` with ``e ~ N(0, tau^2)``. The refined estimate is the posterior
mean

    mu' = m + s^2 / (s^2 + tau^2) * (Y - m),                                   (1)

and before ``Y`` is seen (the preposterior) ``mu' ~ N(m, sigma^2)`` with

    sigma^2 = s^4 / (s^2 + tau^2)  (the variance the estimator can resolve).   (2)

A risk-neutral router values a specialist at its posterior mean, so opening "box" ``k`` reveals a
prize ``mu' ~ N(m, sigma^2)`` at cost ``c``: Weitzman's (1979) Pandora's box. With
``G(z) = E[(Z - z)^+] = phi(z) - z (1 - Phi(z))`` for standard normal ``Z``, the expected gain of
inspecting against an outside option ``y`` is ``sigma G((y - m) / sigma)``; the reservation value
(Weitzman index) solves ``E[(mu' - r)^+] = c``, i.e.

    r = m + sigma G^{-1}(c / sigma),                                            (3)

and, because a box may also be *taken uninspected* at its cheap mean ``m`` (Doval 2018), the lower
reservation value solving ``E[(r_lo - mu')^+] = c`` is, by symmetry of the Gaussian,
``r_lo = 2 m - r``. Inspecting one box against an outside option ``y`` pays iff
``r_lo < y < r`` (and never when ``c >= sigma / sqrt(2 pi)``, where ``r <= m``).
All functions are vectorised over any array shape (queries x specialists).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erfcx, ndtr

from paperworks.core.validate import nonnegative_int

from ._validate import as_finite, as_nonneg, as_positive, as_value_or_neg_inf

__all__ = [
    "expected_excess",
    "expected_excess_inv",
    "lower_reservation_value",
    "posterior_mean",
    "preposterior_std",
    "reservation_value",
    "value_of_information",
]

_SQRT2 = math.sqrt(2.0)
_INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _log_g(z: np.ndarray) -> np.ndarray:
    """log G(z), stable for large positive z (via erfcx) and large negative z."""
    z = np.asarray(z, dtype=np.float64)
    out = np.empty_like(z)
    pos = z >= 0
    zp = z[pos]
    # G(z) = exp(-z^2/2) [1/sqrt(2 pi) - z/2 erfcx(z/sqrt 2)] for z >= 0
    inner = _INV_SQRT2PI - 0.5 * zp * erfcx(zp / _SQRT2)
    out[pos] = -0.5 * zp * zp + np.log(np.maximum(inner, 1e-300))
    zn = z[~pos]
    out[~pos] = np.log(np.exp(-0.5 * zn * zn) * _INV_SQRT2PI - zn * ndtr(-zn))
    return out


def expected_excess(z: np.ndarray) -> np.ndarray:
    """``G(z) = E[(Z - z)^+]`` for ``Z ~ N(0, 1)``; any shape, elementwise."""
    z = as_finite(z, "z")
    return np.exp(_log_g(z))


# A table of z against log G(z) seeds the Newton iterations of the inverse (monotone, decreasing).
_Z_GRID = np.linspace(-60.0, 37.0, 4097)
_LOG_G_GRID = _log_g(_Z_GRID)


def expected_excess_inv(ratio: np.ndarray, *, newton_steps: int = 3) -> np.ndarray:
    """The ``z`` with ``G(z) = ratio`` (``ratio > 0``), elementwise.

    Table look-up in ``log G`` followed by Newton steps on ``log G(z) = log ratio`` (``log G`` is
    concave and decreasing, so Newton from the table converges monotonically); relative error of
    ``G`` below 1e-12 for ``ratio`` in [1e-300, inf).
    """
    ratio = as_positive(ratio, "ratio")
    newton_steps = nonnegative_int(newton_steps, "newton_steps")
    target = np.log(ratio)
    # np.interp needs increasing x: log G is decreasing in z, so flip both.
    z = np.interp(target, _LOG_G_GRID[::-1], _Z_GRID[::-1])
    # beyond the table (ratio > G(-60) = 60), G(z) = -z up to phi(z)-sized terms
    z = np.where(target > _LOG_G_GRID[0], -ratio, z)
    for _ in range(newton_steps):
        lg = _log_g(z)
        # d/dz log G = -(1 - Phi(z)) / G(z)
        slope = -ndtr(-z) / np.exp(lg)
        z = z - (lg - target) / slope
    return z


def preposterior_std(s: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """Std of the refined estimate before it is seen, eq. (2): ``s^2 / sqrt(s^2 + tau^2)``.

    ``s``: cheap-estimator std (> 0); ``tau``: expensive-estimator noise std (>= 0); same shape.
    """
    s = as_positive(s, "s")
    tau = as_nonneg(tau, "tau")
    if s.shape != tau.shape:
        raise ValueError(f"tau: expected shape {s.shape} (the shape of s), got {tau.shape}")
    return s * s / np.sqrt(s * s + tau * tau)


def posterior_mean(m: np.ndarray, s: np.ndarray, tau: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Refined estimate after the expensive reading ``y``, eq. (1). All arrays of one shape."""
    m = as_finite(m, "m")
    s = as_positive(s, "s")
    tau = as_nonneg(tau, "tau")
    y = as_finite(y, "y")
    for name, arr in (("s", s), ("tau", tau), ("y", y)):
        if arr.shape != m.shape:
            raise ValueError(f"{name}: expected shape {m.shape} (the shape of m), got {arr.shape}")
    w = s * s / (s * s + tau * tau)
    return m + w * (y - m)


def reservation_value(m: np.ndarray, sigma: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Weitzman index of a box whose prize is ``N(m, sigma^2)`` and costs ``cost`` to open, eq. (3).

    Solves ``E[(X - r)^+] = cost``. ``m``, ``sigma`` (> 0, the preposterior std) and ``cost``
    (>= 0) share one shape. A free inspection (``cost == 0``) has index ``+inf``.
    """
    m = as_finite(m, "m")
    sigma = as_positive(sigma, "sigma")
    cost = as_nonneg(cost, "cost")
    for name, arr in (("sigma", sigma), ("cost", cost)):
        if arr.shape != m.shape:
            raise ValueError(f"{name}: expected shape {m.shape} (the shape of m), got {arr.shape}")
    free = cost == 0
    ratio = np.where(free, 1.0, cost / sigma)
    ratio = np.clip(ratio, 1e-300, None)
    r = m + sigma * expected_excess_inv(ratio)
    return np.where(free, np.inf, r)


def lower_reservation_value(m: np.ndarray, sigma: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """``r_lo`` solving ``E[(r_lo - X)^+] = cost`` for ``X ~ N(m, sigma^2)``: ``2 m - r``."""
    m = as_finite(m, "m")
    return 2.0 * m - reservation_value(m, sigma, cost)


def value_of_information(
    m: np.ndarray, sigma: np.ndarray, cost: np.ndarray, outside: np.ndarray
) -> np.ndarray:
    """Net value of inspecting one box once against an outside option ``outside``.

    ``E[max(X, y)] - cost - max(m, y)`` with ``X ~ N(m, sigma^2)``, where the box may be taken
    uninspected at ``m``: equals ``sigma G((y - m)/sigma) - (m - y)^+ - cost``. Positive exactly
    when ``lower_reservation_value < y < reservation_value``. ``outside`` may be ``-inf``.
    """
    m = as_finite(m, "m")
    sigma = as_positive(sigma, "sigma")
    cost = as_nonneg(cost, "cost")
    y = as_value_or_neg_inf(outside, "outside")
    for name, arr in (("sigma", sigma), ("cost", cost), ("outside", y)):
        if arr.shape != m.shape:
            raise ValueError(f"{name}: expected shape {m.shape} (the shape of m), got {arr.shape}")
    finite = np.isfinite(y)
    z = np.where(finite, (y - m) / sigma, 0.0)
    gain = sigma * np.exp(_log_g(z)) - np.maximum(m - y, 0.0)
    # y = -inf: E[max(X, -inf)] = m, so the gain over taking the box blind is 0.
    gain = np.where(finite, gain, 0.0)
    return gain - cost
