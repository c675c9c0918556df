"""Step-size (noise) schedules: the Li-Yan-type schedule of the analysis, linear and cosine for contrast.

Notation (the paper's and Li and Yan's): forward steps ``X_t = sqrt(alpha_t) X_{t-1} + sqrt(1 - alpha_t)
W_t`` for ``t = 1..T``, ``beta_t = 1 - alpha_t`` and ``alpha_bar_t = prod_{i <= t} alpha_i``, so that
``X_t = sqrt(alpha_bar_t) X_0 + sqrt(1 - alpha_bar_t) Z``. Arrays are stored 0-based: ``betas[t - 1]``
is ``beta_t``. A :class:`Schedule` exports ``trained_betas`` for diffusers' schedulers (diffusers'
timestep ``i`` is our ``t = i + 1``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from paperworks.core.validate import finite_array, positive_float, positive_int

__all__ = ["Schedule", "cosine_schedule", "li_yan_schedule", "linear_schedule"]


@dataclass(frozen=True, eq=False)
class Schedule:
    """A noise schedule ``beta_1..beta_T`` (``T >= 2``, each in (0, 1)).

    ``betas``: shape ``(T,)``; ``name``: a label for tables. Derived arrays (all shape ``(T,)``, 0-based):
    ``alphas``, ``alpha_bars`` (strictly decreasing). Use :meth:`from_alpha_bars` to build one from
    ``alpha_bar_1 > ... > alpha_bar_T`` (non-monotone input is refused).
    """

    betas: np.ndarray
    name: str = "custom"
    alphas: np.ndarray = field(init=False, repr=False)
    alpha_bars: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        b = finite_array(self.betas, "betas", ndim=1)
        if b.size < 2:
            raise ValueError(f"betas: expected T >= 2 steps, got T = {b.size}")
        if not (np.all(b > 0) and np.all(b < 1)):
            raise ValueError(
                f"betas: expected every beta_t in (0, 1), got min {b.min():.4g}, max {b.max():.4g}"
            )
        b = b.astype(np.float64).copy()
        b.flags.writeable = False
        alphas = 1.0 - b
        alpha_bars = np.cumprod(alphas)
        for arr in (alphas, alpha_bars):
            arr.flags.writeable = False
        object.__setattr__(self, "betas", b)
        object.__setattr__(self, "alphas", alphas)
        object.__setattr__(self, "alpha_bars", alpha_bars)

    @classmethod
    def from_alpha_bars(cls, alpha_bars: object, name: str = "custom") -> Schedule:
        """The schedule with these ``alpha_bar_1 > ... > alpha_bar_T`` (each in (0, 1))."""
        ab = finite_array(alpha_bars, "alpha_bars", ndim=1)
        if ab.size < 2:
            raise ValueError(f"alpha_bars: expected T >= 2 values, got {ab.size}")
        if not (np.all(ab > 0) and np.all(ab < 1)):
            raise ValueError("alpha_bars: expected every value in (0, 1)")
        if np.any(np.diff(ab) >= 0):
            i = int(np.flatnonzero(np.diff(ab) >= 0)[0])
            raise ValueError(
                f"alpha_bars: expected a strictly decreasing sequence, got alpha_bar[{i + 1}] = "
                f"{ab[i]:.6g} <= alpha_bar[{i + 2}] = {ab[i + 1]:.6g}"
            )
        prev = np.concatenate([[1.0], ab[:-1]])
        return cls(1.0 - ab / prev, name=name)

    @property
    def T(self) -> int:
        return int(self.betas.size)

    def beta(self, t: int) -> float:
        """``beta_t`` for ``t`` in 1..T."""
        return float(self.betas[self._index(t)])

    def alpha_bar(self, t: int) -> float:
        """``alpha_bar_t`` for ``t`` in 0..T (``alpha_bar_0 = 1``)."""
        if t == 0:
            return 1.0
        return float(self.alpha_bars[self._index(t)])

    def trained_betas(self) -> list[float]:
        """The betas as a list, for ``diffusers.DDPMScheduler(trained_betas=...)``."""
        return [float(b) for b in self.betas]

    def _index(self, t: int) -> int:
        if isinstance(t, bool) or not isinstance(t, int | np.integer) or not 1 <= t <= self.T:
            raise ValueError(f"t: expected an int in 1..{self.T}, got {t!r}")
        return int(t) - 1

    def __repr__(self) -> str:
        return f"Schedule(name={self.name!r}, T={self.T}, alpha_bar_T={self.alpha_bars[-1]:.3g})"


def li_yan_schedule(T: int, c0: float = 2.0, c1: float = 5.0) -> Schedule:
    """The schedule of Li, Wei, Chen and Chi (2023) and Li and Yan (2024): our reading (see README).

    ``beta_1 = T^(-c0)``, ``beta_{t+1} = (c1 log T / T) min{beta_1 (1 + c1 log T / T)^t, 1}``: a
    geometric phase of about ``c0 T / c1`` steps (steps proportional to the noise level, uniform in
    ``log(1 - alpha_bar)``) followed by constant steps ``c1 log T / T``; ``alpha_bar_T`` is about
    ``T^(-(c1 - c0))``. Needs ``c1 log T / T < 1`` and ``c1 > c0`` (so the constant phase is reached).
    """
    T = positive_int(T, "T")
    if T < 2:
        raise ValueError(f"T: expected T >= 2, got {T}")
    c0 = positive_float(c0, "c0")
    c1 = positive_float(c1, "c1")
    if c1 <= c0:
        raise ValueError(f"c1: expected c1 > c0 = {c0:g} (else alpha_bar_T does not vanish), got {c1:g}")
    rate = c1 * math.log(T) / T
    if not rate < 1:
        raise ValueError(f"T: expected c1 log T / T < 1 (c1 = {c1:g}), got {rate:.3g} at T = {T}")
    t = np.arange(1, T)
    betas = np.empty(T)
    betas[0] = T ** (-c0)
    betas[1:] = rate * np.minimum(betas[0] * np.exp(t * math.log1p(rate)), 1.0)
    return Schedule(betas, name=f"li-yan(c0={c0:g}, c1={c1:g})")


def linear_schedule(
    T: int, beta_start: float = 1e-4, beta_end: float = 0.02, reference_T: int = 1000
) -> Schedule:
    """Ho et al. (2020)'s linear betas, rescaled to ``T`` steps (``beta * reference_T / T``, as in
    Nichol and Dhariwal 2021), so that ``alpha_bar_T`` stays about the same for every ``T``."""
    T = positive_int(T, "T")
    if T < 2:
        raise ValueError(f"T: expected T >= 2, got {T}")
    scale = positive_int(reference_T, "reference_T") / T
    lo, hi = positive_float(beta_start, "beta_start") * scale, positive_float(beta_end, "beta_end") * scale
    if not hi < 1:
        raise ValueError(
            f"T: the rescaled beta_end {hi:.3g} must be < 1; expected T > {beta_end * reference_T:g}"
        )
    return Schedule(np.linspace(lo, hi, T), name="linear")


def cosine_schedule(T: int, s: float = 0.008, max_beta: float = 0.999) -> Schedule:
    """Nichol and Dhariwal (2021): ``alpha_bar(t) = cos^2(((t/T + s)/(1 + s)) pi/2) / f(0)``, betas
    clipped at ``max_beta``."""
    T = positive_int(T, "T")
    if T < 2:
        raise ValueError(f"T: expected T >= 2, got {T}")
    s = positive_float(s, "s")
    max_beta = positive_float(max_beta, "max_beta")
    if not max_beta < 1:
        raise ValueError(f"max_beta: expected a number < 1, got {max_beta}")

    def f(u: np.ndarray) -> np.ndarray:
        return np.cos((u + s) / (1 + s) * math.pi / 2) ** 2

    u = np.arange(T + 1) / T
    ab = f(u) / f(np.zeros(1))
    betas = np.minimum(1 - ab[1:] / ab[:-1], max_beta)
    return Schedule(betas, name="cosine")
