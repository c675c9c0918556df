"""The hypergraph of person hypotheses and its geometric pruning.

Vertices are the 2D detections of all views. A hyperedge is a set of detections with at most one per
view, a hypothesis that they are one person; singletons are always present, so an exact cover always
exists. The full candidate set is exponential (``prod_v (n_v + 1) - 1`` sets); pruning (our reading,
README Fidelity) keeps:

- pairs whose confidence-weighted symmetric epipolar distance over confident joints is below
  ``tau_epi`` pixels (the compatibility graph, layered by view);
- larger sets that are cliques of that graph, grown one view at a time from kept sets (Apriori style),
  whose robust DLT triangulation has a confidence-weighted mean reprojection error (residuals truncated at
  ``outlier_px``) below ``tau_rep`` pixels.

Cost of a hyperedge (eq. of the exact cover): ``c_e = err_e - reward * (|e| - 1)`` for ``|e| >= 2`` and
``c_e = 0`` for a singleton: the reprojection error in pixels against a reward per extra view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import fraction, int_in_range, nonnegative_float, positive_float

from .cameras import Camera, fundamental_matrix
from .triangulate import robust_triangulate

__all__ = ["Hypergraph", "PruningConfig", "build_hypergraph", "check_detections", "full_candidate_count"]


@dataclass(frozen=True)
class PruningConfig:
    """Thresholds of the pruning and the cost (pixels; our choices, README Fidelity).

    ``tau_epi``: pair compatibility; ``tau_rep``: reprojection gate of sets of >= 2 views; ``reward``:
    cost reward per extra view; ``min_conf``: joints below it take no part; ``outlier_px``: per-joint
    distances and residuals are truncated there (one wrong joint costs at most that much);
    ``max_size``: largest hyperedge (None: the number of views); ``max_edges``: a guard against a
    blow-up (a ``RuntimeError`` names it)."""

    tau_epi: float = 25.0
    tau_rep: float = 30.0
    reward: float = 15.0
    min_conf: float = 0.3
    outlier_px: float = 60.0
    max_size: int | None = None
    max_edges: int = 200_000

    def __post_init__(self) -> None:
        positive_float(self.tau_epi, "tau_epi")
        positive_float(self.tau_rep, "tau_rep")
        positive_float(self.outlier_px, "outlier_px")
        nonnegative_float(self.reward, "reward")
        fraction(self.min_conf, "min_conf")
        if self.max_size is not None:
            int_in_range(self.max_size, "max_size", 1)
        int_in_range(self.max_edges, "max_edges", 1)


@dataclass(frozen=True)
class Hypergraph:
    """Candidate hyperedges over the detections of one frame.

    Attributes:
        vertex_view, vertex_index: (N,) view and row of each detection.
        edges: M tuples of vertex ids, each sorted by view; the first N are the singletons.
        costs: (M,) hyperedge costs; errors: (M,) reprojection errors (0 for singletons).
        poses: (M, J, 3) triangulated skeletons in mm (NaN for singletons).
        n_compatible_pairs: edges of the compatibility graph.
        full_count: size of the unpruned candidate set (sets of >= 2 detections, <= 1 per view).
    """

    vertex_view: np.ndarray
    vertex_index: np.ndarray
    edges: list[tuple[int, ...]]
    costs: np.ndarray
    errors: np.ndarray
    poses: np.ndarray
    n_compatible_pairs: int
    full_count: int

    @property
    def n_vertices(self) -> int:
        return int(self.vertex_view.size)

    @property
    def n_edges(self) -> int:
        return len(self.edges)

    def incidence(self) -> tuple[np.ndarray, np.ndarray]:
        """(edge ids, vertex ids) of every (edge, vertex) incidence, both (sum_e |e|,)."""
        sizes = np.fromiter((len(e) for e in self.edges), int, self.n_edges)
        eid = np.repeat(np.arange(self.n_edges), sizes)
        vid = np.fromiter((v for e in self.edges for v in e), int, int(sizes.sum()))
        return eid, vid

    def cover_cost(self, chosen: Sequence[int]) -> float:
        return float(self.costs[np.asarray(chosen, dtype=int)].sum())

    def is_exact_cover(self, chosen: Sequence[int]) -> bool:
        count = np.zeros(self.n_vertices, int)
        for e in chosen:
            count[list(self.edges[e])] += 1
        return bool(np.all(count == 1))


def full_candidate_count(view_sizes: Sequence[int]) -> int:
    """Sets of >= 2 detections with at most one per view: ``prod (n_v + 1) - 1 - sum n_v``."""
    total = 1
    for n in view_sizes:
        total *= n + 1
    return total - 1 - sum(view_sizes)


def check_detections(
    detections: Sequence[object], n_views: int, n_joints: int | None = None
) -> list[np.ndarray]:
    """Validate per-view detections: a list of ``n_views`` arrays (n_v, J, 3) of (x, y, confidence)."""
    if not isinstance(detections, Sequence) or isinstance(detections, str | bytes):
        raise TypeError(f"detections: expected a list of per-view arrays, got {type(detections).__name__}")
    if len(detections) != n_views:
        raise ValueError(f"detections: expected one array per camera ({n_views}), got {len(detections)}")
    out = []
    for v, d in enumerate(detections):
        arr = np.asarray(d, dtype=float)
        if arr.size == 0:
            arr = arr.reshape(0, n_joints or 0, 3)
        if arr.ndim != 3 or arr.shape[2] != 3:
            raise ValueError(
                f"detections[{v}]: expected shape (n, J, 3) of (x, y, confidence), got {arr.shape}"
            )
        if n_joints is None and arr.shape[0]:
            n_joints = arr.shape[1]
        if arr.shape[0] and arr.shape[1] != n_joints:
            raise ValueError(f"detections[{v}]: expected {n_joints} joints per detection, got {arr.shape[1]}")
        if not np.isfinite(arr).all():
            raise ValueError(
                f"detections[{v}]: NaN or inf keypoints (mark a missing joint with confidence 0)"
            )
        if arr.size and ((arr[..., 2] < 0).any() or (arr[..., 2] > 1).any()):
            raise ValueError(f"detections[{v}]: confidences expected in [0, 1]")
        out.append(arr)
    if n_joints is None:
        raise ValueError("detections: every view is empty")
    return [a.reshape(a.shape[0], n_joints, 3) for a in out]


def _epipolar_distances(
    F: np.ndarray, a: np.ndarray, b: np.ndarray, ca: np.ndarray, cb: np.ndarray, min_conf: float, cap: float
) -> np.ndarray:
    """Symmetric epipolar distance (n_a, n_b) between undistorted detections a (n_a, J, 2), b (n_b, J, 2)
    of two views (F maps view a to lines in view b): the mean over joints confident in both, weighted by
    the smaller confidence, of per-joint distances truncated at ``cap``."""
    ha = np.concatenate([a, np.ones((*a.shape[:-1], 1))], -1)
    hb = np.concatenate([b, np.ones((*b.shape[:-1], 1))], -1)
    lb = ha @ F.T  # (n_a, J, 3) lines in b
    la = hb @ F  # (n_b, J, 3) lines in a
    d_b = np.abs(np.einsum("ajc,bjc->abj", lb, hb)) / np.linalg.norm(lb[..., :2], axis=-1)[:, None, :]
    d_a = np.abs(np.einsum("bjc,ajc->abj", la, ha)) / np.linalg.norm(la[..., :2], axis=-1)[None, :, :]
    w = np.minimum(ca[:, None, :], cb[None, :, :])
    w = np.where((ca[:, None, :] >= min_conf) & (cb[None, :, :] >= min_conf), w, 0.0)
    num = (w * np.minimum(0.5 * (d_a + d_b), cap)).sum(-1)
    den = w.sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / den, np.inf)


def pairwise_epipolar(
    cameras: Sequence[Camera],
    uv: list[np.ndarray],
    conf: list[np.ndarray],
    min_conf: float,
    cap: float = np.inf,
) -> dict[tuple[int, int], np.ndarray]:
    """Epipolar distance matrices for every view pair v < w: {(v, w): (n_v, n_w)}."""
    out = {}
    for v in range(len(cameras)):
        for w in range(v + 1, len(cameras)):
            if uv[v].shape[0] == 0 or uv[w].shape[0] == 0:
                out[(v, w)] = np.zeros((uv[v].shape[0], uv[w].shape[0]))
                continue
            F = fundamental_matrix(cameras[v], cameras[w])
            out[(v, w)] = _epipolar_distances(F, uv[v], uv[w], conf[v], conf[w], min_conf, cap)
    return out


def undistorted(
    cameras: Sequence[Camera], detections: list[np.ndarray], min_conf: float = 0.0
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Undistorted pixels (n_v, J, 2) and confidences (n_v, J) per view; confidences below ``min_conf``
    are set to 0 (those joints take no part in triangulation and reprojection errors)."""
    uv = [cam.undistort(d[..., :2]) if d.shape[0] else d[..., :2] for cam, d in zip(cameras, detections)]
    return uv, [np.where(d[..., 2] >= min_conf, d[..., 2], 0.0) for d in detections]


