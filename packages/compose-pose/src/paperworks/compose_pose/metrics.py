"""Evaluation of 3D poses: MPJPE and average precision at MPJPE thresholds (VoxelPose's protocol).

Predictions of all frames are sorted by score; each is matched to the ground-truth person of its frame
with the smallest MPJPE; it is a true positive at threshold K (mm) when that MPJPE is below K and that
person was not matched before, a false positive otherwise. AP is the area under the precision-recall
curve with the precision made monotone (PASCAL VOC). Ground truth that no method can see in two views
still counts in the recall's denominator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["FrameResult", "average_precision", "evaluate", "mpjpe_matrix", "pair_f1"]


def mpjpe_matrix(pred: np.ndarray, gt: np.ndarray) -> np.ndarray:
    """Mean per-joint position error (n_pred, n_gt) in mm between pred (n_pred, J, 3) and gt (n_gt, J, 3);
    joints that a prediction could not triangulate (NaN) are left out; none at all gives +inf."""
    pred = np.asarray(pred, dtype=float)
    gt = np.asarray(gt, dtype=float)
    if pred.shape[0] == 0 or gt.shape[0] == 0:
        return np.zeros((pred.shape[0], gt.shape[0]))
    d = np.linalg.norm(pred[:, None] - gt[None], axis=-1)  # (n_pred, n_gt, J)
    valid = np.isfinite(d)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.where(valid, d, 0).sum(-1) / valid.sum(-1)
    return np.where(valid.any(-1), m, np.inf)


@dataclass(frozen=True)
class FrameResult:
    """A frame's predicted ``poses`` (n, J, 3), their ``scores`` (n,), its ground truth ``gt`` (P, J, 3)."""

    poses: np.ndarray
    scores: np.ndarray
    gt: np.ndarray


def average_precision(frames: Sequence[FrameResult], threshold: float) -> float:
    """AP at an MPJPE ``threshold`` (mm) over ``frames`` (module docstring), in [0, 1]."""
    records = []  # (score, frame, min mpjpe, argmin gt)
    n_gt = 0
    for f, fr in enumerate(frames):
        n_gt += fr.gt.shape[0]
        if fr.poses.shape[0] == 0:
            continue
        M = mpjpe_matrix(fr.poses, fr.gt)
        for i in range(fr.poses.shape[0]):
            if fr.gt.shape[0]:
                j = int(np.argmin(M[i]))
                records.append((float(fr.scores[i]), f, float(M[i, j]), j))
            else:
                records.append((float(fr.scores[i]), f, np.inf, -1))
    if n_gt == 0:
        raise ValueError("frames: no ground-truth person to evaluate against")
    if not records:
        return 0.0
    records.sort(key=lambda r: -r[0])
    taken: set[tuple[int, int]] = set()
    tp = np.zeros(len(records))
    for k, (_, f, err, j) in enumerate(records):
        if err < threshold and (f, j) not in taken:
            tp[k] = 1
            taken.add((f, j))
    ctp = np.cumsum(tp)
    recall = ctp / n_gt
    precision = ctp / np.arange(1, len(records) + 1)
    mrec = np.concatenate([[0.0], recall, [1.0]])
    mpre = np.concatenate([[0.0], precision, [0.0]])
    mpre = np.maximum.accumulate(mpre[::-1])[::-1]
    idx = np.flatnonzero(mrec[1:] != mrec[:-1])
    return float(np.sum((mrec[idx + 1] - mrec[idx]) * mpre[idx + 1]))


def evaluate(
    frames: Sequence[FrameResult], thresholds: Sequence[float] = (25, 50, 100, 150)
) -> dict[str, float]:
    """``ap{K}`` for each threshold, ``mpjpe`` (mm, over predictions matched within 500 mm, each person
    once) and ``recall500``."""
    out = {f"ap{int(t)}": average_precision(frames, t) for t in thresholds}
    errs, n_gt = [], 0
    for fr in frames:
        n_gt += fr.gt.shape[0]
        if fr.poses.shape[0] == 0 or fr.gt.shape[0] == 0:
            continue
        M = mpjpe_matrix(fr.poses, fr.gt)
        order = np.argsort(-fr.scores, kind="stable")
        used: set[int] = set()
        for i in order:
            j = int(np.argmin(M[i]))
            if M[i, j] < 500 and j not in used:
                used.add(j)
                errs.append(M[i, j])
    out["mpjpe"] = float(np.mean(errs)) if errs else float("nan")
    out["recall500"] = len(errs) / n_gt if n_gt else float("nan")
    return out


def pair_f1(groups: Sequence[Sequence[int]], labels: np.ndarray) -> tuple[int, int, int]:
    """Association quality of one frame, over pairs of detections: (true positive pairs, predicted pairs,
    true pairs). ``groups``: the vertex ids of each predicted person (>= 2 detections); ``labels`` (N,): the
    person of each detection (-1: a false positive, never paired). F1 = 2 tp / (predicted + true)."""
    labels = np.asarray(labels)
    pred = {(a, b) for g in groups for i, a in enumerate(sorted(g)) for b in sorted(g)[i + 1 :]}
    tp = sum(labels[a] >= 0 and labels[a] == labels[b] for a, b in pred)
    n_true = 0
    for p in np.unique(labels[labels >= 0]):
        k = int((labels == p).sum())
        n_true += k * (k - 1) // 2
    return int(tp), len(pred), n_true
