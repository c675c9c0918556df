"""Loaders for the formats users hold: COCO-keypoint detections and camera calibrations.

- :func:`load_coco_keypoints`: a COCO results file (a JSON list of ``{"image_id", "keypoints": [x, y, s,
  ...], "score"}``, what MMPose and ViTPose write) or a COCO annotation file (``{"annotations": [...]}``),
  one view's detections as (n, J, 3) of (x, y, confidence); ``image_id`` picks one image of the file;
- :func:`load_panoptic_calibration`: CMU Panoptic's ``calibration_<seq>.json`` (``{"cameras": [{"name",
  "type", "resolution", "K", "distCoef", "R", "t"}]}``, ``t`` in centimetres), as :class:`~.cameras.Camera`
  in millimetres;
- :func:`camera_from_dict`: one camera from ``{"K", "R", "t", "dist"?, "size"?}`` (a Shelf/Campus or
  custom calibration), ``t`` in millimetres unless ``unit_scale`` says otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from paperworks.core.validate import positive_float

from .cameras import Camera

__all__ = ["camera_from_dict", "load_coco_keypoints", "load_panoptic_calibration"]


def _read_json(path: str | Path, what: str) -> object:
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{what}: no file at {p}")
    try:
        return json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{what}: {p} is not valid JSON ({e})") from None


def load_coco_keypoints(
    path: str | Path,
    *,
    image_id: int | str | None = None,
    n_joints: int | None = None,
    min_score: float = 0.0,
) -> np.ndarray:
    """One view's detections (n, J, 3) from a COCO keypoint file (module docstring).

    ``image_id``: keep the entries of that image (None: every entry of the file); ``n_joints``: the
    expected joint count (None: from the first entry; 17 for COCO); ``min_score``: drop person detections
    whose ``score`` is below it. The third value of each keypoint is its confidence; COCO ground truth's
    visibility flags (0, 1, 2) are mapped to 0, 0.5, 1.
    """
    data = _read_json(path, "path")
    entries = data.get("annotations") if isinstance(data, Mapping) else data
    if not isinstance(entries, list):
        raise ValueError("path: expected a COCO results list or a dict with 'annotations'")
    if image_id is not None:
        entries = [e for e in entries if e.get("image_id") == image_id]
    rows = []
    gt_flags = isinstance(data, Mapping)
    for k, e in enumerate(entries):
        if not isinstance(e, Mapping) or "keypoints" not in e:
            raise ValueError(f"path: entry {k} has no 'keypoints'")
        if float(e.get("score", 1.0)) < min_score:
            continue
        kp = np.asarray(e["keypoints"], dtype=float)
        if kp.ndim != 1 or kp.size % 3:
            raise ValueError(f"path: entry {k}: 'keypoints' must be a flat list of (x, y, score) triples")
        kp = kp.reshape(-1, 3)
        if n_joints is None:
            n_joints = kp.shape[0]
        if kp.shape[0] != n_joints:
            raise ValueError(f"path: entry {k} has {kp.shape[0]} joints, expected {n_joints}")
        if gt_flags:
            kp[:, 2] = np.select([kp[:, 2] >= 2, kp[:, 2] >= 1], [1.0, 0.5], 0.0)
        if not np.isfinite(kp).all():
            raise ValueError(f"path: entry {k} has NaN or inf keypoints")
        if (kp[:, 2] < 0).any() or (kp[:, 2] > 1).any():
            raise ValueError(f"path: entry {k} has keypoint confidences outside [0, 1]")
        rows.append(kp)
    return np.stack(rows) if rows else np.zeros((0, n_joints or 0, 3))


def camera_from_dict(d: Mapping[str, object], *, unit_scale: float = 1.0, name: str = "") -> Camera:
    """A camera from ``{"K", "R", "t", "dist" (or "distCoef"), "size" (or "resolution")}``; ``t`` is
    multiplied by ``unit_scale`` (10 for centimetres to millimetres)."""
    if not isinstance(d, Mapping):
        raise TypeError(f"camera: expected a mapping with K, R, t, got {type(d).__name__}")
    missing = [k for k in ("K", "R", "t") if k not in d]
    if missing:
        raise ValueError(f"camera {name or d.get('name', '')!r}: missing {missing}")
    unit_scale = positive_float(unit_scale, "unit_scale")
    dist = d.get("dist", d.get("distCoef", np.zeros(5)))
    size = d.get("size", d.get("resolution", (1920, 1080)))
    t = np.asarray(d["t"], dtype=float).reshape(-1) * unit_scale
    return Camera(
        K=np.asarray(d["K"], dtype=float),
        R=np.asarray(d["R"], dtype=float),
        t=t,
        dist=np.asarray(dist, dtype=float).reshape(-1),
        size=tuple(int(s) for s in size),  # type: ignore[arg-type]
        name=str(d.get("name", name)),
    )


def load_panoptic_calibration(
    path: str | Path, *, kind: str = "hd", names: Sequence[str] | None = None, unit_scale: float = 10.0
) -> list[Camera]:
    """CMU Panoptic cameras of ``kind`` (``"hd"``, ``"vga"``, ``"kinect-color"``), optionally only
    ``names`` (in that order); ``t`` converted from centimetres by ``unit_scale``."""
    data = _read_json(path, "path")
    if not isinstance(data, Mapping) or not isinstance(data.get("cameras"), list):
        raise ValueError("path: expected a Panoptic calibration with a 'cameras' list")
    cams = {c.get("name"): c for c in data["cameras"] if c.get("type") == kind}
    if not cams:
        raise ValueError(f"kind: no camera of type {kind!r} in {path}")
    wanted = list(names) if names is not None else sorted(cams)
    unknown = [n for n in wanted if n not in cams]
    if unknown:
        raise ValueError(f"names: unknown cameras {unknown} (have {sorted(cams)[:5]}...)")
    return [camera_from_dict(cams[n], unit_scale=unit_scale, name=n) for n in wanted]
