"""Calibrated pinhole cameras: projection, lens distortion, fundamental matrices, generated rigs.

A camera maps a world point X (3,) in millimetres to pixels through ``x ~ K (R X + t)`` (Hartley and
Zisserman, eq. 6.8), optionally after Brown-Conrady distortion of the normalised coordinates
(``dist = (k1, k2, p1, p2, k3)``, OpenCV's order, the one CMU Panoptic's calibration files use).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from paperworks.core.validate import as_generator, finite_array, int_in_range, positive_float

__all__ = ["Camera", "fundamental_matrix", "make_rig"]


def _rotation(R: object, name: str) -> np.ndarray:
    R = finite_array(R, name, shape=(3, 3))
    if not np.allclose(R @ R.T, np.eye(3), atol=1e-6) or np.linalg.det(R) <= 0:
        raise ValueError(f"{name}: expected a rotation matrix (R R^T = I, det R = +1)")
    return R


@dataclass(frozen=True)
class Camera:
    """A calibrated camera: intrinsics ``K`` (3, 3), rotation ``R`` (3, 3), translation ``t`` (3,) (world to
    camera), distortion ``dist`` (5,) = (k1, k2, p1, p2, k3), image size ``(width, height)`` in pixels."""

    K: np.ndarray
    R: np.ndarray
    t: np.ndarray
    dist: np.ndarray = field(default_factory=lambda: np.zeros(5))
    size: tuple[int, int] = (1920, 1080)
    name: str = ""

    def __post_init__(self) -> None:
        K = finite_array(self.K, "K", shape=(3, 3))
        if K[0, 0] <= 0 or K[1, 1] <= 0 or not np.allclose(K[2], [0, 0, 1]) or K[1, 0] != 0 or K[2, 0] != 0:
            raise ValueError(
                "K: expected an upper-triangular intrinsic matrix with fx, fy > 0 and last row (0, 0, 1)"
            )
        dist = finite_array(self.dist, "dist", ndim=1)
        if dist.size not in (4, 5):
            raise ValueError(f"dist: expected 4 or 5 coefficients (k1, k2, p1, p2[, k3]), got {dist.size}")
        if dist.size == 4:
            dist = np.append(dist, 0.0)
        size = tuple(int_in_range(s, "size", 1) for s in self.size)
        if len(size) != 2:
            raise ValueError(f"size: expected (width, height), got {self.size!r}")
        object.__setattr__(self, "K", K)
        object.__setattr__(self, "R", _rotation(self.R, "R"))
        object.__setattr__(self, "t", finite_array(self.t, "t", shape=(3,)))
        object.__setattr__(self, "dist", dist)
        object.__setattr__(self, "size", size)

    @property
    def P(self) -> np.ndarray:
        """The projection matrix ``K [R | t]`` (3, 4) of the undistorted image."""
        return self.K @ np.hstack([self.R, self.t[:, None]])

    @property
    def center(self) -> np.ndarray:
        """The camera centre ``-R^T t`` (3,) in world coordinates."""
        return -self.R.T @ self.t

    @property
    def distorted(self) -> bool:
        return bool(np.any(self.dist != 0))

    def depth(self, X: np.ndarray) -> np.ndarray:
        """Depth along the optical axis of points X (..., 3): (...,)."""
        return (np.asarray(X) @ self.R.T + self.t)[..., 2]

    def project(self, X: np.ndarray, *, distort: bool = True) -> np.ndarray:
        """Pixels (..., 2) of world points X (..., 3) (distorted when the camera has distortion)."""
        Xc = np.asarray(X, dtype=float) @ self.R.T + self.t
        xn = Xc[..., :2] / Xc[..., 2:3]
        if distort and self.distorted:
            xn = _distort(xn, self.dist)
        return xn @ self.K[:2, :2].T + self.K[:2, 2]

    def undistort(self, uv: np.ndarray, iterations: int = 20) -> np.ndarray:
        """Undistorted pixels (..., 2) of observed pixels ``uv`` (..., 2): the fixed-point inversion of the
        distortion model (what ``cv2.undistortPoints`` does), re-projected with ``K``."""
        uv = np.asarray(uv, dtype=float)
        if not self.distorted:
            return uv
        Kinv = np.linalg.inv(self.K)
        xd = uv @ Kinv[:2, :2].T + Kinv[:2, 2]
        x = xd.copy()
        k1, k2, p1, p2, k3 = self.dist
        for _ in range(iterations):
            r2 = (x**2).sum(-1, keepdims=True)
            radial = 1 + k1 * r2 + k2 * r2**2 + k3 * r2**3
            dx = _tangential(x, p1, p2)
            x = (xd - dx) / radial
        return x @ self.K[:2, :2].T + self.K[:2, 2]

    def in_image(self, uv: np.ndarray) -> np.ndarray:
        """Whether pixels ``uv`` (..., 2) lie inside the image: (...,) bool."""
        w, h = self.size
        return (uv[..., 0] >= 0) & (uv[..., 0] < w) & (uv[..., 1] >= 0) & (uv[..., 1] < h)


def _tangential(x: np.ndarray, p1: float, p2: float) -> np.ndarray:
    a, b = x[..., 0:1], x[..., 1:2]
    r2 = a**2 + b**2
    return np.concatenate([2 * p1 * a * b + p2 * (r2 + 2 * a**2), p1 * (r2 + 2 * b**2) + 2 * p2 * a * b], -1)


def _distort(x: np.ndarray, dist: np.ndarray) -> np.ndarray:
    k1, k2, p1, p2, k3 = dist
    r2 = (x**2).sum(-1, keepdims=True)
    return x * (1 + k1 * r2 + k2 * r2**2 + k3 * r2**3) + _tangential(x, p1, p2)


def _skew(v: np.ndarray) -> np.ndarray:
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def fundamental_matrix(a: Camera, b: Camera) -> np.ndarray:
    """F (3, 3) with ``x_b^T F x_a = 0`` for undistorted pixels of one point seen by cameras a and b
    (Hartley and Zisserman, eq. 9.2: ``F = [e_b]_x P_b P_a^+``)."""
    Pa, Pb = a.P, b.P
    e_b = Pb @ np.append(a.center, 1.0)
    F = _skew(e_b) @ Pb @ np.linalg.pinv(Pa)
    norm = np.linalg.norm(F)
    if norm < 1e-12 or np.linalg.norm(a.center - b.center) < 1e-9:
        raise ValueError(f"cameras {a.name!r} and {b.name!r}: coincident centres, no epipolar geometry")
    return F / norm


def _look_at(center: np.ndarray, target: np.ndarray) -> np.ndarray:
    """World-to-camera rotation of a camera at ``center`` looking at ``target`` (z forward, y down)."""
    z = target - center
    z = z / np.linalg.norm(z)
    up = np.array([0.0, 0.0, 1.0])
    x = np.cross(z, up)
    x = x / np.linalg.norm(x)
    y = np.cross(z, x)
    return np.stack([x, y, z])


def make_rig(
    n_views: int,
    *,
    radius: float = 4500.0,
    height: float = 2200.0,
    focal: float = 1400.0,
    size: tuple[int, int] = (1920, 1080),
    jitter: float = 0.15,
    rng: object = None,
    target: Sequence[float] = (0.0, 0.0, 1000.0),
) -> list[Camera]:
    """``n_views`` cameras on a ring of ``radius`` mm at ``height`` mm looking at ``target``: azimuths evenly
    spaced with a random jitter (fraction ``jitter`` of the spacing), the layout of CMU Panoptic's HD ring
    and of Shelf/Campus rigs at small scale."""
    n_views = int_in_range(n_views, "n_views", 2)
    radius = positive_float(radius, "radius")
    rng = as_generator(rng)
    base = rng.uniform(0, 2 * np.pi)
    step = 2 * np.pi / n_views
    cams = []
    for v in range(n_views):
        az = base + v * step + rng.uniform(-jitter, jitter) * step
        c = np.array([radius * np.cos(az), radius * np.sin(az), height * rng.uniform(0.8, 1.2)])
        R = _look_at(c, np.asarray(target, dtype=float))
        K = np.array([[focal, 0, size[0] / 2], [0, focal, size[1] / 2], [0, 0, 1.0]])
        cams.append(Camera(K=K, R=R, t=-R @ c, size=size, name=f"cam{v}"))
    return cams
