"""Correlated cheap-estimator errors: a one-factor Gaussian model, its posterior and its value of information.

Model (issue 28: the cheap estimator's errors are correlated across specialists, because a hard
query is hard for all of them). For one query, the cheap belief is ``V = m + e`` with

    e_k = s_k (lambda_k Z_0 + sqrt(1 - lambda_k^2) Z_k),   Z_0, Z_1, ..., Z_K iid N(0, 1),     (C1)

so ``Var e_k = s_k^2`` and ``Corr(e_j, e_k) = lambda_j lambda_k`` (``j != k``): a common component
``a_k Z_0`` with loading ``a_k = s_k lambda_k`` plus an idiosyncratic one of variance
``d_k = s_k^2 (1 - lambda_k^2)``; ``Cov e = a a^T + diag(d)``. ``s`` and ``lambda`` may vary by
query. The expensive estimator reads ``Y_k = V_k + N(0, tau_k^2)``, independently per call.

Posterior after the readings of a set ``S`` (exact Gaussian conditioning). The common factor
``F = Z_0`` has posterior ``N(f, v)`` with

    1 / v = 1 + sum_{k in S} a_k^2 / (d_k + tau_k^2),
    f = v sum_{k in S} a_k (y_k - m_k) / (d_k + tau_k^2),                                       (C2)

and with ``w_k = d_k / (d_k + tau_k^2)`` the posterior means are

    mu_k = m_k + a_k f  (k not in S),      mu_k = (1 - w_k)(m_k + a_k f) + w_k y_k  (k in S).  (C3)

Posterior covariances: ``Cov(V_j, V_k) = b_j b_k v`` (``j != k``) with ``b_k = a_k`` for ``k`` not
read and ``(1 - w_k) a_k`` for ``k`` read; ``Var V_k = a_k^2 v + d_k`` for ``k`` not read.

Preposterior and value of information. Before ``Y_k`` is read, every posterior mean moves along one
line in the standardised innovation ``Z = (Y_k - mu_k) / sqrt(P_kk + tau_k^2)``:
``mu'_i = mu_i + P_ik Z / sqrt(P_kk + tau_k^2)`` (``P``: the current posterior covariance). The
difference of ``k`` and another option ``j`` is therefore ``N(mu_k - mu_j, sigma_kj^2)`` with

    sigma_kj = |P_kk - P_kj| / sqrt(P_kk + tau_k^2)     (P_kj = 0 for a fixed outside option),  (C4)

and reading ``k`` with ``j`` as the alternative is worth

    E[max(mu'_k, mu'_j)] - max(mu_k, mu_j) - c_k
        = sigma_kj G((mu_j - mu_k) / sigma_kj) - (mu_k - mu_j)^+ - c_k,                         (C5)

which is :func:`~.gaussian.value_of_information` with ``sigma_kj`` in place of the independent
preposterior std: Weitzman's reservation value ``r = mu_k + sigma_kj G^{-1}(c_k / sigma_kj)`` and
the band ``2 mu_k - r < mu_j < r`` carry over unchanged. With independent errors (``lambda = 0``)
``sigma_kj = s_k^2 / sqrt(s_k^2 + tau_k^2)``, eq. (2) of :mod:`.gaussian`. A common error moves
both estimates together and does not help to tell ``k`` from ``j``: ``P_kj > 0`` shrinks ``sigma_kj``.

With ``j`` the best other option, (C5) is a lower bound of the exact one-step value

    VOI_k = E[max_i mu'_i] - max_i mu_i - c_k,                                               (C6)

(the correlated "knowledge gradient" of Frazier, Powell and Dayanik 2009), because
``max(mu'_k, mu'_j) <= max_i mu'_i``; the two are equal when ``K = 2`` or when every other estimate
moves as ``j`` does. ``E[max_i mu'_i]`` is the expectation of the upper envelope of ``K`` (+1 for an
outside option) lines ``mu_i + beta_i Z`` in one standard normal, a finite sum of normal cdf and
pdf terms over the envelope's segments (:func:`expected_max_of_lines`). :func:`factor_one_step_gain`
computes it for the one-factor model, vectorised over queries and candidates (the Router's test);
:func:`correlated_value_of_information` for one query under any covariance (a second route, by the
convex hull of the lines, that the tests compare with Monte Carlo).
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from paperworks.core.validate import int_in_range

from ._validate import as_finite, as_nonneg, as_positive, as_value_or_neg_inf, per_specialist

__all__ = [
    "correlated_value_of_information",
    "expected_max_of_lines",
    "factor_one_step_gain",
    "factor_covariance",
    "factor_posterior",
    "pairwise_preposterior_std",
]

_INV_SQRT2PI = 1.0 / np.sqrt(2.0 * np.pi)


def check_loading(x: object, name: str, shape: tuple[int, int], *, broadcast: bool = True) -> np.ndarray:
    """Correlation loadings ``lambda`` ((K,) or (n, K)) with ``|lambda| < 1``."""
    lam = per_specialist(x, name, shape, broadcast=broadcast)
    if (np.abs(lam) >= 1).any():
        raise ValueError(
            f"{name}: expected loadings with |loading| < 1, got max |loading| {np.abs(lam).max():g}"
        )
    return lam


def factor_covariance(s: np.ndarray, loading: np.ndarray) -> np.ndarray:
    """``Cov e = diag(s) (lambda lambda^T + diag(1 - lambda^2)) diag(s)``, eq. (C1).

    ``s`` (> 0) and ``loading`` (``|lambda| < 1``): (K,) or (n, K) of one shape. Returns (K, K) or
    (n, K, K).
    """
    s = as_positive(s, "s")
    if s.ndim not in (1, 2):
        raise ValueError(f"s: expected shape (K,) or (n, K), got {s.shape}")
    shape = s.shape if s.ndim == 2 else (1, s.shape[0])
    lam = check_loading(loading, "loading", shape)
    if s.ndim == 1:
        lam = lam[0]
    a = s * lam
    cov = a[..., :, None] * a[..., None, :]
    idx = np.arange(s.shape[-1])
    cov[..., idx, idx] = s * s
    return cov


def factor_posterior(
    m: np.ndarray,
    s: np.ndarray,
    loading: np.ndarray,
    tau: np.ndarray,
    readings: np.ndarray,
    inspected: np.ndarray,
) -> np.ndarray:
    """Posterior means (n, K) of every specialist's value given the readings of the inspected ones, eq. (C3).

    ``m`` (n, K) cheap estimates; ``s`` (> 0), ``loading`` (``|lambda| < 1``) and ``tau`` (>= 0):
    (K,) or (n, K); ``readings`` (n, K) expensive readings (used where ``inspected``);
    ``inspected`` (n, K) bool. Uninspected specialists move too, through the common factor.
    """
    m = as_finite(m, "m", ndim=2)
    shape = m.shape
    s = per_specialist(s, "s", shape, kind="positive")
    lam = check_loading(loading, "loading", shape)
    tau = per_specialist(tau, "tau", shape, kind="nonneg")
    y = as_finite(readings, "readings", ndim=2)
    if y.shape != shape:
        raise ValueError(f"readings: expected shape {shape} (the shape of m), got {y.shape}")
    mask = np.asarray(inspected)
    if mask.dtype != bool or mask.shape != shape:
        raise ValueError(f"inspected: expected a bool array of shape {shape}, got {mask.dtype} {mask.shape}")
    return _posterior(m, s * lam, s * s * (1 - lam * lam), tau * tau, y, mask)


def _posterior(m, a, d, tau2, y, mask):
    """(C2)-(C3) on validated (n, K) arrays: ``a`` loadings, ``d`` idiosyncratic variances."""
    denom = d + tau2
    gain = np.where(mask, a / denom, 0.0)
    v = 1.0 / (1.0 + (gain * a).sum(axis=1))
    f = v * (gain * np.where(mask, y - m, 0.0)).sum(axis=1)
    blind = m + a * f[:, None]
    w = np.divide(d, denom, out=np.ones_like(d), where=denom > 0)
    return np.where(mask, (1 - w) * blind + w * y, blind)


def pairwise_preposterior_std(var_k: np.ndarray, cov_kj: np.ndarray, tau_k: np.ndarray) -> np.ndarray:
    """``sigma_kj = |P_kk - P_kj| / sqrt(P_kk + tau_k^2)``, eq. (C4), elementwise.

    ``var_k`` (> 0): current variance of ``V_k``; ``cov_kj``: its covariance with the alternative
    (0 for an outside option); ``tau_k`` (>= 0): the expensive estimator's noise std. One shape.
    """
    var_k = as_positive(var_k, "var_k")
    cov_kj = as_finite(cov_kj, "cov_kj")
    tau_k = as_nonneg(tau_k, "tau_k")
    for name, arr in (("cov_kj", cov_kj), ("tau_k", tau_k)):
        if arr.shape != var_k.shape:
            raise ValueError(f"{name}: expected shape {var_k.shape} (the shape of var_k), got {arr.shape}")
    return np.abs(var_k - cov_kj) / np.sqrt(var_k + tau_k * tau_k)


def expected_max_of_lines(intercept: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """``E[max_i (a_i + b_i Z)]`` for ``Z ~ N(0, 1)``, exactly, for a batch of line sets.

    ``intercept``, ``slope`` (..., L). Line ``i`` is the maximum on an interval ``[lo_i, hi_i]``
    (the intersection of the half-lines where it beats each other line; empty when a line of the
    same slope lies above it), so the expectation is
    ``sum_i a_i (Phi(hi_i) - Phi(lo_i)) + b_i (phi(lo_i) - phi(hi_i))``. O(L^2) per set.
    """
    a = np.asarray(intercept, dtype=np.float64)
    b = np.asarray(slope, dtype=np.float64)
    n_lines = a.shape[-1]
    dB = b[..., :, None] - b[..., None, :]  # [i, j] = b_i - b_j
    dA = a[..., None, :] - a[..., :, None]  # [i, j] = a_j - a_i
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        cross = dA / dB
    eye = np.eye(n_lines, dtype=bool)
    lo = np.where((dB > 0) & ~eye, cross, -np.inf).max(axis=-1)  # i beats flatter j from here on
    hi = np.where((dB < 0) & ~eye, cross, np.inf).min(axis=-1)  # and steeper j up to here
    idx = np.arange(n_lines)
    ahead = (dA > 0) | ((dA == 0) & (idx[None, :] < idx[:, None]))
    hidden = ((dB == 0) & ~eye & ahead).any(
        axis=-1
    )  # a line of the same slope lies above (ties: lower index)
    valid = (lo < hi) & ~hidden
    contrib = a * (ndtr(hi) - ndtr(lo)) + b * (_pdf(lo) - _pdf(hi))
    return np.where(valid, contrib, 0.0).sum(axis=-1)


def _split_top2(x: np.ndarray, largest: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Best, its index and second best along the last axis (max if ``largest`` else min)."""
    y = x if largest else -x
    arg = np.argmax(y, axis=-1)
    best = np.take_along_axis(y, arg[..., None], axis=-1)[..., 0]
    rest = y.copy()
    np.put_along_axis(rest, arg[..., None], -np.inf, axis=-1)
    second = rest.max(axis=-1)
    return (best, arg, second) if largest else (-best, arg, -second)


