"""Time per update: max-min weighting vs linear scalarisation, MGDA, CAGrad and Nash-MTL.

One question, one :func:`paperworks.core.bench.compare` call: per size (``k`` tasks x ``d`` shared
parameters) one random float32 gradient matrix ``G`` (with a common component so tasks partly agree,
and per-task scales so losses differ) is built once and shared by every method; an update is
everything after the per-task gradients exist: the Gram matrix, the method's weights and the
combination ``beta^T G`` (linear scalarisation: ``G.sum(0)``, no Gram matrix). Methods are timed in
interleaved rounds, one thread, under ``torch.inference_mode()``. The active-set iterations and the
bottleneck set of the max-min solver on the same inputs go in a table beside the timings.

    uv run python packages/maxmin-mtl/benchmarks/bench_maxmin_mtl.py [--quick]
    uv run paperworks bench maxmin-mtl [--quick]

Full mode writes ``benchmarks/results.json`` and ``results.md``; ``--quick`` (the smallest size, 3
rounds, 1 warm-up call) writes them to a temporary folder and prints the markdown.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from paperworks.core.bench import compare, publish
from paperworks.maxmin_mtl import MGDA, CAGrad, MaxMinWeighting, NashMTL, maxmin_weights

TASKS = (2, 10, 40)
DIMS = (10_000, 100_000, 1_000_000)
SIZES = tuple((k, d) for d in DIMS for k in TASKS)  # (tasks, shared parameters), as the old table
OURS = "max-min"
NAMES = {"ls": "LS", "mgda": "MGDA", "cagrad": "CAGrad", "nashmtl": "Nash-MTL"}


def make_input(size: tuple[int, int]) -> dict:
    """The shared input of one size: gradients ``G`` ``(k, d)``, losses ``(k,)`` and the methods."""
    k, d = size
    gen = torch.Generator().manual_seed(k * 7919 + d)
    G = torch.randn(k, d, generator=gen) + 0.3 * torch.randn(1, d, generator=gen)
    G = G * torch.exp(torch.randn(k, 1, generator=gen))  # different loss scales
    losses = np.exp(np.random.default_rng(k).normal(size=k))
    methods = {"maxmin": MaxMinWeighting(k), "mgda": MGDA(k), "cagrad": CAGrad(k), "nashmtl": NashMTL(k)}
    return {"G": G, "losses": losses, "methods": methods}


def _combine(key: str):
    def side(inp: dict) -> torch.Tensor:
        u, _ = inp["methods"][key].combine(inp["G"], inp["losses"])
        return u

    return side


SIDES = {
    OURS: _combine("maxmin"),
    NAMES["ls"]: lambda inp: inp["G"].sum(0),
    NAMES["mgda"]: _combine("mgda"),
    NAMES["cagrad"]: _combine("cagrad"),
    NAMES["nashmtl"]: _combine("nashmtl"),
}


def solver_table(sizes) -> str:
    """Active-set iterations and bottleneck-set size of the max-min solver on the benchmark inputs."""
    rows = [
        "| tasks | shared params | active-set iterations | bottleneck tasks |",
        "| --- | --- | --- | --- |",
    ]
    for k, d in sizes:
        inp = make_input((k, d))
        with torch.inference_mode():
            res = maxmin_weights(inp["G"], inp["losses"])
        rows.append(f"| {k} | {d:,} | {res.iterations} | {len(res.active)} |")
    return "\n".join(rows)


def run(sizes, *, repeats: int, warmup: int) -> list:
    with torch.inference_mode():
        res = compare(
            SIDES,
            make_input,
            sizes,
            ours=OURS,
            name="Time per update (Gram matrix, weights, beta^T G)",
            warmup=warmup,
            repeats=repeats,
            threads=1,
            size_label="tasks × shared params",
            note=(
                "Same float32 gradient matrix for every method at each size; one update = Gram matrix "
                "(float64) + the method's weights + `beta^T G` (LS: `G.sum(0)`, no Gram matrix). The k "
                "per-task backward passes that every gradient method needs in training are left out. "
                "Measured on a 2-core machine shared with other jobs."
            ),
        )
    return [res]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smallest size, 3 rounds, results to a temp folder")
    args = ap.parse_args()
    sizes = SIZES[:1] if args.quick else SIZES
    repeats, warmup = (3, 1) if args.quick else (20, 2)
    results = run(sizes, repeats=repeats, warmup=warmup)
    tables = {"Max-min solver on the same inputs": solver_table(sizes)}
    title = "maxmin-mtl benchmarks"
    publish(results, __file__, quick=args.quick, title=title, tables=tables)


if __name__ == "__main__":
    main()
