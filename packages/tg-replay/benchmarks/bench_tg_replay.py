"""Side-by-side sampling throughput: TG vs uniform vs our sum-tree PER vs TorchRL's PrioritizedSampler.

For each buffer size (10^4 .. 10^7) and batch 256, every sampler draws storage indices from a full
buffer; the four are timed round-robin in one process (interleaved, so machine load hits all of
them alike) and the median over repeats is reported as samples per second. The ring-buffer gather
of the batch (identical for every sampler) is timed separately and shown as context. Writes the
markdown table to ``benchmarks/results.md``.

Run: ``python packages/tg-replay/benchmarks/bench_tg_replay.py [--quick]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from paperworks.core import atomic_write_text
from paperworks.tg_replay import PrioritizedSampler, RingBuffer, TruncatedGeometricSampler, UniformSampler

BATCH = 256


def _torchrl_per(size: int):
    try:
        import torch
        from torchrl.data import LazyTensorStorage
        from torchrl.data.replay_buffers.samplers import PrioritizedSampler as TorchRLPER
    except ImportError:
        return None
    storage = LazyTensorStorage(size)
    storage.set(torch.arange(size), torch.zeros(size))
    sampler = TorchRLPER(max_capacity=size, alpha=0.6, beta=0.4)
    sampler.extend(torch.arange(size))
    prio = torch.rand(size) + 0.01
    sampler.update_priority(torch.arange(size), prio)

    def draw() -> None:
        with torch.inference_mode():
            sampler.sample(storage, BATCH)

    return draw


def bench(size: int, repeats: int, seed: int = 0) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    tg_buf = RingBuffer(size, (), sampler=TruncatedGeometricSampler.from_expected_age(0.1 * size), seed=seed)
    u_buf = RingBuffer(size, (), sampler=UniformSampler(), seed=seed)
    per = PrioritizedSampler(size, alpha=0.6, beta=0.4)
    for b in (tg_buf, u_buf):  # fill the cursor/size bookkeeping only (no per-transition data needed)
        b.size, b.cursor = size, int(rng.integers(0, size))
    per.add(np.arange(size))
    per.update_priorities(np.arange(size), rng.random(size))
    obs = np.zeros((size, 4), np.float32)
    fns = {
        "tg": lambda: tg_buf.sample_slots(BATCH),
        "uniform": lambda: u_buf.sample_slots(BATCH),
        "per (ours)": lambda: per.sample(BATCH, rng=rng),
    }
    peer = _torchrl_per(size)
    if peer is not None:
        fns["per (torchrl)"] = peer
    idx = rng.integers(0, size, BATCH)
    fns["gather 256x4 (context)"] = lambda: obs[idx]
    times: dict[str, list[float]] = {k: [] for k in fns}
    for f in fns.values():
        f()
    names = list(fns)
    for r in range(repeats):
        for k in names[r % len(names) :] + names[: r % len(names)]:
            t0 = time.perf_counter()
            fns[k]()
            times[k].append(time.perf_counter() - t0)
    out = {k: float(np.median(v)) for k, v in times.items()}
    # TG vs uniform alone, interleaved pairwise: no big-memory sampler between them evicting caches
    pair: dict[str, list[float]] = {"tg": [], "uniform": []}
    for r in range(2 * repeats):
        for k in ("tg", "uniform") if r % 2 == 0 else ("uniform", "tg"):
            t0 = time.perf_counter()
            fns[k]()
            pair[k].append(time.perf_counter() - t0)
    out["pair ratio"] = float(np.median(pair["tg"]) / np.median(pair["uniform"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="sizes 1e4, 1e5 and fewer repeats")
    args = ap.parse_args()
    sizes = [10**4, 10**5] if args.quick else [10**4, 10**5, 10**6, 10**7]
    repeats = 100 if args.quick else 400
    rows = [
        "| buffer size | TG (samples/s) | uniform (samples/s) | our PER (samples/s) "
        "| TorchRL PER (samples/s) | TG / uniform (time) | TG / uniform, pair only (time) "
        "| TG / our PER (time) | TG / TorchRL PER (time) | gather (µs, context) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    with threadpool_limits(limits=1, user_api="blas"):
        for size in sizes:
            t = bench(size, repeats)
            peer = t.get("per (torchrl)", float("nan"))
            rows.append(
                f"| {size:.0e} | {BATCH / t['tg']:,.0f} | {BATCH / t['uniform']:,.0f} | "
                f"{BATCH / t['per (ours)']:,.0f} | {BATCH / peer:,.0f} | {t['tg'] / t['uniform']:.2f} | "
                f"{t['pair ratio']:.2f} | {t['tg'] / t['per (ours)']:.3f} | {t['tg'] / peer:.3f} | "
                f"{1e6 * t['gather 256x4 (context)']:.1f} |"
            )
            print(rows[-1], flush=True)
    table = "\n".join(rows)
    note = (
        f"Batch {BATCH}, medians over {repeats} interleaved repeats, one process, BLAS on 1 thread. "
        "Index sampling only (the gather of the batch is the same for every sampler; its time is the last "
        "column). The four samplers are timed round-robin; 'pair only' times TG and uniform alone, "
        "alternating, with no PER call between them. "
        "Command: `python packages/tg-replay/benchmarks/bench_tg_replay.py`"
        + (" --quick" if args.quick else "")
        + "\n"
    )
    print(table)
    atomic_write_text(Path(__file__).with_name("results.md"), table + "\n\n" + note)


if __name__ == "__main__":
    main()
