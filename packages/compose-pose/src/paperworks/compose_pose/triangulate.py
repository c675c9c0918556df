"""Confidence-weighted DLT triangulation of whole skeletons, batched, and reprojection errors.

For joint j seen in views v with undistorted pixel (u, w) and confidence c, each view gives two rows
``c (u p3 - p1)`` and ``c (w p3 - p2)`` of a homogeneous system ``A X = 0`` (Hartley and Zisserman,
sec. 12.2); X is the right singular vector of A with the smallest singular value. Rows are
normalised before weighting so that the weight is the confidence, not the pixel scale.
:func:`robust_triangulate` drops joint-views with residuals over ``outlier_px`` and solves again, and
scores a skeleton by its confidence-weighted mean residual truncated at ``outlier_px``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["reprojection_error", "residuals", "robust_triangulate", "triangulate", "triangulate_batch"]


def triangulate_batch(P: np.ndarray, uv: np.ndarray, conf: np.ndarray) -> np.ndarray:
    """Triangulate B skeletons at once.

    Args:
        P: projection matrices (B, k, 3, 4) of the k views of each skeleton.
        uv: undistorted pixels (B, k, J, 2).
        conf: confidences (B, k, J) in [0, 1]; a joint needs weight in >= 2 views (else NaN).

    Returns:
        World points (B, J, 3); NaN where a joint has positive confidence in fewer than 2 views.
    """
    P = np.asarray(P, dtype=float)
    uv = np.asarray(uv, dtype=float)
    conf = np.asarray(conf, dtype=float)
    B, k, J = conf.shape
    # rows (B, J, k, 2, 4): u p3 - p1 and w p3 - p2
    p1, p2, p3 = P[:, :, None, 0, :], P[:, :, None, 1, :], P[:, :, None, 2, :]
    r1 = uv[..., 0:1] * p3 - p1
    r2 = uv[..., 1:2] * p3 - p2
    rows = np.stack([r1, r2], axis=3)  # (B, k, J, 2, 4)
    rows = rows / np.maximum(np.linalg.norm(rows, axis=-1, keepdims=True), 1e-12)
    rows = rows * conf[..., None, None]
    A = rows.transpose(0, 2, 1, 3, 4).reshape(B, J, 2 * k, 4)
    _, _, vt = np.linalg.svd(A)
    Xh = vt[..., -1, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        X = Xh[..., :3] / Xh[..., 3:4]
    enough = (conf > 0).sum(axis=1) >= 2  # (B, J)
    X[~enough] = np.nan
    return X


def triangulate(P: np.ndarray, uv: np.ndarray, conf: np.ndarray | None = None) -> np.ndarray:
    """One skeleton from k views: P (k, 3, 4), uv (k, J, 2), conf (k, J) (None: all 1) -> X (J, 3)."""
    uv = np.asarray(uv, dtype=float)
    if conf is None:
        conf = np.ones(uv.shape[:2])
    return triangulate_batch(np.asarray(P)[None], uv[None], np.asarray(conf)[None])[0]


def residuals(P: np.ndarray, uv: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Pixel distance (B, k, J) between ``uv`` (B, k, J, 2) and the projections of X (B, J, 3) by P
    (B, k, 3, 4); +inf for a point behind the camera, NaN for a joint that was not triangulated."""
    Xh = np.concatenate([X, np.ones((*X.shape[:-1], 1))], -1)
    proj = np.einsum("bkrc,bjc->bkjr", P, Xh)
    with np.errstate(divide="ignore", invalid="ignore"):
        pix = proj[..., :2] / proj[..., 2:3]
        dist = np.linalg.norm(pix - uv, axis=-1)
    dist = np.where(np.isfinite(dist) & (proj[..., 2] > 0), dist, np.inf)
    return np.where(np.isnan(X[:, None, :, 0]), np.nan, dist)


def reprojection_error(
    P: np.ndarray, uv: np.ndarray, conf: np.ndarray, X: np.ndarray, cap: float = np.inf
) -> np.ndarray:
    """Confidence-weighted mean of the pixel residuals, each truncated at ``cap`` (a robust, truncated
    loss: one wrong joint costs at most ``cap``).

    P (B, k, 3, 4), uv (B, k, J, 2), conf (B, k, J), X (B, J, 3) -> (B,); a joint-view behind the camera
    counts as ``cap``; joints that could not be triangulated (seen in < 2 views) are left out; no weight
    at all gives +inf.
    """
    r = residuals(P, uv, X)
    w = np.where((conf > 0) & ~np.isnan(r), conf, 0.0)
    r = np.minimum(np.nan_to_num(r, nan=0.0), cap)
    den = w.sum((1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        num = np.where(w > 0, r * w, 0.0).sum((1, 2))
        err = num / den
    return np.where(den > 0, err, np.inf)


def robust_triangulate(
    P: np.ndarray, uv: np.ndarray, conf: np.ndarray, outlier_px: float
) -> tuple[np.ndarray, np.ndarray]:
    """DLT, then once more without the joint-views whose residual exceeds ``outlier_px`` (a joint keeps its
    first estimate where fewer than 2 inlier views remain). Returns poses (B, J, 3) and the truncated
    reprojection error (B,) of :func:`reprojection_error` with ``cap = outlier_px`` over all joint-views."""
    X = triangulate_batch(P, uv, conf)
    r = residuals(P, uv, X)
    inlier = np.where(r <= outlier_px, conf, 0.0)
    X2 = triangulate_batch(P, uv, inlier)
    X = np.where(np.isfinite(X2), X2, X)
    return X, reprojection_error(P, uv, conf, X, cap=outlier_px)