def factor_one_step_gain(
    mu: np.ndarray,
    coef: np.ndarray,
    outside: np.ndarray,
    beta: np.ndarray,
    gamma: np.ndarray,
    candidate: np.ndarray,
) -> np.ndarray:
    """``E[max_i mu'_i] - max_i mu_i`` of reading each candidate (eq. C6 before the cost), factor model.

    Per query (rows) the current posterior means ``mu`` (n, K) and factor coefficients ``coef``
    (n, K) (``b_i`` of C3), the outside value ``outside`` (n,) (``-inf``: none); per candidate ``k``
    the slope of its own mean ``beta`` (n, K) ``= P_kk / sqrt(P_kk + tau_k^2)`` and the scale
    ``gamma`` (n, K) ``= a_k v / sqrt(P_kk + tau_k^2)``, so that reading ``k`` moves every other
    mean by ``gamma_k b_i Z``. ``candidate`` (n, K) bool. Returns (n, K), NaN off the candidates.

    Exact, in O(K^2) per query for all its candidates together: in ``u = gamma_k Z`` the other
    options' lines ``mu_i + b_i u`` do not depend on ``k`` (except that ``k`` itself is left out),
    so every line's stretch of their upper envelope is found once per query, keeping the two
    tightest crossings of each line so that any one line can be dropped; each candidate then adds
    its own line ``mu_k + beta_k Z`` (O(K)). Rows are processed in chunks of bounded memory.
    """
    n, k_count = mu.shape
    out = np.full((n, k_count), np.nan)
    rows = np.flatnonzero(candidate.any(axis=1))
    chunk = max(1, int(1_000_000 // ((k_count + 1) ** 2)))
    for start in range(0, rows.size, chunk):
        r = rows[start : start + chunk]
        gain = _gain_rows(mu[r], coef[r], outside[r], beta[r], gamma[r])
        out[r] = np.where(candidate[r], gain, np.nan)
    return out


def _gain_rows(mu, coef, outside, beta, gamma):
    r, k_count = mu.shape
    n_lines = k_count + 1
    # lines in u-space: the K options (slope b_i) and the outside option (slope 0; -1e300 if none)
    A = np.concatenate([mu, np.where(np.isfinite(outside), outside, -1e300)[:, None]], axis=1)
    B = np.concatenate([coef, np.zeros((r, 1))], axis=1)
    dB = B[:, :, None] - B[:, None, :]  # [i, j] = B_i - B_j
    dA = A[:, None, :] - A[:, :, None]  # [i, j] = A_j - A_i
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        cross = dA / dB
    eye = np.eye(n_lines, dtype=bool)[None]
    L1, argL, L2 = _split_top2(np.where((dB > 0) & ~eye, cross, -np.inf), largest=True)
    U1, argU, U2 = _split_top2(np.where((dB < 0) & ~eye, cross, np.inf), largest=False)
    jj = np.arange(n_lines)
    ahead = (dA > 0) | ((dA == 0) & (jj[None, None, :] < jj[None, :, None]))
    hides = (dB == 0) & ~eye & ahead  # [i, j]: j, of the same slope, lies above i
    hidden_by = hides.sum(axis=2)
    del dB, dA, cross, ahead

    # per candidate k (axis 1) and other line i (axis 2): i's stretch of the others' envelope, in z
    ks = np.arange(k_count)[None, :, None]
    Lu = np.where(argL[:, None, :] == ks, L2[:, None, :], L1[:, None, :])
    Uu = np.where(argU[:, None, :] == ks, U2[:, None, :], U1[:, None, :])
    hidden = (hidden_by[:, None, :] - np.transpose(hides[:, :, :k_count], (0, 2, 1))) > 0
    g = gamma[:, :, None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lo = np.where(g > 0, Lu / g, Uu / g)
        hi = np.where(g > 0, Uu / g, Lu / g)
    # gamma = 0: the others do not move, and only the best of them (lowest index on ties) counts
    self_line = jj[None, None, :] == ks
    best_other = np.argmax(np.where(self_line, -np.inf, A[:, None, :]), axis=2)
    flat = g == 0
    is_best = jj[None, None, :] == best_other[:, :, None]
    lo = np.where(flat, np.where(is_best, -np.inf, np.inf), lo)
    hi = np.where(flat, np.where(is_best, np.inf, -np.inf), hi)
    hidden &= ~flat
    # ... where line i also stays above the candidate's own line mu_k + beta_k z (ties: i keeps it)
    slope_z = g * B[:, None, :]
    e = slope_z - beta[:, :, None]
    rhs = mu[:, :, None] - A[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t = rhs / e
    lo = np.where(e > 0, np.maximum(lo, t), lo)
    hi = np.where(e < 0, np.minimum(hi, t), hi)
    valid = (lo < hi) & ~hidden & ~((e == 0) & (rhs > 0)) & ~self_line
    # only the few segments of each envelope contribute: evaluate the normal cdf/pdf there alone
    w = np.nonzero(valid)
    lo_v, hi_v = lo[w], hi[w]
    seg = np.broadcast_to(A[:, None, :], valid.shape)[w] * (ndtr(hi_v) - ndtr(lo_v))
    seg += slope_z[w] * (_pdf(lo_v) - _pdf(hi_v))
    total = np.zeros(valid.shape[:2])
    np.add.at(total, (w[0], w[1]), seg)
    # the candidate's own line holds where it beats every other line (strictly, on ties): the same
    # crossings t seen from k, which is above line i where -e z >= -rhs
    lo_k = np.where(~self_line & (e < 0), t, -np.inf).max(axis=2)
    hi_k = np.where(~self_line & (e > 0), t, np.inf).min(axis=2)
    never = (~self_line & (e == 0) & (rhs <= 0)).any(axis=2)
    ok = (lo_k < hi_k) & ~never
    own = mu * (ndtr(hi_k) - ndtr(lo_k)) + beta * (_pdf(lo_k) - _pdf(hi_k))
    return total + np.where(ok, own, 0.0) - A.max(axis=1, keepdims=True)


def _expected_envelope(a: np.ndarray, b: np.ndarray) -> float:
    """``E[max_i (a_i + b_i Z)]`` for ``Z ~ N(0, 1)``, exactly: the upper envelope of the lines."""
    order = np.lexsort((a, b))  # by slope, then intercept
    a, b = a[order], b[order]
    keep = np.append(b[1:] != b[:-1], True)  # of equal slopes only the highest intercept matters
    a, b = a[keep], b[keep]
    hull: list[int] = []
    starts: list[float] = []  # z from which hull[i] is the maximum
    for i in range(a.size):
        start = -np.inf
        while hull:
            j = hull[-1]
            z = (a[j] - a[i]) / (b[i] - b[j])  # where line i overtakes line j
            if z <= starts[-1]:
                hull.pop()
                starts.pop()
                continue
            start = z
            break
        hull.append(i)
        starts.append(start)
    ends = [*starts[1:], np.inf]
    lo, hi = np.array(starts), np.array(ends)
    idx = np.array(hull)
    mass = ndtr(hi) - ndtr(lo)
    return float((a[idx] * mass + b[idx] * (_pdf(lo) - _pdf(hi))).sum())


def _pdf(z: np.ndarray) -> np.ndarray:
    """Standard normal density, 0 at +-inf."""
    zf = np.clip(np.where(np.isfinite(z), z, 40.0), -40.0, 40.0)  # phi(40) underflows to 0
    return np.exp(-0.5 * zf * zf) * _INV_SQRT2PI


def correlated_value_of_information(
    m: np.ndarray,
    cov: np.ndarray,
    tau: np.ndarray,
    k: int,
    cost: float,
    outside: float = -np.inf,
) -> float:
    """Exact one-step value of reading specialist ``k`` under correlated Gaussian beliefs.

    ``E[max(max_i mu'_i, outside)] - max(max_i m_i, outside) - cost`` where ``mu'`` is the
    posterior mean after ``Y_k = V_k + N(0, tau_k^2)`` and ``V ~ N(m, cov)``: the knowledge
    gradient of Frazier, Powell and Dayanik (2009), net of the reading's cost. ``m`` (K,), ``cov``
    (K, K) symmetric positive semi-definite, ``tau`` (K,) >= 0, ``cost`` >= 0, ``outside`` finite or
    ``-inf``. One query; a reference for the closed form (C5), which bounds it from below.
    """
    m = as_finite(m, "m", ndim=1)
    n_spec = m.shape[0]
    cov = as_finite(cov, "cov", ndim=2)
    if cov.shape != (n_spec, n_spec) or not np.allclose(cov, cov.T):
        raise ValueError(f"cov: expected a symmetric ({n_spec}, {n_spec}) matrix, got shape {cov.shape}")
    tau = as_nonneg(tau, "tau", ndim=1)
    if tau.shape != (n_spec,):
        raise ValueError(f"tau: expected shape ({n_spec},), got {tau.shape}")
    k = int_in_range(k, "k", 0, n_spec - 1)
    cost = float(as_nonneg(cost, "cost"))
    y = float(as_value_or_neg_inf(outside, "outside"))
    scale = cov[k, k] + tau[k] ** 2
    if scale <= 0:
        raise ValueError(f"cov: specialist {k} has zero variance and a noiseless reading; nothing to learn")
    slopes = cov[:, k] / np.sqrt(scale)
    a, b = m, slopes
    if np.isfinite(y):
        a, b = np.append(a, y), np.append(b, 0.0)
    return _expected_envelope(a, b) - float(a.max()) - cost
