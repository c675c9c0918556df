"""Generated multi-view scenes: people, calibrated rigs and noisy 2D pose detections.

Generative model of one frame (what is latent, what is observed):

- latent: ``n_people`` skeletons of 15 joints (the Panoptic-15 / Shelf joint set) in millimetres: a
  standing template scaled to a height in [1.55, 1.95] m, random arm and leg swing, a random heading,
  placed uniformly in a ``area`` x ``area`` mm square with a minimum distance ``min_gap`` between pelvises;
- latent: which person each detection belongs to (``Frame.labels``; -1 for a false positive);
- observed: the rig (:func:`~.cameras.make_rig`) and, per view, detections ``(n_v, 15, 3)`` of
  (x, y, confidence) as a 2D detector writes them (COCO keypoints). A person inside the image is missed with
  probability ``miss``; each joint is occluded with probability ``occlusion`` (its pixel then jumps
  by ``occluded_px`` pixels or lands on a nearby person's joint, and its confidence drops to [0.05, 0.35]);
  visible joints carry Gaussian noise ``noise_px`` and confidence in [0.6, 1]; a Poisson(``false_rate``)
  number of false positives per view are people that exist in that view only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import as_generator, fraction, int_in_range, nonnegative_float, positive_float

from .cameras import Camera, make_rig

__all__ = ["JOINTS", "N_JOINTS", "Frame", "SceneConfig", "make_frame", "make_people", "skeleton_template"]

JOINTS = (
    "neck", "nose", "pelvis",
    "l_shoulder", "l_elbow", "l_wrist", "l_hip", "l_knee", "l_ankle",
    "r_shoulder", "r_elbow", "r_wrist", "r_hip", "r_knee", "r_ankle",
)  # fmt: skip
N_JOINTS = len(JOINTS)


def skeleton_template() -> np.ndarray:
    """A standing 1.75 m person (15, 3) in mm: x right, y forward, z up, pelvis above the origin."""
    return np.array(
        [
            [0, 0, 1500], [0, 60, 1640], [0, 0, 950],
            [-190, 0, 1480], [-230, 0, 1180], [-250, 20, 920],
            [-100, 0, 940], [-110, 0, 500], [-110, -20, 80],
            [190, 0, 1480], [230, 0, 1180], [250, 20, 920],
            [100, 0, 940], [110, 0, 500], [110, -20, 80],
        ],
        dtype=float,
    )  # fmt: skip


@dataclass(frozen=True)
class SceneConfig:
    """How frames are generated (see the module docstring); ``n_views`` / ``n_people`` are ranges
    ``(lo, hi)`` drawn uniformly per frame."""

    n_views: tuple[int, int] = (3, 8)
    n_people: tuple[int, int] = (2, 8)
    area: float = 4000.0
    min_gap: float = 450.0
    noise_px: float = 2.0
    occlusion: float = 0.2
    occluded_px: float = 40.0
    miss: float = 0.05
    false_rate: float = 0.3

    def __post_init__(self) -> None:
        for name in ("n_views", "n_people"):
            lo, hi = getattr(self, name)
            int_in_range(lo, f"{name}[0]", 2 if name == "n_views" else 1)
            int_in_range(hi, f"{name}[1]", lo)
        positive_float(self.area, "area")
        nonnegative_float(self.min_gap, "min_gap")
        nonnegative_float(self.noise_px, "noise_px")
        fraction(self.occlusion, "occlusion")
        nonnegative_float(self.occluded_px, "occluded_px")
        fraction(self.miss, "miss")
        nonnegative_float(self.false_rate, "false_rate")


@dataclass(frozen=True)
class Frame:
    """One frame: ``cameras`` (V,), ``detections`` per view (n_v, J, 3) of (x, y, confidence),
    ``labels`` per view (n_v,) (the person index, -1 for a false positive) and ``poses`` (P, J, 3) mm."""

    cameras: list[Camera]
    detections: list[np.ndarray]
    labels: list[np.ndarray]
    poses: np.ndarray


def make_people(n: int, rng: np.random.Generator, area: float, min_gap: float) -> np.ndarray:
    """``n`` skeletons (n, 15, 3) in a square of side ``area`` mm centred at the origin."""
    tpl = skeleton_template()
    pelvis = []
    for _ in range(1000 * max(n, 1)):
        if len(pelvis) == n:
            break
        p = rng.uniform(-area / 2, area / 2, size=2)
        if all(np.linalg.norm(p - q) >= min_gap for q in pelvis):
            pelvis.append(p)
    if len(pelvis) < n:
        raise ValueError(f"n_people: cannot place {n} people {min_gap} mm apart in a {area} mm square")
    out = np.empty((n, N_JOINTS, 3))
    for i in range(n):
        s = tpl * rng.uniform(1.55, 1.95) / 1.75
        # arm and leg swing about the shoulders and hips (in the sagittal plane)
        for sh, el, wr, sign in ((3, 4, 5, 1), (9, 10, 11, -1)):
            a = rng.normal(0, 0.5) * sign
            _swing(s, sh, (el, wr), a)
        for hip, kn, an, sign in ((6, 7, 8, -1), (12, 13, 14, 1)):
            a = rng.normal(0, 0.3) * sign
            _swing(s, hip, (kn, an), a)
        yaw = rng.uniform(0, 2 * np.pi)
        c, sn = np.cos(yaw), np.sin(yaw)
        Rz = np.array([[c, -sn, 0], [sn, c, 0], [0, 0, 1]])
        out[i] = s @ Rz.T + np.array([pelvis[i][0], pelvis[i][1], 0.0])
    return out


def _swing(s: np.ndarray, pivot: int, children: tuple[int, ...], angle: float) -> None:
    c, sn = np.cos(angle), np.sin(angle)
    Rx = np.array([[1, 0, 0], [0, c, -sn], [0, sn, c]])
    for j in children:
        s[j] = (s[j] - s[pivot]) @ Rx.T + s[pivot]


def make_frame(config: SceneConfig, rng: object = None, cameras: list[Camera] | None = None) -> Frame:
    """Draw one frame from ``config`` (a rig is drawn too unless ``cameras`` are given)."""
    rng = as_generator(rng)
    if cameras is None:
        cameras = make_rig(int(rng.integers(config.n_views[0], config.n_views[1] + 1)), rng=rng)
    n = int(rng.integers(config.n_people[0], config.n_people[1] + 1))
    poses = make_people(n, rng, config.area, config.min_gap)
    detections, labels = [], []
    for cam in cameras:
        det, lab = [], []
        proj = cam.project(poses)  # (P, J, 2)
        for i in range(n):
            inside = cam.in_image(proj[i]).mean() >= 0.6
            if not inside or rng.random() < config.miss:
                continue
            det.append(_observe(proj[i], i, proj, config, rng))
            lab.append(i)
        for _ in range(rng.poisson(config.false_rate)):
            ghost = make_people(1, rng, config.area, 0.0)[0]
            uv = cam.project(ghost)
            if cam.in_image(uv).mean() >= 0.6:
                det.append(_observe(uv, -1, proj, config, rng))
                lab.append(-1)
        order = rng.permutation(len(det))  # a detector's output order carries no identity
        detections.append(np.array([det[k] for k in order]).reshape(len(det), N_JOINTS, 3))
        labels.append(np.array([lab[k] for k in order], dtype=int))
    return Frame(cameras=cameras, detections=detections, labels=labels, poses=poses)


def _observe(
    uv: np.ndarray, who: int, proj: np.ndarray, config: SceneConfig, rng: np.random.Generator
) -> np.ndarray:
    """Detection (J, 3) of a person projected at ``uv`` (J, 2): noise, occlusion, confidences."""
    out = np.empty((N_JOINTS, 3))
    out[:, :2] = uv + rng.normal(0, config.noise_px, size=uv.shape)
    out[:, 2] = rng.uniform(0.6, 1.0, size=N_JOINTS)
    occluded = rng.random(N_JOINTS) < config.occlusion
    others = [k for k in range(len(proj)) if k != who]
    for j in np.flatnonzero(occluded):
        if others and rng.random() < 0.5:
            # the detector latches onto the same joint of the nearest other person in the image
            k = min(others, key=lambda o: np.linalg.norm(proj[o, j] - uv[j]))
            out[j, :2] = proj[k, j] + rng.normal(0, config.noise_px, size=2)
        else:
            out[j, :2] = uv[j] + rng.normal(0, config.occluded_px, size=2)
        out[j, 2] = rng.uniform(0.05, 0.35)
    return out
