"""Side by side: PENEXLoss vs torch.nn.CrossEntropyLoss, forward + backward per batch, and memory.

Batch 256, 10 to 10,000 classes, float32 on the CPU, one process, the two losses interleaved
(alternating which runs first) with medians over repeats. Memory: bytes the loss keeps alive for
backward (saved tensors of the autograd graph), measured with ``torch.autograd.graph.saved_tensors_hooks``.
Writes a markdown table to ``benchmarks/results.md``.

    python packages/penex/benchmarks/bench_penex.py [--repeats 30]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from pathlib import Path

import torch
from torch import nn

from paperworks.core import atomic_write_text
from paperworks.penex import PENEXLoss


def _time_once(loss_fn: nn.Module, f: torch.Tensor, y: torch.Tensor) -> float:
    f.grad = None
    t0 = time.perf_counter()
    loss_fn(f, y).backward()
    return time.perf_counter() - t0


def _saved_bytes(loss_fn: nn.Module, f: torch.Tensor, y: torch.Tensor) -> int:
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        if t.data_ptr() != f.data_ptr():  # the input itself is not extra memory
            seen[t.data_ptr()] = t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = loss_fn(f, y)
    del loss
    return sum(seen.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    ce, penex = nn.CrossEntropyLoss(), PENEXLoss()
    rows = [
        "| classes | CE fwd+bwd (ms) | PENEX fwd+bwd (ms) | ratio PENEX / CE "
        "| CE saved (KiB) | PENEX saved (KiB) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for c in (10, 100, 1000, 10_000):
        f = torch.randn(args.batch, c).requires_grad_()
        y = torch.randint(0, c, (args.batch,))
        for _ in range(3):  # warm-up
            _time_once(ce, f, y)
            _time_once(penex, f, y)
        t_ce, t_px = [], []
        reps = args.repeats if c < 10_000 else max(5, args.repeats // 3)
        for r in range(reps):
            pair = ((ce, t_ce), (penex, t_px)) if r % 2 == 0 else ((penex, t_px), (ce, t_ce))
            for fn, acc in pair:
                acc.append(_time_once(fn, f, y))
        m_ce, m_px = statistics.median(t_ce) * 1e3, statistics.median(t_px) * 1e3
        b_ce, b_px = _saved_bytes(ce, f, y), _saved_bytes(penex, f, y)
        rows.append(
            f"| {c} | {m_ce:.3f} | {m_px:.3f} | {m_px / m_ce:.2f} | {b_ce / 1024:.1f} | {b_px / 1024:.1f} |"
        )
        print(rows[-1], flush=True)
    header = (
        f"Batch {args.batch}, float32, CPU ({platform.machine()}, 1 thread), torch "
        f"{torch.__version__.split('+')[0]}; medians over {args.repeats} interleaved repeats "
        f"({max(5, args.repeats // 3)} at 10,000 classes). Command: "
        "`python packages/penex/benchmarks/bench_penex.py`\n\n"
    )
    table = header + "\n".join(rows) + "\n"
    print(table)
    atomic_write_text(Path(__file__).with_name("results.md"), table)


if __name__ == "__main__":
    main()
