"""Exact output laws of DDPM and DDIM with exact scores, and the KL and TV they give.

Three families, none estimated by sampling:

1. **Gaussian targets** ``N(mu, Sigma)`` (any d): the score is affine, so the sampler is a linear
   recursion and ``Y_1`` is Gaussian; we propagate its mean and covariance in the eigenbasis of
   ``Sigma`` (every matrix of the recursion is a function of ``Sigma``) and take the closed-form KL.
2. **1-D mixtures** on a uniform grid: each step is the push-forward of the density through the
   monotone map ``y -> a_t y + b_t s_t(y)`` (Newton-inverted, density interpolated by an 8-point
   Lagrange stencil, divided by the map's derivative) followed, for DDPM, by the convolution with
   ``N(0, sigma_t^2)`` done exactly on the grid's trigonometric interpolant (FFT, zero-padded). A step
   that contracts strongly (slope < 1/2, e.g. the cosine schedule's last ``beta_T = 0.999``) is done by
   direct quadrature of ``int p(x) N(y; f(x), sigma_t^2) dx`` instead, whose kernel is then resolved.
   **Product targets** (each coordinate the same 1-D law) factorise: ``KL_d = d KL_1``.
3. **Two-component (collinear) mixtures with a shared isotropic covariance** ``var I``: the score's
   component along the mean direction ``u`` depends only on ``u . x`` and the rest is the Gaussian
   score ``-x_perp / v_t``, so ``Y_1`` is (the 1-D grid law along u) x (an exact Gaussian on the
   complement); KL adds, TV is a 2-D integral over ``(u . x, |x_perp|^2)``.

KL is ``KL(q_1 || p_1)`` (target ``X_1`` first, as in the analyses), TV is ``sup_A |q_1(A) - p_1(A)|``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from paperworks.core.validate import finite_array, int_in_range, one_of, positive_float

from .samplers import METHODS, step_coefficients
from .schedules import Schedule
from .targets import GaussianMixture

__all__ = [
    "AxisMixtureLaw",
    "GaussianLaw",
    "GridLaw",
    "axis_mixture_law",
    "gaussian_kl",
    "gaussian_output_law",
    "grid_law",
    "grid_size",
    "product_kl",
    "steps_for_tv",
]


def _x_minus_log1p(delta: np.ndarray) -> np.ndarray:
    """``delta - log(1 + delta)`` without cancellation for small ``delta`` (>= 0 for delta > -1)."""
    delta = np.asarray(delta, dtype=float)
    small = np.abs(delta) < 1e-3
    series = delta**2 * (0.5 - delta / 3 + delta**2 / 4 - delta**3 / 5)
    with np.errstate(invalid="ignore", divide="ignore"):
        direct = delta - np.log1p(delta)
    return np.where(small, series, direct)


def gaussian_kl(mean_p: object, cov_p: object, mean_q: object, cov_q: object) -> float:
    """``KL(N(mean_p, cov_p) || N(mean_q, cov_q))`` in nats (full covariances (d, d))."""
    mp, mq = finite_array(mean_p, "mean_p", ndim=1), finite_array(mean_q, "mean_q", ndim=1)
    d = mp.size
    cp = finite_array(cov_p, "cov_p", shape=(d, d))
    cq = finite_array(cov_q, "cov_q", shape=(d, d))
    if mq.size != d:
        raise ValueError(f"mean_q: expected shape ({d},) to match mean_p, got {mq.shape}")
    for name, c in (("cov_p", cp), ("cov_q", cq)):
        if np.linalg.eigvalsh((c + c.T) / 2).min() <= 0:
            raise ValueError(f"{name}: expected a positive definite matrix")
    lq = np.linalg.cholesky(cq)
    # eigenvalues of cq^{-1/2} cp cq^{-T/2}: KL = 1/2 sum (lam - 1 - log lam) + 1/2 |cq^{-1/2}(mq - mp)|^2
    a = np.linalg.solve(lq, np.linalg.solve(lq, cp).T)
    lam = np.linalg.eigvalsh((a + a.T) / 2)
    z = np.linalg.solve(lq, mq - mp)
    return float(0.5 * _x_minus_log1p(lam - 1).sum() + 0.5 * z @ z)


# ------------------------------------------------------------------------------------ 1. Gaussian


@dataclass(frozen=True)
class GaussianLaw:
    """``Y_1 ~ N(mean, cov)`` and the target ``X_1 ~ N(target_mean, target_cov)``; ``kl`` is
    ``KL(target || output)``, computed coordinate-wise in the shared eigenbasis (stable for tiny KL)."""

    mean: np.ndarray
    cov: np.ndarray
    target_mean: np.ndarray
    target_cov: np.ndarray
    kl: float
    kl_per_direction: np.ndarray


def _gaussian_recursion(
    lam: np.ndarray, mt: np.ndarray, schedule: Schedule, method: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per eigen-direction: output mean, variance, target mean, variance at t = 1."""
    m = np.zeros_like(mt)
    v = np.ones_like(lam)
    for t in range(schedule.T, 1, -1):
        a, b, sigma = step_coefficients(schedule, t, method)
        ab = schedule.alpha_bar(t)
        lt = ab * lam + (1 - ab)
        c = a - b / lt
        m = c * m + b * math.sqrt(ab) * mt / lt
        v = c * c * v + sigma * sigma
    ab1 = schedule.alpha_bar(1)
    return m, v, math.sqrt(ab1) * mt, ab1 * lam + (1 - ab1)


