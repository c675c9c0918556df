"""Gaussian and Gaussian-mixture targets with exact scores of every noised marginal.

If ``X_0 ~ sum_k pi_k N(mu_k, Sigma_k)`` then ``X_t = sqrt(abar) X_0 + sqrt(1 - abar) Z`` is again a
mixture, ``sum_k pi_k N(sqrt(abar) mu_k, abar Sigma_k + (1 - abar) I)``, so the score
``s_t(x) = grad log q_t(x) = sum_k w_k(x) s_k(x)`` with ``s_k(x) = -Sigma_{k,t}^{-1} (x - mu_{k,t})`` and
posterior weights ``w_k(x)`` is closed form, and so is its Jacobian
``grad s_t = -sum_k w_k Sigma_{k,t}^{-1} + sum_k w_k s_k s_k^T - s_t s_t^T``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import logsumexp

from paperworks.core.validate import as_generator, finite_array, fraction, positive_int, probability_vector

__all__ = ["GaussianMixture", "axis_mixture", "gaussian", "mixture_1d"]


@dataclass(frozen=True, eq=False)
class GaussianMixture:
    """``sum_k weights[k] N(means[k], covs[k])`` on R^d.

    ``weights``: (K,) summing to 1; ``means``: (K, d); ``covs``: (K, d, d) symmetric positive definite,
    or (K,) variances of isotropic components ``var_k I``. Every method takes ``alpha_bar`` (default 1:
    the target itself) and works on the noised marginal ``q_t`` of ``X_t``.
    """

    weights: np.ndarray
    means: np.ndarray
    covs: np.ndarray
    _iso: np.ndarray | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        w = probability_vector(self.weights, "weights", atol=1e-9)
        if w.ndim != 1:
            raise ValueError(f"weights: expected shape (K,), got {w.shape}")
        if np.any(w <= 0):
            raise ValueError("weights: expected every weight > 0 (drop empty components)")
        mu = finite_array(self.means, "means", ndim=2)
        if mu.shape[0] != w.size:
            raise ValueError(f"means: expected {w.size} rows (one per weight), got shape {mu.shape}")
        d = mu.shape[1]
        c = finite_array(self.covs, "covs")
        iso = None
        if c.ndim == 1:
            if c.shape != (w.size,):
                raise ValueError(
                    f"covs: expected ({w.size},) variances or ({w.size}, {d}, {d}), got {c.shape}"
                )
            if np.any(c <= 0):
                raise ValueError(f"covs: expected positive variances, got min {c.min():.4g}")
            iso = c.astype(np.float64)
            c = iso[:, None, None] * np.eye(d)[None]
        elif c.shape != (w.size, d, d):
            raise ValueError(f"covs: expected shape ({w.size}, {d}, {d}) to match means, got {c.shape}")
        else:
            if not np.allclose(c, np.swapaxes(c, 1, 2), atol=1e-12, rtol=1e-10):
                raise ValueError("covs: expected symmetric matrices")
            for k in range(w.size):
                if np.linalg.eigvalsh(c[k]).min() <= 0:
                    raise ValueError(f"covs: expected positive definite matrices, covs[{k}] is not")
            eye = np.eye(d)
            v = c[:, 0, 0]
            if np.allclose(c, v[:, None, None] * eye[None], atol=0, rtol=0):
                iso = v.astype(np.float64)
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "means", mu.astype(np.float64))
        object.__setattr__(self, "covs", c.astype(np.float64))
        object.__setattr__(self, "_iso", iso)

    # -- basic facts ---------------------------------------------------------------------------------
    @property
    def d(self) -> int:
        return int(self.means.shape[1])

    @property
    def K(self) -> int:
        return int(self.weights.size)

    @property
    def isotropic(self) -> bool:
        """Every component covariance is a multiple of the identity."""
        return self._iso is not None

    def noised(self, alpha_bar: float) -> GaussianMixture:
        """The law of ``sqrt(alpha_bar) X_0 + sqrt(1 - alpha_bar) Z`` (again a mixture)."""
        ab = fraction(alpha_bar, "alpha_bar", open_low=True)
        if self._iso is not None:
            return GaussianMixture(self.weights, math.sqrt(ab) * self.means, ab * self._iso + (1 - ab))
        return GaussianMixture(
            self.weights, math.sqrt(ab) * self.means, ab * self.covs + (1 - ab) * np.eye(self.d)
        )

    def mean(self) -> np.ndarray:
        return self.weights @ self.means

    def covariance(self) -> np.ndarray:
        m = self.mean()
        dev = self.means - m
        return np.einsum("k,kij->ij", self.weights, self.covs) + np.einsum(
            "k,ki,kj->ij", self.weights, dev, dev
        )

    # -- densities and scores -----------------------------------------------------------------------
    def _check_x(self, x: object) -> np.ndarray:
        arr = finite_array(x, "x")
        if arr.ndim == 1 and self.d == 1:
            arr = arr[:, None]
        if arr.ndim != 2 or arr.shape[1] != self.d:
            raise ValueError(f"x: expected shape (n, {self.d}), got {arr.shape}")
        return arr

    def _parts(self, x: np.ndarray, ab: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(log pi_k N(x; mu_kt, S_kt) (n, K), component scores s_k (n, K, d), precisions (K, d, d) or
        (K,))."""
        mu = math.sqrt(ab) * self.means  # (K, d)
        diff = x[:, None, :] - mu[None]  # (n, K, d)
        d = self.d
        if self._iso is not None:
            v = ab * self._iso + (1 - ab)  # (K,)
            sq = np.einsum("nkd,nkd->nk", diff, diff)
            logp = np.log(self.weights) - 0.5 * (sq / v + d * np.log(2 * math.pi * v))
            return logp, -diff / v[None, :, None], 1.0 / v
        cov = ab * self.covs + (1 - ab) * np.eye(d)
        chol = np.linalg.cholesky(cov)  # (K, d, d)
        prec = np.linalg.inv(cov)
        logdet = 2 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
        sk = -np.einsum("kij,nkj->nki", prec, diff)
        sq = -np.einsum("nki,nki->nk", diff, sk)
        logp = np.log(self.weights) - 0.5 * (sq + logdet + d * math.log(2 * math.pi))
        return logp, sk, prec

    def log_density(self, x: object, alpha_bar: float = 1.0) -> np.ndarray:
        """``log q_t(x)``: x (n, d) -> (n,)."""
        x = self._check_x(x)
        ab = fraction(alpha_bar, "alpha_bar", open_low=True)
        logp, _, _ = self._parts(x, ab)
        return logsumexp(logp, axis=1)

    def posterior_weights(self, x: object, alpha_bar: float = 1.0) -> np.ndarray:
        """``P(component k | X_t = x)``: (n, K)."""
        x = self._check_x(x)
        logp, _, _ = self._parts(x, fraction(alpha_bar, "alpha_bar", open_low=True))
        return np.exp(logp - logsumexp(logp, axis=1, keepdims=True))

    def score(self, x: object, alpha_bar: float = 1.0) -> np.ndarray:
        """``grad_x log q_t(x)``: x (n, d) -> (n, d)."""
        x = self._check_x(x)
        logp, sk, _ = self._parts(x, fraction(alpha_bar, "alpha_bar", open_low=True))
        w = np.exp(logp - logsumexp(logp, axis=1, keepdims=True))
        return np.einsum("nk,nkd->nd", w, sk)

    def score_jacobian(self, x: object, alpha_bar: float = 1.0) -> np.ndarray:
        """``grad_x s_t(x)`` (the Hessian of ``log q_t``, symmetric): x (n, d) -> (n, d, d)."""
        x = self._check_x(x)
        logp, sk, prec = self._parts(x, fraction(alpha_bar, "alpha_bar", open_low=True))
        w = np.exp(logp - logsumexp(logp, axis=1, keepdims=True))
        s = np.einsum("nk,nkd->nd", w, sk)
        if prec.ndim == 1:
            jac = -(w @ prec)[:, None, None] * np.eye(self.d)[None]
        else:
            jac = -np.einsum("nk,kij->nij", w, prec)
        jac = jac + np.einsum("nk,nki,nkj->nij", w, sk, sk) - s[:, :, None] * s[:, None, :]
        return jac

    def sample(self, n: int, rng: object = None, alpha_bar: float = 1.0) -> np.ndarray:
        """``n`` draws of ``X_t`` (``alpha_bar=1``: the target): (n, d)."""
        n = positive_int(n, "n")
        gen = as_generator(rng)
        src = self if alpha_bar == 1.0 else self.noised(alpha_bar)
        k = gen.choice(src.K, size=n, p=src.weights)
        z = gen.standard_normal((n, src.d))
        if src._iso is not None:
            return src.means[k] + np.sqrt(src._iso[k])[:, None] * z
        out = np.empty_like(z)
        for j in range(src.K):
            rows = k == j
            out[rows] = src.means[j] + z[rows] @ np.linalg.cholesky(src.covs[j]).T
        return out