def build_hypergraph(
    cameras: Sequence[Camera], detections: Sequence[object], config: PruningConfig | None = None
) -> Hypergraph:
    """Candidate hyperedges, costs and triangulations for one frame (see the module docstring).

    ``cameras``: V cameras; ``detections``: V arrays (n_v, J, 3) of (x, y, confidence) in pixels.
    """
    config = config or PruningConfig()
    if not cameras or not all(isinstance(c, Camera) for c in cameras):
        raise TypeError("cameras: expected a non-empty list of Camera")
    dets = check_detections(detections, len(cameras))
    uv, conf = undistorted(cameras, dets, config.min_conf)
    J = dets[0].shape[1] if dets else 0
    sizes = [d.shape[0] for d in dets]
    vertex_view = np.repeat(np.arange(len(cameras)), sizes)
    vertex_index = np.concatenate([np.arange(n) for n in sizes]) if sizes else np.zeros(0, int)
    N = int(vertex_view.size)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    all_uv = np.concatenate(uv) if N else np.zeros((0, J, 2))
    all_conf = np.concatenate(conf) if N else np.zeros((0, J))
    Ps = np.stack([c.P for c in cameras])

    dist = pairwise_epipolar(cameras, uv, conf, config.min_conf, config.outlier_px)
    compat = np.zeros((N, N), bool)
    for (v, w), d in dist.items():
        block = d < config.tau_epi
        compat[offsets[v] : offsets[v + 1], offsets[w] : offsets[w + 1]] = block
        compat[offsets[w] : offsets[w + 1], offsets[v] : offsets[v + 1]] = block.T
    n_pairs = int(np.triu(compat).sum())

    edges: list[tuple[int, ...]] = [(i,) for i in range(N)]
    errors = [np.zeros(N)]
    poses = [np.full((N, J, 3), np.nan)]
    max_size = min(config.max_size or len(cameras), len(cameras))
    level = np.arange(N)[:, None]  # kept sets of the current size, (n_sets, k)
    for _k in range(2, max_size + 1):
        if level.shape[0] == 0:
            break
        allowed = np.logical_and.reduce([compat[level[:, i]] for i in range(level.shape[1])])
        later = vertex_view[None, :] > vertex_view[level[:, -1]][:, None]
        rows, cols = np.nonzero(allowed & later)
        if rows.size == 0:
            break
        cand = np.concatenate([level[rows], cols[:, None]], axis=1)  # (n_cand, k)
        if len(edges) + cand.shape[0] > config.max_edges:
            raise RuntimeError(
                f"max_edges: pruning left more than {config.max_edges} hyperedges; lower tau_epi/tau_rep "
                "or raise max_edges"
            )
        views = vertex_view[cand]
        X, err = robust_triangulate(Ps[views], all_uv[cand], all_conf[cand], config.outlier_px)
        keep = err < config.tau_rep
        level = cand[keep]
        edges.extend(tuple(int(x) for x in row) for row in level)
        errors.append(err[keep])
        poses.append(X[keep])
    errors_arr = np.concatenate(errors)
    sizes_e = np.fromiter((len(e) for e in edges), int, len(edges))
    costs = np.where(sizes_e >= 2, errors_arr - config.reward * (sizes_e - 1), 0.0)
    return Hypergraph(
        vertex_view=vertex_view,
        vertex_index=vertex_index,
        edges=edges,
        costs=costs,
        errors=errors_arr,
        poses=np.concatenate(poses) if poses else np.zeros((0, J, 3)),
        n_compatible_pairs=n_pairs,
        full_count=full_candidate_count(sizes),
    )
