"""Demand processes: documented generative models, each with ``sample(T, rng) -> (T, n)`` demands >= 0.

Latent and observed: the latent variables (copula draws, the common-demand indicator, regimes) are
drawn inside ``sample``; the learner observes only sales ``min(y_t, d_t)`` (lost sales), from which the
loss's subgradient is computed. The generators:

- :class:`CorrelatedLognormal` (i.i.d. over time, correlated products):
  ``d_{t,i} = m_i exp(σ ε_{t,i} - σ²/2)``
  with ``σ² = log(1 + cv²)`` and ``ε_t ~ N(0, (1 - ρ) I + ρ 11ᵀ)`` (equicorrelated Gaussian copula), so
  ``E d_{t,i} = m_i`` and ``corr(log d_i, log d_j) = ρ``.
- :class:`Seasonal`: the same with a time-varying mean ``m_{t,i} = m_i (1 + A sin(2π t / period + φ_i))``.
- :class:`RegimeSwitching`: the mean alternates between ``low`` and ``high`` at ``switches`` equally
  spaced rounds (a known piecewise-constant mean path, so the per-round optimal levels and their path
  length ``P_T`` are known exactly).
- :class:`Intermittent` (tunable common-demand probability ``p``): each round a latent common indicator
  ``C_t ~ Bernoulli(p)``; if ``C_t = 1`` every product sells, else one product chosen uniformly has no
  demand and the others sell. A selling product's demand is ``delta + LogNormal(excess, cv)``
  (``cv = 0``: exactly ``delta + excess``). So
  ``P(min_i d_{t,i} >= delta) = p`` exactly (for ``n >= 2``), while each product sells in a fraction
  ``p + (1 - p)(n - 1)/n`` of rounds: the products sell often, just rarely all together.
- :class:`TableDemand`: replays a ``(T, n)`` table (e.g. from :func:`~.data.load_long_table`).

The scale-family generators also give the per-round marginal quantiles (``quantile(tau, T)``), from
which the expected-loss-optimal level of each round follows (:func:`~.hindsight.expected_optimal_levels`).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from paperworks.core.validate import (
    as_generator,
    finite_array,
    fraction,
    nonnegative_float,
    positive_float,
    positive_int,
)

__all__ = [
    "CorrelatedLognormal",
    "DemandProcess",
    "Intermittent",
    "RegimeSwitching",
    "Seasonal",
    "TableDemand",
    "common_demand_rate",
    "validate_demand",
]


def validate_demand(d: object, n: int | None = None, name: str = "demand") -> np.ndarray:
    """A finite, non-negative float demand array of shape ``(T, n)`` (or ``(T, R, n)``)."""
    arr = finite_array(d, name)
    if arr.ndim not in (2, 3):
        raise ValueError(f"{name}: expected shape (T, n) or (T, R, n), got {arr.shape}")
    if n is not None and arr.shape[-1] != n:
        raise ValueError(f"{name}: expected {n} products in the last axis, got shape {arr.shape}")
    if (arr < 0).any():
        raise ValueError(f"{name}: expected non-negative demands, found {int((arr < 0).sum())} negative")
    return arr


def common_demand_rate(d: object, delta: float) -> float:
    """Empirical common-demand probability: the fraction of rounds with ``min_i d_{t,i} >= delta``."""
    arr = validate_demand(d)
    return float((arr.min(axis=-1) >= positive_float(delta, "delta")).mean())


class DemandProcess(abc.ABC):
    """Base class: ``n`` products and ``sample(T, rng) -> (T, n)``."""

    n: int

    @abc.abstractmethod
    def sample(self, horizon: int, rng: object = None) -> np.ndarray:
        """``(T, n)`` non-negative demands drawn with ``rng`` (a Generator, an int seed or None)."""


def _means(mean: object, name: str = "mean") -> np.ndarray:
    m = np.atleast_1d(np.asarray(mean, dtype=float))
    if m.ndim != 1 or not np.isfinite(m).all() or (m <= 0).any():
        raise ValueError(f"{name}: expected positive finite mean demands, got {mean!r}")
    return m


def _sigma(cv: object, allow_zero: bool = False) -> float:
    v = nonnegative_float(cv, "cv") if allow_zero else positive_float(cv, "cv")
    return float(np.sqrt(np.log1p(v**2)))


def _copula(rng: np.random.Generator, T: int, n: int, rho: float) -> np.ndarray:
    common = rng.standard_normal((T, 1))
    own = rng.standard_normal((T, n))
    return np.sqrt(rho) * common + np.sqrt(1.0 - rho) * own


@dataclass(frozen=True)
class CorrelatedLognormal(DemandProcess):
    """I.i.d. lognormal demand: means ``mean`` (n,), coefficient of variation ``cv``, log-correlation
    ``rho``."""

    mean: tuple[float, ...]
    cv: float = 0.5
    rho: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "mean", tuple(float(x) for x in _means(self.mean)))
        _sigma(self.cv)
        fraction(self.rho, "rho")

    @property
    def n(self) -> int:
        return len(self.mean)

    def mean_path(self, horizon: int) -> np.ndarray:
        return np.broadcast_to(np.asarray(self.mean), (positive_int(horizon, "horizon"), self.n))

    def sample(self, horizon: int, rng: object = None) -> np.ndarray:
        T = positive_int(horizon, "horizon")
        g = as_generator(rng)
        s = _sigma(self.cv)
        return self.mean_path(T) * np.exp(s * _copula(g, T, self.n, self.rho) - s * s / 2)

    def quantile(self, tau: np.ndarray, horizon: int) -> np.ndarray:
        """Per-round marginal ``tau``-quantiles (``tau`` broadcast to ``(T, n)``)."""
        s = _sigma(self.cv)
        return self.mean_path(horizon) * np.exp(s * ndtri(tau) - s * s / 2)


@dataclass(frozen=True)
class Seasonal(CorrelatedLognormal):
    """Lognormal demand around a seasonal mean ``m_i (1 + amplitude sin(2π t / period + φ_i))``."""

    amplitude: float = 0.5
    period: float = 365.0
    phases: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        fraction(self.amplitude, "amplitude", open_high=True)
        positive_float(self.period, "period")
        ph = np.zeros(self.n) if self.phases is None else np.asarray(self.phases, dtype=float)
        if ph.shape != (self.n,) or not np.isfinite(ph).all():
            raise ValueError(f"phases: expected {self.n} finite numbers, got {self.phases!r}")
        object.__setattr__(self, "phases", tuple(float(x) for x in ph))

    def mean_path(self, horizon: int) -> np.ndarray:
        T = positive_int(horizon, "horizon")
        t = np.arange(T)[:, None]
        return np.asarray(self.mean) * (
            1 + self.amplitude * np.sin(2 * np.pi * t / self.period + np.asarray(self.phases))
        )


@dataclass(frozen=True)
class RegimeSwitching(CorrelatedLognormal):
    """Lognormal demand whose mean switches between ``mean`` (low) and ``high`` ``switches`` times.

    Regime ``k`` (``k = 0..switches``) covers rounds ``[k T/(switches+1), (k+1) T/(switches+1))`` and has
    mean ``mean`` for even ``k``, ``high`` for odd ``k``.
    """

    high: tuple[float, ...] = ()
    switches: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        hi = _means(self.high, "high")
        if hi.shape != (self.n,):
            raise ValueError(f"high: expected {self.n} means, got {self.high!r}")
        object.__setattr__(self, "high", tuple(float(x) for x in hi))
        if isinstance(self.switches, bool) or not isinstance(self.switches, int) or self.switches < 0:
            raise ValueError(f"switches: expected an int >= 0, got {self.switches!r}")

    def regimes(self, horizon: int) -> np.ndarray:
        T = positive_int(horizon, "horizon")
        if self.switches >= T:
            raise ValueError(f"switches: expected fewer switches ({self.switches}) than rounds ({T})")
        return (np.arange(T) * (self.switches + 1)) // T

    def mean_path(self, horizon: int) -> np.ndarray:
        k = self.regimes(horizon)
        return np.where((k % 2 == 1)[:, None], np.asarray(self.high), np.asarray(self.mean))


@dataclass(frozen=True)
class Intermittent(DemandProcess):
    """Demand with common-demand probability ``p`` (see the module docstring for the generative model)."""

    n: int = 3
    p: float = 0.2
    delta: float = 1.0
    excess: float = 3.0
    cv: float = 0.5

    def __post_init__(self) -> None:
        positive_int(self.n, "n")
        p = fraction(self.p, "p")
        if p == 0.0:
            raise ValueError(
                "p: 0 means products never all sell in the same round (no common demand); on a coupled "
                "capacity set the implemented level could then never come down: pass p in (0, 1]"
            )
        positive_float(self.delta, "delta")
        positive_float(self.excess, "excess")
        _sigma(self.cv, allow_zero=True)

    def sample(self, horizon: int, rng: object = None) -> np.ndarray:
        T = positive_int(horizon, "horizon")
        g = as_generator(rng)
        s = _sigma(self.cv, allow_zero=True)
        size = self.delta + self.excess * np.exp(s * g.standard_normal((T, self.n)) - s * s / 2)
        common = g.random(T) < self.p
        miss = g.integers(0, self.n, size=T)
        sells = np.ones((T, self.n), dtype=bool)
        off = np.flatnonzero(~common)
        sells[off, miss[off]] = False  # a non-common round: one product has no demand
        return np.where(sells, size, 0.0)


class TableDemand(DemandProcess):
    """Replay a demand table ``(T, n)``: ``sample(T)`` returns its first ``T`` rows (``bootstrap=True``:
    ``T`` rows drawn with replacement from ``rng``)."""

    def __init__(self, table: object, bootstrap: bool = False) -> None:
        self.table = validate_demand(table, name="table")
        if self.table.ndim != 2:
            raise ValueError(f"table: expected shape (T, n), got {self.table.shape}")
        self.n = self.table.shape[1]
        self.bootstrap = bool(bootstrap)

    def sample(self, horizon: int, rng: object = None) -> np.ndarray:
        T = positive_int(horizon, "horizon")
        if self.bootstrap:
            return self.table[as_generator(rng).integers(0, self.table.shape[0], size=T)].copy()
        if T > self.table.shape[0]:
            raise ValueError(f"horizon: the table has {self.table.shape[0]} rounds, {T} were asked")
        return self.table[:T].copy()
