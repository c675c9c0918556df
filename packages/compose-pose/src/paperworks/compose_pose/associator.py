"""From association to 3D poses: the frame-by-frame ``MultiViewAssociator``.

Every method (COMPOSE with either solver, and the pairwise baselines) ends the same way so that they
differ only in the association: each group of >= 2 detections is triangulated by confidence-weighted DLT
over all its views; while its reprojection error exceeds ``tau_rep`` and it has more than 2 views, the view
with the largest error is dropped (a standard robust clean-up; a no-op for COMPOSE's hyperedges, which
passed the gate already); the pose's score is ``reward * (views - 1) - error``, minus the hyperedge
cost.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from paperworks.core.validate import one_of

from .baselines import BASELINES
from .cameras import Camera
from .hypergraph import Hypergraph, PruningConfig, build_hypergraph, check_detections, undistorted
from .solvers import SOLVERS, solve
from .triangulate import reprojection_error, robust_triangulate

__all__ = ["METHODS", "Association", "MultiViewAssociator", "finalize_groups"]

METHODS = tuple(f"compose_{s}" for s in SOLVERS) + tuple(BASELINES)


@dataclass(frozen=True)
class Association:
    """One frame's result: ``poses`` (n, J, 3) mm, ``scores`` (n,), ``groups``: per pose its detections as
    (view, row) pairs; ``singletons``: detections left alone; ``seconds``: association time;
    ``hypergraph``: the candidate set (COMPOSE only); ``cover``: the chosen hyperedge ids (COMPOSE only)."""

    poses: np.ndarray
    scores: np.ndarray
    groups: list[list[tuple[int, int]]]
    singletons: list[tuple[int, int]]
    seconds: float
    hypergraph: Hypergraph | None = None
    cover: list[int] = field(default_factory=list)


def finalize_groups(
    cameras: Sequence[Camera], detections: list[np.ndarray], groups: list[list[int]], config: PruningConfig
) -> tuple[np.ndarray, np.ndarray, list[list[int]], list[int]]:
    """Triangulate each group of vertex ids (module docstring): poses (n, J, 3), scores (n,), the groups
    kept (vertex ids) and the vertices left as singletons."""
    uv, conf = undistorted(cameras, detections, config.min_conf)
    sizes = [d.shape[0] for d in detections]
    view = np.repeat(np.arange(len(sizes)), sizes)
    J = detections[0].shape[1] if detections else 0
    all_uv = np.concatenate(uv) if view.size else np.zeros((0, J, 2))
    all_conf = np.concatenate(conf) if view.size else np.zeros((0, J))
    Ps = np.stack([c.P for c in cameras])
    poses, scores, kept, single = [], [], [], []
    for g in groups:
        g = list(g)
        while len(g) >= 2:
            P, u, c = Ps[view[g]][None], all_uv[g][None], all_conf[g][None]
            X, errs = robust_triangulate(P, u, c, config.outlier_px)
            err = float(errs[0])
            if err <= config.tau_rep or len(g) == 2:
                break
            per_view = [
                float(reprojection_error(P[:, [i]], u[:, [i]], c[:, [i]], X, cap=config.outlier_px)[0])
                for i in range(len(g))
            ]
            worst = int(np.argmax(per_view))
            single.append(g.pop(worst))
        if len(g) < 2:
            single.extend(g)
            continue
        poses.append(X[0])
        scores.append(config.reward * (len(g) - 1) - err)
        kept.append(g)
    poses_arr = np.stack(poses) if poses else np.zeros((0, J, 3))
    return poses_arr, np.asarray(scores, dtype=float), kept, sorted(single)


class MultiViewAssociator:
    """Associate per-view 2D detections into 3D people, frame by frame.

    ``cameras``: the rig (fixed across frames, as in a tracking loop); ``method``: ``"ilp"``, ``"cpsat"``
    or ``"bp"`` (COMPOSE with that solver; ``"compose_<solver>"`` also accepted) or a baseline
    (``"hungarian"``, ``"permsync"``, ``"greedy"``); ``config``: the pruning thresholds and cost.

    >>> assoc = MultiViewAssociator(cameras, method="ilp")          # doctest: +SKIP
    >>> result = assoc(detections)   # detections[v]: (n_v, J, 3)   # doctest: +SKIP
    >>> result.poses.shape                                          # doctest: +SKIP
    (n_people, J, 3)
    """

    def __init__(self, cameras: Sequence[Camera], method: str = "ilp", config: PruningConfig | None = None):
        if (
            not isinstance(cameras, Sequence)
            or len(cameras) < 2
            or not all(isinstance(c, Camera) for c in cameras)
        ):
            raise TypeError("cameras: expected a list of at least 2 Camera")
        if method in SOLVERS:
            method = f"compose_{method}"
        self.method = one_of(method, "method", METHODS + SOLVERS)
        self.cameras = list(cameras)
        self.config = config or PruningConfig()
        if not isinstance(self.config, PruningConfig):
            raise TypeError(f"config: expected a PruningConfig, got {type(self.config).__name__}")

    def __call__(self, detections: Sequence[object]) -> Association:
        dets = check_detections(detections, len(self.cameras))
        start = time.perf_counter()
        hg, cover = None, []
        if self.method.startswith("compose_"):
            hg = build_hypergraph(self.cameras, dets, self.config)
            cover = solve(hg, self.method.removeprefix("compose_"))
            groups = [list(hg.edges[e]) for e in cover if len(hg.edges[e]) >= 2]
        else:
            groups = [g for g in BASELINES[self.method](self.cameras, dets, self.config) if len(g) >= 2]
        poses, scores, kept, _ = finalize_groups(self.cameras, dets, groups, self.config)
        seconds = time.perf_counter() - start
        sizes = [d.shape[0] for d in dets]
        view = np.repeat(np.arange(len(sizes)), sizes)
        row = np.concatenate([np.arange(n) for n in sizes]) if sizes else np.zeros(0, int)
        grouped = {v for g in kept for v in g}
        singles = sorted(set(range(view.size)) - grouped)
        return Association(
            poses=poses,
            scores=scores,
            groups=[[(int(view[v]), int(row[v])) for v in g] for g in kept],
            singletons=[(int(view[v]), int(row[v])) for v in singles],
            seconds=seconds,
            hypergraph=hg,
            cover=cover,
        )
