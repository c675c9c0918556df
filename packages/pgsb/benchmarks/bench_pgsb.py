"""Merge wall time and peak memory: PGSB vs TIES and KnOTS here, vs peft's add_weighted_adapter (ties, svd).

One process, same adapters, interleaved, median over repeats (3; 1 at d = 4096); layers d x d, K adapters
of rank 8. Memory is not measured (torch's CPU allocator is invisible to tracemalloc): the last two
columns are the analytic size of the largest intermediate, the K dense updates for TIES here versus the
low-rank stacks PGSB works on. Run: python benchmarks/bench_pgsb.py
"""

from __future__ import annotations

import statistics
import time
from functools import partial
from pathlib import Path

import torch
from torch import nn

from paperworks.core import atomic_write_text
from paperworks.pgsb import LoRAAdapter, merge
from paperworks.pgsb.peft_interop import peft_merge

SIZES = ((256, 2), (256, 16), (1024, 4), (1024, 16), (4096, 2))
RANK, REPEATS = 8, 3


def main() -> str:
    torch.set_num_threads(2)
    rows = [
        "| d | K | PGSB (s) | TIES here (s) | KnOTS here (s) | peft ties (s) | peft svd (s) "
        "| PGSB / peft ties | PGSB / peft svd | dense MiB (TIES) | low-rank MiB (PGSB) |",
        "| --- " * 11 + "|",
    ]
    for d, K in SIZES:
        g = torch.Generator().manual_seed(d + K)
        base = nn.Sequential(nn.Linear(d, d, bias=False))
        ads = [
            {
                "0": LoRAAdapter(
                    torch.randn(RANK, d, generator=g) / d**0.5, torch.randn(d, RANK, generator=g), alpha=16.0
                )
            }
            for _ in range(K)
        ]
        routes = {
            "pgsb": partial(merge, base, ads, "pgsb", output="delta"),
            "ties": partial(merge, base, ads, "ties", output="delta"),
            "knots": partial(merge, base, ads, "knots", output="delta"),
            "peft_ties": partial(peft_merge, base, ads, "ties"),
            "peft_svd": partial(peft_merge, base, ads, "svd"),
        }
        times: dict[str, list[float]] = {k: [] for k in routes}
        reps = 1 if d >= 4096 else REPEATS
        if d < 4096:  # warm-up (lazy linalg initialisation) outside the timed repeats
            for fn in routes.values():
                fn()
        for _ in range(reps):
            for name, fn in routes.items():
                t = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t)
        med = {k: statistics.median(v) for k, v in times.items()}
        dense_mib = K * d * d * 4 / 2**20
        lowrank_mib = (K * RANK) * 2 * d * 4 / 2**20
        rows.append(
            f"| {d} | {K} | {med['pgsb']:.3f} | {med['ties']:.3f} | {med['knots']:.3f} | "
            f"{med['peft_ties']:.3f} | {med['peft_svd']:.3f} | {med['pgsb'] / med['peft_ties']:.3g} | "
            f"{med['pgsb'] / med['peft_svd']:.3g} | {dense_mib:.0f} | {lowrank_mib:.1f} |"
        )
        print(rows[-1], flush=True)
    table = "\n".join(rows)
    atomic_write_text(Path(__file__).with_name("results.md"), table + "\n")
    return table


if __name__ == "__main__":
    print(main())