def gaussian_output_law(target: GaussianMixture, schedule: Schedule, method: str = "ddpm") -> GaussianLaw:
    """The exact law of ``Y_1`` for a Gaussian target (a one-component :class:`GaussianMixture`)."""
    method = one_of(method, "method", METHODS)
    if not isinstance(target, GaussianMixture) or target.K != 1:
        raise ValueError("target: expected a Gaussian (a GaussianMixture with one component)")
    lam, q = np.linalg.eigh(target.covs[0])
    mt = q.T @ target.means[0]
    m, v, tm, tv = _gaussian_recursion(lam, mt, schedule, method)
    per = 0.5 * (_x_minus_log1p(tv / v - 1) + (m - tm) ** 2 / v)
    return GaussianLaw(
        mean=q @ m,
        cov=(q * v) @ q.T,
        target_mean=q @ tm,
        target_cov=(q * tv) @ q.T,
        kl=float(per.sum()),
        kl_per_direction=per,
    )


# --------------------------------------------------------------------------------------- 2. grids

_STENCIL = 8  # Lagrange points per interpolation (degree 7)
_NEWTON = 2  # Newton steps after the piecewise-linear inverse (error ~ h^8 after two)


def _check_1d(target: GaussianMixture, name: str = "target") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not isinstance(target, GaussianMixture) or target.d != 1:
        d = getattr(target, "d", None)
        raise ValueError(f"{name}: expected a 1-D GaussianMixture (see mixture_1d), got dimension {d}")
    return target.weights, target.means[:, 0], target.covs[:, 0, 0]


def grid_size(target: GaussianMixture, schedule: Schedule, tol: float = 1e-9) -> tuple[float, float, int]:
    """``(lo, hi, n)``: the uniform grid that resolves a 1-D target and the ``N(0, 1)`` start to
    relative density accuracy about ``tol`` after ``T`` steps.

    Half-width: every component (at t = 1) and ``N(0, 1)`` covered to ``sqrt(2 log(1/tol)) + 2``
    standard deviations; spacing ``h <= sigma_min (100 tol / T)^(1/8)`` (the 8-point interpolation
    error per step, about ``0.01 (h / sigma)^8``), with ``sigma_min`` the narrowest component at t = 1.
    """
    _, mu, var = _check_1d(target)
    tol = positive_float(tol, "tol")
    if not tol < 1:
        raise ValueError(f"tol: expected a number in (0, 1), got {tol}")
    ab1 = schedule.alpha_bar(1)
    sd1 = np.sqrt(ab1 * var + 1 - ab1)
    reach = math.sqrt(2 * math.log(1 / tol)) + 2
    lo = min(-reach, float(np.min(math.sqrt(ab1) * mu - reach * sd1)))
    hi = max(reach, float(np.max(math.sqrt(ab1) * mu + reach * sd1)))
    sigma_min = min(1.0, float(sd1.min()))
    h = sigma_min * min(0.25, (100 * tol / schedule.T) ** (1 / 8))
    n = math.ceil((hi - lo) / h) + 1
    return lo, hi, n


