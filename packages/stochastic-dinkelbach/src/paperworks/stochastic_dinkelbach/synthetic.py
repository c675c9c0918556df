"""A generated stream with known ``eta(x) = P(y = 1 | x)``, and exact population metrics on it.

Generative model (latent: nothing; observed: ``x``, ``y``):

    y ~ Bernoulli(prior)
    x | y ~ N(y * separation * u, I_d),      u = (1, ..., 1) / sqrt(d)

so ``z = u . x`` given ``y`` is ``N(y * separation, 1)`` and, with ``delta = separation``,

    eta(x) = sigmoid(delta * z - delta^2 / 2 + logit(prior))

is a logistic model (a well-specified online logistic regression can learn it). Every classifier the
experiment evaluates is a half-space ``w . x + c > 0`` (a linear probability model thresholded), whose
population confusion matrix is exact: ``w . x | y ~ N(y delta (w . u), |w|^2)``. The PU-optimal
classifier for a linear-fractional metric thresholds ``eta`` (Koyejo et al. 2014), and the optimal
threshold is found by Dinkelbach's iteration on these closed forms (:meth:`GaussianStream.pu_optimum`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit, ndtr

from paperworks.core.validate import as_generator, fraction, nonnegative_float, positive_float, positive_int

from .metrics import LinearFractionalMetric

__all__ = ["GaussianStream", "PUOptimum"]


@dataclass(frozen=True)
class PUOptimum:
    """The population optimum of a metric on a :class:`GaussianStream`."""

    value: float  # M* = lambda*, the Dinkelbach root
    threshold: float  # tau(lambda*): the optimal classifier is eta(x) > threshold
    iterations: int


@dataclass(frozen=True)
class GaussianStream:
    """Two Gaussian classes with identity covariance (see the module docstring).

    ``dim`` d >= 1, ``prior`` = P(y = 1) in (0, 1), ``separation`` > 0 = distance of the class means.
    """

    dim: int = 5
    prior: float = 0.25
    separation: float = 1.5

    def __post_init__(self) -> None:
        positive_int(self.dim, "dim")
        fraction(self.prior, "prior", open_low=True, open_high=True)
        positive_float(self.separation, "separation")

    @property
    def direction(self) -> np.ndarray:
        """``u``, shape (d,)."""
        return np.full(self.dim, 1.0 / np.sqrt(self.dim))

    @property
    def eta_coef(self) -> tuple[np.ndarray, float]:
        """``(w*, c*)`` with ``eta(x) = sigmoid(w* . x + c*)``."""
        d = self.separation
        return d * self.direction, float(-(d**2) / 2 + logit(self.prior))

    def sample(self, n: int, rng=None, *, shape: tuple[int, ...] = ()):
        """``(x, y, eta)``: features ``shape + (n, d)``, labels and true probabilities ``shape + (n,)``."""
        n = positive_int(n, "n")
        rng = as_generator(rng)
        y = (rng.random((*shape, n)) < self.prior).astype(np.int64)
        x = rng.standard_normal((*shape, n, self.dim))
        x += (y * self.separation)[..., None] * self.direction
        return x, y, self.eta(x)

    def eta(self, x: np.ndarray) -> np.ndarray:
        """``P(y = 1 | x)`` for features of shape (..., d)."""
        w, c = self.eta_coef
        return expit(np.asarray(x) @ w + c)

    # -- exact population confusion matrices -----------------------------------------------------
    def confusion_halfspace(self, w, c) -> np.ndarray:
        """Rates (TP, FP, FN, TN) of ``1[w . x + c > 0]``; ``w`` (..., d), ``c`` (...) -> (..., 4)."""
        w = np.asarray(w, dtype=float)
        c = np.asarray(c, dtype=float)
        norm = np.linalg.norm(w, axis=-1)
        mean1 = self.separation * (w @ self.direction)
        safe = np.where(norm > 0, norm, 1.0)
        p1 = np.where(norm > 0, ndtr((mean1 + c) / safe), (c > 0).astype(float))  # P(pred 1 | y = 1)
        p0 = np.where(norm > 0, ndtr(c / safe), (c > 0).astype(float))  # P(pred 1 | y = 0)
        return self._rates(p1, p0)

    def confusion_eta_threshold(self, tau) -> np.ndarray:
        """Rates (TP, FP, FN, TN) of ``1[eta(x) > tau]`` (tau in [0, 1], any shape) -> (..., 4)."""
        tau = np.asarray(tau, dtype=float)
        d = self.separation
        with np.errstate(divide="ignore"):
            t = (logit(tau) - logit(self.prior) + d**2 / 2) / d  # eta > tau  <=>  z > t
        return self._rates(ndtr(d - t), ndtr(-t))

    def confusion_noisy_threshold(self, tau, noise: float, grid: int = 4001) -> np.ndarray:
        """Rates of the randomised classifier ``1[eta(x) + noise * xi > tau]``, ``xi ~ N(0, 1)`` per x.

        ``P(pred 1 | x) = Phi((eta(x) - tau) / noise)``; integrated over ``z | y`` by the trapezoid rule
        on ``grid`` points of [-9, separation + 9]. ``noise = 0`` is the exact deterministic classifier.
        """
        noise = nonnegative_float(noise, "noise")
        if noise == 0:
            return self.confusion_eta_threshold(tau)
        tau = np.asarray(tau, dtype=float)
        d = self.separation
        z = np.linspace(-9.0, d + 9.0, grid)
        eta = expit(d * z - d**2 / 2 + logit(self.prior))
        dens1 = np.exp(-0.5 * (z - d) ** 2) / np.sqrt(2 * np.pi)
        dens0 = np.exp(-0.5 * z**2) / np.sqrt(2 * np.pi)
        pred = ndtr((eta - tau[..., None]) / noise)
        p1 = np.trapezoid(pred * dens1, z, axis=-1)
        p0 = np.trapezoid(pred * dens0, z, axis=-1)
        return self._rates(p1, p0)

    def _rates(self, p1: np.ndarray, p0: np.ndarray) -> np.ndarray:
        pi = self.prior
        return np.stack([pi * p1, (1 - pi) * p0, pi * (1 - p1), (1 - pi) * (1 - p0)], axis=-1)

    # -- optima -----------------------------------------------------------------------------------
    def pu_optimum(
        self, metric: LinearFractionalMetric, tol: float = 1e-15, max_iter: int = 200
    ) -> PUOptimum:
        """Dinkelbach's iteration on the population: ``lambda <- M(1[eta > tau(lambda)])``.

        Starts from the metric's lower end; increases monotonically to the root ``lambda* = M*``.
        """
        lam = metric.lo
        for it in range(1, max_iter + 1):
            new = float(metric.value(*self.confusion_eta_threshold(metric.threshold(lam))))
            if new <= lam + tol:
                return PUOptimum(max(new, lam), float(metric.threshold(max(new, lam))), it)
            lam = new
        return PUOptimum(lam, float(metric.threshold(lam)), max_iter)

    def metric_of_halfspace(self, metric: LinearFractionalMetric, w, c):
        """The population metric of ``1[w . x + c > 0]`` (vectorised over leading axes)."""
        r = self.confusion_halfspace(w, c)
        return metric.value(r[..., 0], r[..., 1], r[..., 2], r[..., 3])

    def metric_of_threshold(self, metric, tau, noise: float = 0.0):
        """The population metric of ``1[eta(x) + noise * xi > tau]`` (any metric with ``value``)."""
        r = self.confusion_noisy_threshold(tau, noise)
        return metric.value(r[..., 0], r[..., 1], r[..., 2], r[..., 3])
