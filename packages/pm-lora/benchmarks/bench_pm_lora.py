"""Side by side: PM-LoRA vs O-LoRA vs per-task LoRA as the number of tasks grows to 50.

One process, one MLP backbone (64 -> 128 -> 128 -> 10, adapters on fc1 and fc2), random task data of
600 inputs, full-batch Adam. The three methods run interleaved task by task. For each method and
checkpoint (1, 5, 10, 20, 50 tasks) we report stored adapter parameters and bytes, the median
wall time of one training step (forward + backward + update, median over the task's steps), and the
median time of the end-of-task step (PM-LoRA: spectral merge by truncated SVD; the others: freezing),
repeated ``--repeats`` times on copies of the state. Writes a markdown table to
``benchmarks/results.md``.

    python packages/pm-lora/benchmarks/bench_pm_lora.py [--steps 20] [--repeats 15]
"""

from __future__ import annotations

import argparse
import copy
import platform
import statistics
import time
from pathlib import Path

import torch
from torch.nn import functional as F

from paperworks.core import atomic_write_text
from paperworks.pm_lora import MLP, OLoRA, PerTaskLoRA, PMLoRA, PMLoRAConfig
from paperworks.pm_lora.training import Adam

TM = ("fc1", "fc2")
CHECKPOINTS = (1, 5, 10, 20, 50)


def _make(name: str):
    torch.manual_seed(0)
    if name == "PM-LoRA":
        return PMLoRA(MLP(), PMLoRAConfig(rank=16, task_rank=4, target_modules=TM))
    if name == "O-LoRA":
        return OLoRA(MLP(), TM, task_rank=4, lam=0.5)
    return PerTaskLoRA(MLP(), TM, task_rank=4)


def _task(adapter, x, y, steps: int) -> list[float]:
    adapter.begin_task()
    opt = Adam(list(adapter.trainable_parameters()), lr=5e-3)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        (F.cross_entropy(adapter(x), y) + adapter.penalty()).backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    return times


def _end_task_time(adapter, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        a = copy.deepcopy(adapter)
        t0 = time.perf_counter()
        a.end_task()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)
    names = ("PM-LoRA", "O-LoRA", "per-task LoRA")
    adapters = {n: _make(n) for n in names}
    rows: dict[tuple[str, int], dict[str, float]] = {}
    for t in range(1, max(CHECKPOINTS) + 1):
        x = torch.randn(600, 64, generator=gen)
        y = torch.randint(0, 10, (600,), generator=gen)
        order = names if t % 2 else names[::-1]  # alternate who runs first
        for n in order:
            a = adapters[n]
            step_times = _task(a, x, y, args.steps)
            end_s = _end_task_time(a, args.repeats) if t in CHECKPOINTS else float("nan")
            a.end_task()
            if t in CHECKPOINTS:
                rows[(n, t)] = {
                    "params": a.stored_parameters(),
                    "bytes": a.stored_bytes(),
                    "step_ms": 1e3 * statistics.median(step_times),
                    "end_ms": 1e3 * end_s,
                }
    lines = [
        f"Stored adapter size and time per task vs number of tasks (MLP 64-128-128-10, adapters on fc1, fc2; "
        f"{args.steps} full-batch steps of 600 inputs per task; medians; "
        f"torch {torch.__version__.split('+')[0]}, "
        f"{platform.machine()}, 1 thread).",
        "",
        "| tasks | method | stored params | stored KiB | train step (ms) | end-of-task (ms) "
        "| params ratio PM / this | step-time ratio PM / this |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for t in CHECKPOINTS:
        pm = rows[("PM-LoRA", t)]
        for n in names:
            r = rows[(n, t)]
            lines.append(
                f"| {t} | {n} | {r['params']:,} | {r['bytes'] / 1024:.1f} | {r['step_ms']:.3f} "
                f"| {r['end_ms']:.3f} "
                f"| {pm['params'] / r['params']:.3f} | {pm['step_ms'] / r['step_ms']:.2f} |"
            )
    pm_ratio = [rows[("PM-LoRA", t)]["end_ms"] / rows[("PM-LoRA", t)]["step_ms"] for t in CHECKPOINTS]
    lines += [
        "",
        f"PM-LoRA merge step / one training step: median {statistics.median(pm_ratio):.2f}x "
        f"(range {min(pm_ratio):.2f}-{max(pm_ratio):.2f} over the checkpoints); one merge per task of "
        f"{args.steps} steps.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    atomic_write_text(Path(__file__).with_name("results.md"), text)


if __name__ == "__main__":
    main()
