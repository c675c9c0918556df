"""Time per update: max-min weighting vs linear scalarisation, MGDA, CAGrad and Nash-MTL.

One process, the same random gradient matrix ``G`` (``k`` tasks x ``d`` shared parameters, float32, with a
common component so tasks partly agree) for every method, methods interleaved within each repeat,
medians over repeats. An update is everything after the per-task gradients exist: the Gram matrix, the
method's weights and the combination ``beta^T G`` (linear scalarisation: ``G.sum(0)``). Also reports the
active-set iterations of the max-min solver. Writes ``benchmarks/results.md``.

    python packages/maxmin-mtl/benchmarks/bench_maxmin_mtl.py [--quick]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from paperworks.core import atomic_write_text
from paperworks.maxmin_mtl import MGDA, CAGrad, MaxMinWeighting, NashMTL, maxmin_weights

PEERS = ("ls", "mgda", "cagrad", "nashmtl")


def _update(name: str, G: torch.Tensor, losses: np.ndarray, methods: dict) -> torch.Tensor:
    if name == "ls":
        return G.sum(0)
    u, _ = methods[name].combine(G, losses)
    return u


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    tasks = (2, 10, 40)
    dims = (10_000, 100_000) if args.quick else (10_000, 100_000, 1_000_000)
    repeats = 3 if args.quick else args.repeats
    rows = []
    for d in dims:
        for k in tasks:
            gen = torch.Generator().manual_seed(k * 7919 + d)
            G = torch.randn(k, d, generator=gen) + 0.3 * torch.randn(1, d, generator=gen)
            G = G * torch.exp(torch.randn(k, 1, generator=gen))  # different loss scales
            losses = np.exp(np.random.default_rng(k).normal(size=k))
            methods = {
                "maxmin": MaxMinWeighting(k),
                "mgda": MGDA(k),
                "cagrad": CAGrad(k),
                "nashmtl": NashMTL(k),
            }
            times: dict[str, list[float]] = {m: [] for m in ("maxmin", *PEERS)}
            with torch.inference_mode():
                for m in times:  # warm-up
                    _update(m, G, losses, methods)
                for _ in range(repeats):
                    for m in times:
                        t0 = time.perf_counter()
                        _update(m, G, losses, methods)
                        times[m].append(time.perf_counter() - t0)
                iters = maxmin_weights(G, losses).iterations
                active = len(maxmin_weights(G, losses).active)
            med = {m: float(np.median(v)) * 1e3 for m, v in times.items()}
            rows.append((k, d, med, iters, active))
            print(
                f"k={k:3d} d={d:8d} "
                + " ".join(f"{m}={v:.2f}ms" for m, v in med.items())
                + f" iters={iters}",
                flush=True,
            )
    head = (
        "| tasks | shared params | max-min (ms) | LS (ms) | MGDA (ms) | CAGrad (ms) | Nash-MTL (ms) "
        "| ours / LS | ours / MGDA | ours / CAGrad | ours / Nash-MTL "
        "| active-set iterations | bottleneck tasks |"
    )
    lines = [head, "| " + " | ".join(["---"] * 13) + " |"]
    for k, d, med, iters, active in rows:
        ratios = " | ".join(f"{med['maxmin'] / med[p]:.2f}" for p in PEERS)
        lines.append(
            f"| {k} | {d:,} | {med['maxmin']:.2f} | {med['ls']:.2f} | {med['mgda']:.2f} "
            f"| {med['cagrad']:.2f} "
            f"| {med['nashmtl']:.2f} | {ratios} | {iters} | {active} |"
        )
    table = "\n".join(lines)
    note = (
        f"Median of {repeats} interleaved repeats, one CPU thread, float32 gradients; "
        "command: `python packages/maxmin-mtl/benchmarks/bench_maxmin_mtl.py"
        + (" --quick" if args.quick else "")
        + "`."
    )
    print(table)
    atomic_write_text(Path(__file__).with_name("results.md"), table + "\n\n" + note + "\n")


if __name__ == "__main__":
    main()
