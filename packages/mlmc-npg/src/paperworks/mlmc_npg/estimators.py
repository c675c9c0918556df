"""Estimators of the scalarisation gradient ``w = grad f(J)`` from sampled returns.

A *return sampler* is any callable ``sampler(n, rng) -> (n, M)`` array of independent unbiased
estimates of ``J`` (one rollout each, e.g. :meth:`TabularMOMDP.sample_returns` bound to a policy).

- Plug-in (:func:`plugin_weights`): ``grad f(J_hat_B)`` with ``J_hat_B`` the mean of ``B`` rollouts.
  Biased for non-linear f: ``O(B^{-1/2})`` when grad f is only Lipschitz (a kink of the Hessian at
  ``J``), ``O(B^{-1})`` when f is second-order smooth (the first-order Taylor term has mean zero).
- MLMC (:class:`MLMCEstimator`, randomised multilevel Monte Carlo after Blanchet & Glynn 2015, as used
  for bias-reduced gradients by Asi et al. 2021): draw a level ``L`` with ``P(L = l) = p_l``,
  ``p_l proportional to 2^{-l}`` for ``l = 1..L_max`` (a Geom(1/2) truncated at ``L_max``); draw one
  base rollout and ``2^L`` rollouts with means ``J^a``, ``J^b`` of their two halves and ``J^(2^L)`` of
  all; return ``grad f(J^(1)) + Delta_L / p_L`` with the antithetic difference
  ``Delta_l = grad f(J^(2^l)) - (grad f(J^a) + grad f(J^b)) / 2``. Its mean telescopes to
  ``E grad f(J_hat_{2^{L_max}})`` (the plug-in at ``2^{L_max}`` rollouts; unbiased when
  ``L_max = None``), its expected cost is ``1 + sum_l p_l 2^l = 1 + L_max / (1 - 2^{-L_max})``
  rollouts per call.

``1/p_L`` equals ``2^L (1 - 2^{-L_max})``: the issue's ``2^L`` weight renormalised for the truncation,
so that the telescoping sum is exact.

Truncation tied to the budget (:func:`mlmc_max_level`): Asi et al. (2021) truncate the Blanchet-Glynn
level at ``O(log(1/delta))`` for a target bias ``delta``; here the target is the statistical error of a
per-iteration budget of ``b`` rollouts, so ``2^{L_max} >= 2^offset * b``, i.e.
``L_max = ceil(log2 b) + offset``: the truncation bias is the plug-in's at ``2^offset b`` rollouts, below
the plug-in's at the same budget, for an expected cost of ``O(log b)`` rollouts per call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import as_generator, int_in_range, nonnegative_int, positive_int

from .scalarization import ConcaveScalarization

__all__ = [
    "GaussianReturns",
    "MLMCEstimator",
    "ReturnSampler",
    "WeightEstimate",
    "mlmc_max_level",
    "plugin_weights",
]

ReturnSampler = Callable[[int, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class WeightEstimate:
    """Estimated weights ``w`` (``(k, M)`` for ``k`` calls, or ``(M,)`` for one) and the rollouts used."""

    weights: np.ndarray
    rollouts: int


def _draw(sampler: ReturnSampler, n: int, gen: np.random.Generator, M: int) -> np.ndarray:
    x = np.asarray(sampler(n, gen), dtype=float)
    if x.shape != (n, M):
        raise ValueError(
            f"sampler: expected an array of shape ({n}, {M}) (one row per rollout), got {x.shape}"
        )
    return x


def _half_means(
    sampler: ReturnSampler, n_calls: int, size: int, gen: np.random.Generator, M: int
) -> tuple[np.ndarray, np.ndarray]:
    """Means of two independent halves of ``size`` rollouts each, for ``n_calls`` calls: two ``(n, M)``."""
    fast = getattr(sampler, "half_means", None)
    if fast is not None:
        return fast(n_calls, size, gen)
    x = _draw(sampler, 2 * n_calls * size, gen, M).reshape(n_calls, 2, size, M)
    m = x.mean(axis=2)
    return m[:, 0], m[:, 1]


def plugin_weights(
    f: ConcaveScalarization,
    sampler: ReturnSampler,
    batch: int,
    rng: object = None,
    *,
    calls: int | None = None,
) -> WeightEstimate:
    """Plug-in weights ``grad f(mean of batch rollouts)``; ``calls=k`` gives ``k`` independent ones
    (shape ``(k, M)``, ``k * batch`` rollouts), else one (shape ``(M,)``)."""
    B = positive_int(batch, "batch")
    gen = as_generator(rng)
    k = 1 if calls is None else positive_int(calls, "calls")
    M = f.n_objectives
    if B % 2 == 0 and getattr(sampler, "half_means", None) is not None:
        a, b = _half_means(sampler, k, B // 2, gen, M)
        J = 0.5 * (a + b)
    else:
        J = _draw(sampler, k * B, gen, M).reshape(k, B, M).mean(axis=1)
    w = f.grad(J)
    return WeightEstimate(w if calls is not None else w[0], k * B)


def mlmc_max_level(batch: int, offset: int = 1) -> int:
    """The truncation level tied to a budget of ``batch`` rollouts: ``max(1, ceil(log2 batch) + offset)``.

    The rule of the module docstring (after Asi et al. 2021, truncation at ``O(log 1/delta)`` levels):
    ``2^{L_max} >= 2^offset * batch``, so the truncated MLMC's bias equals the plug-in's at
    ``2^offset * batch`` rollouts. ``offset >= 0``; the result is capped at 40 like ``max_level``.
    """
    b = positive_int(batch, "batch")
    c = nonnegative_int(offset, "offset")
    level = (b - 1).bit_length() + c  # ceil(log2 b) exactly, for integers
    return int(min(40, max(1, level)))


class MLMCEstimator:
    """Randomised multilevel Monte Carlo estimator of ``grad f(J)`` (equations in the module docstring).

    ``max_level``: ``L_max >= 1`` (truncation; bias equals the plug-in's at ``2^{L_max}`` rollouts) or
    None (untruncated: unbiased, but the expected cost is infinite, so only for samplers with a
    ``half_means`` shortcut such as :class:`GaussianReturns`).
    """

    def __init__(self, f: ConcaveScalarization, max_level: int | None = 10) -> None:
        if not isinstance(f, ConcaveScalarization):
            raise TypeError(f"f: expected a ConcaveScalarization, got {type(f).__name__}")
        self.f = f
        self.max_level = None if max_level is None else int_in_range(max_level, "max_level (L_max)", 1, 40)

    @property
    def level_probabilities(self) -> np.ndarray:
        """``p_l`` for ``l = 1..L_max`` (shape ``(L_max,)``); raises for the untruncated estimator."""
        if self.max_level is None:
            raise ValueError("max_level: the untruncated estimator has infinitely many levels")
        p = 0.5 ** np.arange(1, self.max_level + 1)
        return p / p.sum()

    @property
    def expected_cost(self) -> float:
        """Expected rollouts per call: ``1 + L_max / (1 - 2^{-L_max})`` (inf when untruncated)."""
        if self.max_level is None:
            return float("inf")
        return 1.0 + self.max_level / (1.0 - 0.5**self.max_level)

    def draw_levels(self, n: int, gen: np.random.Generator) -> np.ndarray:
        if self.max_level is None:
            return gen.geometric(0.5, size=n)  # P(L = l) = 2^{-l}, l >= 1
        return gen.choice(np.arange(1, self.max_level + 1), size=n, p=self.level_probabilities)

    def __call__(
        self, sampler: ReturnSampler, rng: object = None, *, calls: int | None = None
    ) -> WeightEstimate:
        """``calls=k``: ``k`` independent estimates (``(k, M)``), else one (``(M,)``); and the rollouts."""
        gen = as_generator(rng)
        k = 1 if calls is None else positive_int(calls, "calls")
        f, M = self.f, self.f.n_objectives
        levels = self.draw_levels(k, gen)
        base = _draw(sampler, k, gen, M)
        w = f.grad(base)
        used = k
        for level in np.unique(levels):
            rows = np.flatnonzero(levels == level)
            half = 2 ** (int(level) - 1)
            a, b = _half_means(sampler, rows.size, half, gen, M)
            delta = f.grad(0.5 * (a + b)) - 0.5 * (f.grad(a) + f.grad(b))
            p = 0.5 ** float(level) if self.max_level is None else self.level_probabilities[int(level) - 1]
            w[rows] += delta / p
            used += rows.size * 2 * half
        return WeightEstimate(w if calls is not None else w[0], int(used))


class GaussianReturns:
    """Return estimates ``J_hat ~ N(mean, diag(sd^2))`` per rollout: a sampler for tests and studies.

    ``half_means(n, size, rng)`` draws the means of two halves of ``size`` rollouts directly
    (``N(mean, sd^2 / size)``), so that MLMC levels of any depth cost O(1).
    """

    def __init__(self, mean: object, sd: object) -> None:
        self.mean = np.atleast_1d(np.asarray(mean, dtype=float))
        self.sd = np.broadcast_to(np.asarray(sd, dtype=float), self.mean.shape).copy()
        if np.any(self.sd < 0) or not np.all(np.isfinite(self.sd)):
            raise ValueError(f"sd: expected finite non-negative standard deviations, got {self.sd.tolist()}")

    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.mean + self.sd * rng.standard_normal((n, self.mean.size))

    def half_means(self, n: int, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        s = self.sd / np.sqrt(size)
        z = rng.standard_normal((2, n, self.mean.size))
        return self.mean + s * z[0], self.mean + s * z[1]
