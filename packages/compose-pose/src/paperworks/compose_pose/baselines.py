"""Pairwise association baselines: what optimisation-based multi-view pose methods did before COMPOSE.

Each returns groups of vertex ids (at most one detection per view is not guaranteed by the pairwise step;
every baseline resolves conflicts post hoc, as the methods it stands for do):

- :func:`hungarian_union_find`: per view pair, the Hungarian assignment on epipolar distance (gated at
  ``tau_epi``), matches merged by union-find; a cluster that holds two detections of one view keeps the
  one closest (mean epipolar distance) to the rest, the others become singletons;
- :func:`permutation_sync`: spectral permutation synchronisation (Pachauri, Kondor and Singh 2013, the
  cycle-consistent matching MVPose (Dong et al. 2019) builds on): the top-k eigenvectors of the gated
  pairwise affinity matrix, rounded per view to a partial permutation onto a reference view's slots by
  the Hungarian algorithm (k = the most detections in a view);
- :func:`greedy_triangulation`: triangulate every compatible pair, then grow clusters greedily from the
  lowest reprojection error, joining a pair to a cluster whose 3D pose is within ``radius`` mm and whose
  views are free.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from .cameras import Camera
from .hypergraph import PruningConfig, check_detections, pairwise_epipolar, undistorted
from .triangulate import robust_triangulate

__all__ = ["BASELINES", "greedy_triangulation", "hungarian_union_find", "permutation_sync"]


def _layout(detections: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    sizes = [d.shape[0] for d in detections]
    return np.repeat(np.arange(len(sizes)), sizes), np.concatenate([[0], np.cumsum(sizes)])


def _distance_matrix(dist: dict[tuple[int, int], np.ndarray], offsets: np.ndarray, N: int) -> np.ndarray:
    D = np.full((N, N), np.inf)
    for (v, w), d in dist.items():
        D[offsets[v] : offsets[v + 1], offsets[w] : offsets[w + 1]] = d
        D[offsets[w] : offsets[w + 1], offsets[v] : offsets[v + 1]] = d.T
    return D


def _prepare(
    cameras: Sequence[Camera], detections: Sequence[object], config: PruningConfig | None
) -> tuple[PruningConfig, list[np.ndarray], list[np.ndarray], np.ndarray, np.ndarray, dict]:
    """What every baseline starts from: the config, undistorted pixels and confidences per view, each
    vertex's view, the view offsets and the pairwise epipolar distances."""
    config = config or PruningConfig()
    dets = check_detections(detections, len(cameras))
    uv, conf = undistorted(cameras, dets, config.min_conf)
    view, offsets = _layout(dets)
    dist = pairwise_epipolar(cameras, uv, conf, config.min_conf, config.outlier_px)
    return config, uv, conf, view, offsets, dist


def _one_per_view(group: list[int], view: np.ndarray, D: np.ndarray) -> tuple[list[int], list[int]]:
    """Keep one detection per view (the one with the lowest mean finite distance to the others)."""
    keep, drop = [], []
    for v in np.unique(view[group]):
        members = [g for g in group if view[g] == v]
        if len(members) == 1:
            keep.append(members[0])
            continue
        others = [g for g in group if view[g] != v]

        def score(m: int, others: list[int] = others) -> float:
            d = D[m, others]
            d = d[np.isfinite(d)]
            return float(d.mean()) if d.size else np.inf

        best = min(members, key=score)
        keep.append(best)
        drop.extend(m for m in members if m != best)
    return sorted(keep, key=lambda g: view[g]), drop


def hungarian_union_find(
    cameras: Sequence[Camera], detections: Sequence[object], config: PruningConfig | None = None
) -> list[list[int]]:
    """Groups of vertex ids by pairwise Hungarian matching and union-find (module docstring)."""
    config, _, _, view, offsets, dist = _prepare(cameras, detections, config)
    N = int(view.size)
    parent = list(range(N))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for (v, w), d in dist.items():
        if d.size == 0:
            continue
        rows, cols = linear_sum_assignment(np.where(np.isfinite(d), d, 1e9))
        for i, j in zip(rows, cols):
            if d[i, j] < config.tau_epi:
                parent[find(offsets[v] + i)] = find(offsets[w] + j)
    clusters: dict[int, list[int]] = {}
    for a in range(N):
        clusters.setdefault(find(a), []).append(a)
    D = _distance_matrix(dist, offsets, N)
    groups = []
    for members in clusters.values():
        keep, drop = _one_per_view(members, view, D)
        groups.append(keep)
        groups.extend([m] for m in drop)
    return sorted(groups)


