"""Side by side: the cover solvers per frame, and our batched DLT against OpenCV and aniposelib.

    uv run python packages/compose-pose/benchmarks/bench_compose_pose.py [--quick]
    uv run paperworks bench compose-pose [--quick]

Three :func:`paperworks.core.bench.compare` calls:

1. **Solvers vs people** (2, 5, 10 people, 5 views) and 2. **vs views** (3, 5, 8 views, 5 people): one
   generated frame per size (occlusion 0.25, seed 0), its hypergraph built once outside the timing; each
   side solves the same weighted exact cover: BP (ours, NumPy), HiGHS through ``scipy.optimize.milp``
   and OR-Tools CP-SAT (one worker). The cover costs go in a table beside the timings.
3. **Triangulation** of 15-joint skeletons seen in 2 views (100, 1,000, 10,000 joints): our batched DLT
   (:func:`triangulate_batch`), ``cv2.triangulatePoints`` (2 views) and aniposelib's
   ``CameraGroup.triangulate`` (on normalised coordinates, its undistortion done outside the timing).
   Inputs are noiseless projections, so all three must return the true points (checked to 1e-6 of the
   scene's scale before timing).

aniposelib, OpenCV and OR-Tools are optional (extras ``bench``, ``cpsat``); missing peers are skipped.
Full mode writes ``benchmarks/results.json`` and ``results.md``; ``--quick`` (smallest size only, 3
rounds) writes them to a temporary folder.
"""

from __future__ import annotations

import argparse

import numpy as np

from paperworks.compose_pose import (
    PruningConfig,
    SceneConfig,
    build_hypergraph,
    make_frame,
    make_rig,
    solve_bp,
    solve_cpsat,
    solve_ilp,
    triangulate_batch,
)
from paperworks.core.bench import compare, publish

try:
    import ortools
except ImportError:  # optional peer
    ortools = None
try:
    import cv2
except ImportError:
    cv2 = None
try:
    import aniposelib.cameras as anipose
except ImportError:
    anipose = None

PEOPLE = (2, 5, 10)
VIEWS = (3, 5, 8)
JOINTS = (100, 1000, 10000)


def frame_hypergraph(size: tuple[int, int]):
    people, views = size
    scene = SceneConfig(n_views=(views, views), n_people=(people, people), occlusion=0.25)
    frame = make_frame(scene, np.random.default_rng(0))
    return build_hypergraph(frame.cameras, frame.detections, PruningConfig())


def solver_sides() -> dict:
    sides = {"bp": lambda hg: solve_bp(hg).chosen, "highs": solve_ilp}
    if ortools is not None:
        sides["cpsat"] = solve_cpsat
    return sides


class TriInput:
    """``n`` noiseless points seen by 2 cameras of a generated rig, in every side's own format."""

    def __init__(self, n: int) -> None:
        rng = np.random.default_rng(n)
        self.cams = make_rig(2, rng=rng)
        self.X = rng.uniform([-2000, -2000, 0], [2000, 2000, 1900], size=(n, 3))
        uv = np.stack([c.project(self.X) for c in self.cams])  # (2, n, 2)
        self.uv = uv
        J = 15
        B = n // J
        self.P = np.broadcast_to(np.stack([c.P for c in self.cams])[None], (B, 2, 3, 4))
        self.uv_b = uv[:, : B * J].reshape(2, B, J, 2).transpose(1, 0, 2, 3).copy()
        self.conf_b = np.ones((B, 2, J))
        self.X_b = self.X[: B * J].reshape(B, J, 3)
        # aniposelib triangulates normalised coordinates (its undistort step makes them): made here, outside
        # the timing
        self.uv_norm = np.stack(
            [(u - c.K[:2, 2]) / np.array([c.K[0, 0], c.K[1, 1]]) for u, c in zip(uv, self.cams)]
        )
        if anipose is not None:
            self.group = anipose.CameraGroup(
                [
                    anipose.Camera(
                        matrix=c.K,
                        dist=np.zeros(5),
                        size=c.size,
                        rvec=cv2.Rodrigues(c.R)[0].ravel(),
                        tvec=c.t,
                    )
                    for c in self.cams
                ]
            )


def ours_tri(inp: TriInput) -> np.ndarray:
    return triangulate_batch(inp.P, inp.uv_b, inp.conf_b)


def opencv_tri(inp: TriInput) -> np.ndarray:
    h = cv2.triangulatePoints(inp.cams[0].P, inp.cams[1].P, inp.uv[0].T.copy(), inp.uv[1].T.copy())
    return (h[:3] / h[3]).T


def anipose_tri(inp: TriInput) -> np.ndarray:
    return inp.group.triangulate(inp.uv_norm, undistort=False, progress=False)


def make_tri_input(n: int) -> TriInput:
    inp = TriInput(n)
    scale = 1e-6 * np.abs(inp.X).max()
    assert np.abs(ours_tri(inp) - inp.X_b).max() < scale, "our DLT is not exact on noiseless points"
    if cv2 is not None:
        assert np.abs(opencv_tri(inp) - inp.X).max() < scale, "cv2.triangulatePoints is not exact"
    if anipose is not None:
        assert np.abs(anipose_tri(inp) - inp.X).max() < scale, "aniposelib is not exact"
    return inp


def run(quick: bool):
    kw = {"warmup": 1, "repeats": 3} if quick else {"warmup": 2, "repeats": 15}
    sizes_p = PEOPLE[:1] if quick else PEOPLE
    sizes_v = VIEWS[:1] if quick else VIEWS
    sides = solver_sides()
    peers = [s for s in sides if s != "bp"]
    results = [
        compare(
            sides,
            frame_hypergraph,
            [(p, 5) for p in sizes_p],
            ours="bp",
            peer=peers,
            name="cover solvers vs people (5 views)",
            size_label="(people, views)",
            **kw,
        ),
        compare(
            sides,
            frame_hypergraph,
            [(5, v) for v in sizes_v],
            ours="bp",
            peer=peers,
            name="cover solvers vs views (5 people)",
            size_label="(people, views)",
            **kw,
        ),
    ]
    tri = {"ours": ours_tri}
    if cv2 is not None:
        tri["opencv"] = opencv_tri
    if anipose is not None:
        tri["aniposelib"] = anipose_tri
    if len(tri) > 1:
        results.append(
            compare(
                tri,
                make_tri_input,
                JOINTS[:1] if quick else JOINTS,
                ours="ours",
                name="triangulation, 2 views",
                size_label="joints",
                **kw,
            )
        )
    rows = [
        "| (people, views) | hyperedges | BP cost | HiGHS cost | CP-SAT cost |",
        "| --- | --- | --- | --- | --- |",
    ]
    for size in sorted({(p, 5) for p in sizes_p} | {(5, v) for v in sizes_v}):
        hg = frame_hypergraph(size)
        cells = [hg.cover_cost(solve_bp(hg).chosen), hg.cover_cost(solve_ilp(hg))]
        cells.append(hg.cover_cost(solve_cpsat(hg)) if ortools is not None else float("nan"))
        rows.append(f"| {size} | {hg.n_edges} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    return results, {
        "Cover cost of each solver on the timed frames (lower is better; HiGHS is exact)": "\n".join(rows)
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick", action="store_true", help="smallest size only, 3 rounds, results to a temp folder"
    )
    args = ap.parse_args()
    results, tables = run(args.quick)
    publish(results, __file__, quick=args.quick, title="compose-pose benchmarks", tables=tables)


if __name__ == "__main__":
    main()