@dataclass(frozen=True)
class GridLaw:
    """A 1-D output density ``p`` and the target density ``q`` (of ``X_1``) on the grid ``x``."""

    x: np.ndarray
    p: np.ndarray
    q: np.ndarray

    @property
    def dx(self) -> float:
        return float(self.x[1] - self.x[0])

    @property
    def kl(self) -> float:
        """``KL(q || p)`` by the grid's quadrature (cells where q is below 1e-300 skipped)."""
        q, p = self.q, np.maximum(self.p, 1e-300)
        mask = q > 1e-300
        return float(np.sum(q[mask] * np.log(q[mask] / p[mask])) * self.dx)

    @property
    def tv(self) -> float:
        return float(0.5 * np.abs(self.p - self.q).sum() * self.dx)

    @property
    def mass(self) -> float:
        return float(self.p.sum() * self.dx)


def _score_1d(
    y: np.ndarray, w: np.ndarray, mu: np.ndarray, var: np.ndarray, ab: float
) -> tuple[np.ndarray, np.ndarray]:
    """Score and its derivative of the noised 1-D mixture at points ``y`` (no input checks: hot path)."""
    mt = math.sqrt(ab) * mu
    vt = ab * var + (1 - ab)
    dev = y[:, None] - mt[None]
    logp = np.log(w) - 0.5 * dev**2 / vt - 0.5 * np.log(vt)
    logp -= logp.max(axis=1, keepdims=True)
    pk = np.exp(logp)
    pk /= pk.sum(axis=1, keepdims=True)
    sk = -dev / vt
    s = (pk * sk).sum(axis=1)
    ds = (pk * (sk * sk - 1 / vt)).sum(axis=1) - s * s
    return s, ds


