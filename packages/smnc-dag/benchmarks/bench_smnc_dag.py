"""Side by side: SMNC (ours) vs DAGMA (the `dagma` package) and NOTEARS on linear Gaussian ER2 SEMs.

Same data, one process, interleaved, medians over repeats. Fit time is wall-clock; peak memory is
tracemalloc's peak of Python/NumPy allocations during the fit (both solvers are NumPy). Recovery at
an equal budget: DAGMA run with our iteration schedule (T=4 stages, 500/500/500/1000 Adam steps)
next to DAGMA's default schedule (T=5, 3e4 warm and 6e4 final steps, early stopping).

    python packages/smnc-dag/benchmarks/bench_smnc_dag.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc
from pathlib import Path

import numpy as np

from paperworks.core import atomic_write_text
from paperworks.smnc_dag import SMNC
from paperworks.smnc_dag.baselines import dagma_linear, notears_linear
from paperworks.smnc_dag.data import simulate_dag, simulate_linear_sem, simulate_weights
from paperworks.smnc_dag.metrics import count_accuracy


def measure(fn):
    tracemalloc.start()
    t0 = time.perf_counter()
    B = fn()
    dt = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return B, dt, peak


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    plan = [(10, 1, ("notears",)), (20, 3, ("dagma-default", "dagma-equal")), (50, 1, ("dagma-equal",))]
    if not args.quick:
        plan.append((100, 1, ("dagma-equal",)))
    else:
        plan = [(8, 1, ("dagma-equal",))]
    peers = {
        "notears": lambda X: notears_linear(X) != 0,
        "dagma-default": lambda X: dagma_linear(X) != 0,
        "dagma-equal": lambda X: (
            dagma_linear(X, T=4, s=[1.0, 0.9, 0.8, 0.7], warm_iter=500, max_iter=1000) != 0
        ),
    }
    rows = [
        "| d | peer | repeats | SMNC time (s) | peer time (s) | time ratio (ours/peer) | SMNC peak MiB | "
        "peer peak MiB | memory ratio | SMNC SHD | peer SHD |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for d, repeats, names in plan:
        rng = np.random.default_rng(d)
        B = simulate_dag(d, 2, "ER", rng)
        X = simulate_linear_sem(simulate_weights(B, rng), 1000, rng)
        res = {k: [] for k in ("smnc", *names)}
        for _ in range(repeats):  # interleaved
            res["smnc"].append(measure(lambda X=X: SMNC().fit(X).graph_))
            for name in names:
                res[name].append(measure(lambda name=name, X=X: peers[name](X)))
        ours_t = statistics.median(r[1] for r in res["smnc"])
        ours_m = statistics.median(r[2] for r in res["smnc"])
        ours_shd = count_accuracy(B, res["smnc"][0][0])["shd"]
        for name in names:
            t = statistics.median(r[1] for r in res[name])
            m = statistics.median(r[2] for r in res[name])
            shd = count_accuracy(B, res[name][0][0])["shd"]
            rows.append(
                f"| {d} | {name} | {repeats} | {ours_t:.2f} | {t:.2f} | {ours_t / t:.2f} | {ours_m:.2f} | "
                f"{m:.2f} | {ours_m / m:.2f} | {ours_shd:g} | {shd:g} |"
            )
            print(rows[-1], flush=True)
    table = "\n".join(rows)
    print(table)
    if not args.quick:
        atomic_write_text(Path(__file__).with_name("results.md"), table + "\n")


if __name__ == "__main__":
    main()