def permutation_sync(
    cameras: Sequence[Camera], detections: Sequence[object], config: PruningConfig | None = None
) -> list[list[int]]:
    """Groups of vertex ids by spectral permutation synchronisation (module docstring)."""
    config, _, _, view, offsets, dist = _prepare(cameras, detections, config)
    N = int(view.size)
    if N == 0:
        return []
    D = _distance_matrix(dist, offsets, N)
    W = np.where(np.isfinite(D), np.clip(1.0 - D / config.tau_epi, 0.0, None), 0.0)
    W[np.arange(N), np.arange(N)] = 1.0
    sizes = np.diff(offsets)
    k = int(sizes.max())
    _, vecs = np.linalg.eigh(W)
    U = vecs[:, -k:]
    U = U / np.maximum(np.linalg.norm(U, axis=1, keepdims=True), 1e-12)
    ref = int(np.argmax(sizes))
    Uref = U[offsets[ref] : offsets[ref + 1]]
    slot = np.full(N, -1)
    for v in range(len(cameras)):
        if sizes[v] == 0:
            continue
        S = U[offsets[v] : offsets[v + 1]] @ Uref.T  # similarity to the reference slots
        rows, cols = linear_sum_assignment(-S)
        for i, j in zip(rows, cols):
            if v == ref or S[i, j] > 0.5:
                slot[offsets[v] + i] = j
    groups = [list(np.flatnonzero(slot == j)) for j in range(k)]
    groups = [[int(g) for g in grp] for grp in groups if grp]
    groups.extend([int(a)] for a in np.flatnonzero(slot < 0))
    return sorted(groups)


def greedy_triangulation(
    cameras: Sequence[Camera],
    detections: Sequence[object],
    config: PruningConfig | None = None,
    radius: float = 300.0,
) -> list[list[int]]:
    """Groups of vertex ids by greedy clustering of pairwise triangulations (module docstring)."""
    config, uv, conf, view, offsets, dist = _prepare(cameras, detections, config)
    N = int(view.size)
    pairs = [
        (offsets[v] + i, offsets[w] + j)
        for (v, w), d in dist.items()
        for i, j in zip(*np.nonzero(d < config.tau_epi))
    ]
    if not pairs:
        return [[a] for a in range(N)]
    pa = np.array(pairs)
    all_uv, all_conf = np.concatenate(uv), np.concatenate(conf)
    Ps = np.stack([c.P for c in cameras])[view[pa]]
    X, err = robust_triangulate(Ps, all_uv[pa], all_conf[pa], config.outlier_px)
    cluster_of = np.full(N, -1)
    clusters: list[dict] = []
    for p in np.argsort(err, kind="stable"):
        if not np.isfinite(err[p]) or err[p] >= config.tau_rep:
            break
        a, b = (int(x) for x in pa[p])
        if cluster_of[a] >= 0 and cluster_of[b] >= 0:
            continue
        center = np.nanmean(X[p], axis=0)
        fits = []
        for ci, c in enumerate(clusters):
            views = c["views"]
            free = all(view[x] not in views for x in (a, b) if cluster_of[x] < 0)
            if (cluster_of[a] >= 0 and cluster_of[a] != ci) or (cluster_of[b] >= 0 and cluster_of[b] != ci):
                continue
            d = float(np.linalg.norm(np.mean(c["centers"], axis=0) - center))
            if free and d < radius:
                fits.append((d, ci))
        if fits:
            ci = min(fits)[1]
        elif cluster_of[a] < 0 and cluster_of[b] < 0:
            clusters.append({"members": [], "views": set(), "centers": []})
            ci = len(clusters) - 1
        else:
            continue
        c = clusters[ci]
        for x in (a, b):
            if cluster_of[x] < 0:
                cluster_of[x] = ci
                c["members"].append(x)
                c["views"].add(int(view[x]))
        c["centers"].append(center)
    groups = [sorted(c["members"]) for c in clusters]
    groups.extend([int(a)] for a in np.flatnonzero(cluster_of < 0))
    return sorted(groups)


BASELINES = {
    "hungarian": hungarian_union_find,
    "permsync": permutation_sync,
    "greedy": greedy_triangulation,
}
