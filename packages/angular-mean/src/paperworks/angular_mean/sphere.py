"""Geometry of scoring directions on the unit sphere S^{d-1}.

A linear ranking rule depends on its scoring vector only through the direction, so rules live on
the sphere. With items whose pairwise differences have covariance proportional to ``cov``, the
relevant geometry is the sphere after the map theta -> L^T theta with cov = L L^T (Section 2 of our
reading: the agreement of two rules is a function of the angle in that metric).
"""

from __future__ import annotations

import numpy as np

from paperworks.core.validate import finite_array

from ._validation import check_cov, check_theta, check_voters

__all__ = ["angles", "exp_map", "from_sphere", "log_map", "to_sphere"]


def to_sphere(thetas: np.ndarray, cov: np.ndarray | None = None) -> np.ndarray:
    """Unit directions (n, d) of scoring vectors (n, d), in the metric of ``cov`` (None: identity)."""
    thetas = check_voters(thetas)
    cov = check_cov(cov, thetas.shape[1])
    if cov is not None:
        thetas = thetas @ np.linalg.cholesky(cov)  # rows L^T theta
    return thetas / np.linalg.norm(thetas, axis=1, keepdims=True)


def from_sphere(t: np.ndarray, cov: np.ndarray | None = None) -> np.ndarray:
    """Scoring vector (d,) whose direction in the metric of ``cov`` is the unit vector ``t`` (d,)."""
    t = check_theta(t, name="t")
    cov = check_cov(cov, t.shape[0])
    if cov is None:
        return t / np.linalg.norm(t)
    theta = np.linalg.solve(np.linalg.cholesky(cov).T, t)
    return theta / np.linalg.norm(theta)


def angles(theta: np.ndarray, thetas: np.ndarray, cov: np.ndarray | None = None) -> np.ndarray:
    """Angles (n,) in [0, pi] between ``theta`` (d,) and each row of ``thetas`` (n, d)."""
    thetas = check_voters(thetas)
    theta = check_theta(theta, thetas.shape[1])
    u = to_sphere(thetas, cov)
    t = to_sphere(theta[None, :], cov)[0]
    return np.arccos(np.clip(u @ t, -1.0, 1.0))


def _unit_rows(x: object, name: str, d: int | None = None) -> np.ndarray:
    """Rows (S, d) of unit vectors: finite, 2-d, non-empty, each of norm 1 within 1e-6."""
    arr = finite_array(x, name, allow_empty=True)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name}: expected a non-empty 2-d array of unit rows (S, d), got shape {arr.shape}")
    if d is not None and arr.shape[1] != d:
        raise ValueError(f"{name}: expected rows of dimension d={d}, got {arr.shape[1]}")
    bad = np.flatnonzero(np.abs(np.linalg.norm(arr, axis=1) - 1.0) > 1e-6)
    if bad.size:
        raise ValueError(f"{name}: expected unit vectors, row(s) {bad[:5].tolist()} are not of norm 1")
    return arr


def log_map(t: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Riemannian log at the unit points ``t`` (S, d) of the unit points ``u`` (n, d).

    Returns (tangent vectors (S, n, d), geodesic distances (S, n)). At the cut locus (antipodal
    points, a null set) the log is not defined; there the tangent vector is set to 0.
    """
    t = _unit_rows(t, "t")
    u = _unit_rows(u, "u", t.shape[1])
    cos = np.clip(t @ u.T, -1.0, 1.0)  # (S, n)
    phi = np.arccos(cos)
    v = u[None, :, :] - cos[:, :, None] * t[:, None, :]
    sin = np.sqrt(np.maximum(1.0 - cos**2, 0.0))
    scale = np.where(sin > 1e-12, phi / np.maximum(sin, 1e-300), np.where(cos > 0, 1.0, 0.0))
    return v * scale[:, :, None], phi


def exp_map(t: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Riemannian exp at the unit points ``t`` (S, d) of tangent vectors ``g`` (S, d)."""
    t = _unit_rows(t, "t")
    g = finite_array(g, "g", allow_empty=True)
    if g.shape != t.shape:
        raise ValueError(f"g: expected shape {t.shape} (one tangent vector per point of t), got {g.shape}")
    return _exp(t, g)


def _exp(t: np.ndarray, g: np.ndarray) -> np.ndarray:
    s = np.linalg.norm(g, axis=1, keepdims=True)
    safe = np.where(s > 0, s, 1.0)
    out = np.cos(s) * t + np.sin(s) * g / safe
    return out / np.linalg.norm(out, axis=1, keepdims=True)
