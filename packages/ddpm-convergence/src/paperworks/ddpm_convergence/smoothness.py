"""A Monte Carlo proxy for the relaxed smoothness constant L, from the score's Jacobian.

The paper's condition is not public. Tweedie's formula gives ``(1 - abar_t) grad s_t(x) = -I +
(abar_t / (1 - abar_t)) Cov(X_0 | X_t = x)``, and the posterior covariance is what such analyses
control; our proxy is its normalised size,

    L_hat = max_t  E_{x ~ q_t} || I + (1 - abar_t) grad s_t(x) ||_op
          = max_t  E_{x ~ q_t} || (abar_t / (1 - abar_t)) Cov(X_0 | X_t = x) ||_op

(``grad s_t`` in closed form, :meth:`GaussianMixture.score_jacobian`; the matrix is positive
semi-definite, so the norm is its largest eigenvalue). For a Gaussian with covariance eigenvalues
``lam`` it is ``max abar lam / (abar lam + 1 - abar) <= 1`` (reached as ``t -> 1``); for the two-point
mixture ``N(+-m u, var I)`` the posterior uncertainty about the component adds
``(1 - abar) abar m^2 E sech^2(.) / v_t^2`` along ``u``, which grows like ``m^2``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from paperworks.core.validate import as_generator, positive_int

from .schedules import Schedule
from .targets import GaussianMixture

__all__ = ["SmoothnessProxy", "smoothness_proxy"]


@dataclass(frozen=True)
class SmoothnessProxy:
    """``value`` = max over the evaluated ``t`` of ``per_t`` (Monte Carlo means), its Monte Carlo
    standard error ``se`` at the maximising ``t``, and ``q99``: the max over ``t`` of the 99th
    percentile (a sup-like version: the posterior-covariance bump of a mixture sits in the
    low-density region between its modes, which the mean barely sees)."""

    value: float
    se: float
    q99: float
    t: np.ndarray
    per_t: np.ndarray


def _posterior_norms(target: GaussianMixture, x: np.ndarray, ab: float) -> np.ndarray:
    """``||I + (1 - abar) grad s_t(x)||_op`` per row of x, without d x d matrices when the components
    share one isotropic covariance (then the matrix is ``(1 - (1 - abar)/v) I + (1 - abar) C`` with
    ``C = sum_k w_k (s_k - s)(s_k - s)^T`` of rank < K, whose top eigenvalue a K x K Gram gives)."""
    if target.isotropic and np.allclose(target._iso, target._iso[0], rtol=0, atol=0):
        v = ab * float(target._iso[0]) + (1 - ab)
        mu = np.sqrt(ab) * target.means
        diff = x[:, None, :] - mu[None]
        logp = np.log(target.weights) - 0.5 * np.einsum("nkd,nkd->nk", diff, diff) / v
        w = np.exp(logp - logsumexp(logp, axis=1, keepdims=True))
        sk = -diff / v
        s = np.einsum("nk,nkd->nd", w, sk)
        a = np.sqrt(w)[:, :, None] * (sk - s[:, None, :])  # (n, K, d): C = A^T A
        gram = np.einsum("nkd,njd->nkj", a, a)
        top = np.linalg.eigvalsh(gram).max(axis=1)
        return (1 - (1 - ab) / v) + (1 - ab) * top
    m = np.eye(target.d)[None] + (1 - ab) * target.score_jacobian(x, ab)
    return np.linalg.eigvalsh(m).max(axis=1)


def smoothness_proxy(
    target: GaussianMixture,
    schedule: Schedule,
    n_mc: int = 2000,
    rng: object = None,
    n_times: int = 64,
) -> SmoothnessProxy:
    """``L_hat`` over ``n_times`` steps spread evenly in ``log(1 - abar_t)`` (``n_mc`` draws of ``X_t``
    each). ``rng``: a Generator or seed (the only randomness of this package's experiment)."""
    n_mc = positive_int(n_mc, "n_mc")
    n_times = positive_int(n_times, "n_times")
    gen = as_generator(rng)
    noise = np.log1p(-schedule.alpha_bars)
    levels = np.linspace(noise[0], noise[-1], min(n_times, schedule.T))
    ts = np.unique(np.clip(np.searchsorted(noise, levels), 0, schedule.T - 1)) + 1
    means, ses, q99 = [], [], []
    for t in ts:
        ab = schedule.alpha_bar(int(t))
        x = target.sample(n_mc, gen, alpha_bar=ab)
        vals = _posterior_norms(target, x, ab)
        means.append(float(vals.mean()))
        ses.append(float(vals.std(ddof=1) / np.sqrt(n_mc)) if n_mc > 1 else 0.0)
        q99.append(float(np.quantile(vals, 0.99)))
    i = int(np.argmax(means))
    return SmoothnessProxy(value=means[i], se=ses[i], q99=max(q99), t=ts, per_t=np.array(means))