def gaussian(mean: object, cov: object) -> GaussianMixture:
    """``N(mean, cov)`` as a one-component mixture; ``cov`` (d, d), or a positive scalar (``cov I``)."""
    m = finite_array(mean, "mean", ndim=1)
    c = finite_array(cov, "cov")
    if c.ndim == 0:
        if not c > 0:
            raise ValueError(f"cov: expected a positive variance, got {float(c)}")
        return GaussianMixture(np.ones(1), m[None], np.array([float(c)]))
    if c.shape != (m.size, m.size):
        raise ValueError(f"cov: expected shape ({m.size}, {m.size}) to match mean, got {c.shape}")
    return GaussianMixture(np.ones(1), m[None], c[None])


def mixture_1d(weights: object, means: object, variances: object) -> GaussianMixture:
    """A 1-D mixture ``sum_k w_k N(m_k, v_k)`` (for product targets and grids)."""
    m = finite_array(means, "means", ndim=1)
    v = finite_array(variances, "variances", ndim=1)
    if v.shape != m.shape:
        raise ValueError(f"variances: expected shape {m.shape} to match means, got {v.shape}")
    if np.any(v <= 0):
        raise ValueError(f"variances: expected positive values, got min {v.min():.4g}")
    return GaussianMixture(weights, m[:, None], v)


def axis_mixture(d: int, m: float, var: float, weight: float = 0.5) -> GaussianMixture:
    """Two components ``N(+m u, var I)`` and ``N(-m u, var I)`` with ``u = e_1`` (any unit vector is
    equivalent: the forward noise is isotropic); ``weight`` is the mass of the ``+m u`` component."""
    d = positive_int(d, "d")
    w = fraction(weight, "weight", open_low=True, open_high=True)
    means = np.zeros((2, d))
    means[0, 0], means[1, 0] = m, -m
    return GaussianMixture(np.array([w, 1 - w]), means, np.array([var, var], dtype=float))