def _lagrange(p: np.ndarray, lo: float, h: float, xq: np.ndarray) -> np.ndarray:
    """Values at ``xq`` of the 8-point Lagrange interpolant of the grid values ``p`` (0 off the grid)."""
    n = p.size
    u = (xq - lo) / h
    inside = (u >= 0) & (u <= n - 1)
    base = np.clip(np.floor(u).astype(np.int64) - (_STENCIL // 2 - 1), 0, n - _STENCIL)
    off = u - base  # in [3, 4] away from the edges: the stencil is centred
    out = np.zeros_like(xq)
    for k in range(_STENCIL):
        wk = np.ones_like(xq)
        for j in range(_STENCIL):
            if j != k:
                wk *= (off - j) / (k - j)
        out += wk * p[base + k]
    return np.where(inside, out, 0.0)


def _gauss_convolve(p: np.ndarray, h: float, var: float, pad: int) -> np.ndarray:
    """Convolution with ``N(0, var)`` of the grid function ``p`` (trigonometric interpolant, zero-padded)."""
    if var == 0:
        return p
    n = p.size
    spec = np.fft.rfft(p, pad)
    omega = 2 * math.pi * np.fft.rfftfreq(pad, d=h)
    out = np.fft.irfft(spec * np.exp(-0.5 * var * omega**2), pad)[:n]
    return out


def grid_law(
    target: GaussianMixture,
    schedule: Schedule,
    method: str = "ddpm",
    *,
    n_grid: int | None = None,
    tol: float = 1e-9,
) -> GridLaw:
    """The output density of the sampler on a 1-D mixture target, on a uniform grid.

    ``n_grid``: grid points (default: :func:`grid_size` for ``tol``); a grid coarser than that
    raises with the size needed. Each step is exact up to the grid's interpolation error (module doc).
    """
    method = one_of(method, "method", METHODS)
    w, mu, var = _check_1d(target)
    lo, hi, needed = grid_size(target, schedule, tol)
    if n_grid is None:
        n = needed
    else:
        n = int_in_range(n_grid, "n_grid", 16)
        if n < needed:
            raise ValueError(
                f"n_grid: expected >= {needed} points on [{lo:.3g}, {hi:.3g}] for tol = {tol:g} at T = "
                f"{schedule.T} (narrowest component needs that spacing), got {n}"
            )
    x = np.linspace(lo, hi, n)
    h = float(x[1] - x[0])
    pad = 1 << math.ceil(math.log2(2 * n))
    p = np.exp(-0.5 * x**2) / math.sqrt(2 * math.pi)
    for t in range(schedule.T, 1, -1):
        a, b, sigma = step_coefficients(schedule, t, method)
        ab = schedule.alpha_bar(t)
        s, ds = _score_1d(x, w, mu, var, ab)
        fx = a * x + b * s
        dfx = a + b * ds
        if not (np.all(dfx > 0) and np.all(np.diff(fx) > 0)):
            raise ValueError(
                f"schedule: the step map at t = {t} is not monotone on the grid (min slope {dfx.min():.3g}); "
                "steps this large leave the grid method's assumptions"
            )
        if dfx.min() < 0.5:  # a strong contraction: the push-forward would be narrower than the grid
            if sigma < 4 * h * dfx.max():
                raise ValueError(
                    f"schedule: step t = {t} contracts the density (slope {dfx.min():.3g}) with too little "
                    f"noise ({sigma:.3g}) for a grid of spacing {h:.3g}; use a finer grid (n_grid)"
                )
            # direct quadrature of p'(y) = int p(x) N(y; f(x), sigma^2) dx: the kernel is resolved in x
            z = (x[:, None] - fx[None, :]) / sigma
            p = (np.exp(-0.5 * z * z) @ p) * h / (sigma * math.sqrt(2 * math.pi))
            continue
        inside = (x >= fx[0]) & (x <= fx[-1])
        g = np.interp(x, fx, x)
        for _ in range(_NEWTON):  # Newton on f(g) = x from the piecewise-linear inverse
            sg, dsg = _score_1d(g, w, mu, var, ab)
            g = g - (a * g + b * sg - x) / (a + b * dsg)
        _, dsg = _score_1d(g, w, mu, var, ab)
        pf = np.where(inside, _lagrange(p, lo, h, g) / (a + b * dsg), 0.0)
        p = _gauss_convolve(pf, h, sigma * sigma, pad)
    ab1 = schedule.alpha_bar(1)
    q = np.exp(target.noised(ab1).log_density(x[:, None]))
    return GridLaw(x=x, p=p, q=q)


def product_kl(
    factor: GaussianMixture,
    d: int,
    schedule: Schedule,
    method: str = "ddpm",
    *,
    n_grid: int | None = None,
    tol: float = 1e-9,
) -> float:
    """KL for the product target ``factor^{(x) d}``: the sampler factorises, so ``KL_d = d KL_1``."""
    d = int_in_range(d, "d", 1)
    return d * grid_law(factor, schedule, method, n_grid=n_grid, tol=tol).kl


# --------------------------------------------------------------------- 3. mixtures along one axis


@dataclass(frozen=True)
class AxisMixtureLaw:
    """The output law of a collinear isotropic mixture: ``along`` (the 1-D grid law of ``u . Y_1``)
    and the complement ``N(perp_mean, perp_var I_{d-1})`` against the target's ``N(target_perp_mean,
    target_perp_var I_{d-1})``; ``d`` the dimension."""

    along: GridLaw
    perp_var: float
    target_perp_var: float
    d: int

    @property
    def kl_along(self) -> float:
        return self.along.kl

    @property
    def kl_per_perp_direction(self) -> float:
        """KL of one direction of the Gaussian complement (defined for d = 1 too)."""
        return float(0.5 * _x_minus_log1p(np.array(self.target_perp_var / self.perp_var - 1)))

    @property
    def kl_perp(self) -> float:
        """KL of the Gaussian complement (d - 1 identical directions)."""
        return (self.d - 1) * self.kl_per_perp_direction

    @property
    def kl(self) -> float:
        return self.kl_along + self.kl_perp

    def tv(self, n_radial: int = 1500) -> float:
        """Total variation of the joint law: a 2-D integral over ``(u . x, r = |x_perp|^2)``, where the
        complement's density of ``r`` is a scaled chi-square with ``d - 1`` degrees of freedom."""
        if self.d == 1:
            return self.along.tv
        k = self.d - 1
        n_radial = int_in_range(n_radial, "n_radial", 64)
        v_lo, v_hi = sorted((self.perp_var, self.target_perp_var))
        r = np.linspace(stats.chi2.ppf(1e-14, k) * v_lo, stats.chi2.isf(1e-14, k) * v_hi, n_radial)
        dr = float(r[1] - r[0])
        fp = stats.chi2.pdf(r / self.perp_var, k) / self.perp_var
        fq = stats.chi2.pdf(r / self.target_perp_var, k) / self.target_perp_var
        total = 0.0
        p, q = self.along.p, self.along.q
        for i in range(0, p.size, 512):
            block = np.abs(np.outer(p[i : i + 512], fp) - np.outer(q[i : i + 512], fq))
            total += float(block.sum())
        return 0.5 * total * self.along.dx * dr


def axis_mixture_law(
    target: GaussianMixture,
    schedule: Schedule,
    method: str = "ddpm",
    *,
    n_grid: int | None = None,
    tol: float = 1e-9,
) -> AxisMixtureLaw:
    """The exact output law for a mixture whose components share one isotropic covariance ``var I``
    and whose means lie on one line through the origin (e.g. :func:`axis_mixture`)."""
    method = one_of(method, "method", METHODS)
    if not isinstance(target, GaussianMixture) or not target.isotropic:
        raise ValueError("target: expected a GaussianMixture with isotropic component covariances")
    var = target._iso
    if not np.allclose(var, var[0], rtol=0, atol=0):
        raise ValueError("target: expected one shared variance for every component (var I)")
    means = target.means
    norms = np.linalg.norm(means, axis=1)
    if norms.max() == 0:
        u = np.eye(target.d)[0]
    else:
        u = means[int(np.argmax(norms))] / norms.max()
    along = means @ u
    if not np.allclose(means, along[:, None] * u[None], atol=1e-12 * max(1.0, norms.max())):
        raise ValueError("target: expected every component mean on one line through the origin")
    from .targets import mixture_1d

    law = grid_law(mixture_1d(target.weights, along, var), schedule, method, n_grid=n_grid, tol=tol)
    lam = np.array([float(var[0])])
    _, v, _, tv = _gaussian_recursion(lam, np.zeros(1), schedule, method)
    return AxisMixtureLaw(along=law, perp_var=float(v[0]), target_perp_var=float(tv[0]), d=target.d)


# ------------------------------------------------------------------------------ steps for a TV level


def steps_for_tv(
    eps: float, tv_at: Callable[[int], float], T_lo: int = 8, T_hi: int = 1 << 15
) -> tuple[int, float]:
    """The smallest ``T`` in ``[T_lo, T_hi]`` with ``tv_at(T) <= eps`` (bisection: assumes TV
    decreases in T), and its TV. Raises when even ``T_hi`` misses ``eps``."""
    eps = positive_float(eps, "eps")
    T_lo = int_in_range(T_lo, "T_lo", 2)
    T_hi = int_in_range(T_hi, "T_hi", T_lo)
    cache: dict[int, float] = {}

    def tv(T: int) -> float:
        if T not in cache:
            cache[T] = float(tv_at(T))
        return cache[T]

    if tv(T_lo) <= eps:
        return T_lo, tv(T_lo)
    lo = hi = T_lo
    while tv(hi) > eps:
        if hi >= T_hi:
            raise ValueError(f"eps: TV {tv(hi):.3g} at T = {hi} is still above eps = {eps:g} (T_hi = {T_hi})")
        lo, hi = hi, min(2 * hi, T_hi)
    while hi - lo > 1:  # invariant: tv(lo) > eps >= tv(hi)
        mid = (lo + hi) // 2
        if tv(mid) <= eps:
            hi = mid
        else:
            lo = mid
    return hi, tv(hi)
