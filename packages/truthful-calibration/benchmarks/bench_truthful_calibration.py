"""Side by side: our binned top-label ECE vs torchmetrics' MulticlassCalibrationError and netcal's
ECE, on the same inputs and the same 15 equal-width bins, in one process, interleaved, medians over
repeats. Also times our truthful classwise error (no peer computes it). Writes results.md.

Run: python benchmarks/bench_truthful_calibration.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from paperworks.core import atomic_write_text
from paperworks.truthful_calibration import top_label_ece, truthful_classwise_error

# n * k is capped at 1e7 entries: the 2-core, shared benchmark machine cannot hold 1e7 x 1000 floats.
SIZES = [(10_000, 10), (100_000, 10), (1_000_000, 10), (10_000, 100), (100_000, 100), (10_000, 1000)]
QUICK = [(10_000, 10), (10_000, 100)]
N_BINS = 15


def _peers():
    peers = {}
    try:
        import torch
        from torchmetrics.functional.classification import multiclass_calibration_error

        def tm(p32, y, k):
            with torch.inference_mode():
                return float(
                    multiclass_calibration_error(
                        torch.from_numpy(p32), torch.from_numpy(y), num_classes=k, n_bins=N_BINS
                    )
                )

        peers["torchmetrics"] = tm
    except ImportError:
        pass
    try:
        from netcal.metrics import ECE

        peers["netcal"] = lambda p32, y, k: float(ECE(bins=N_BINS).measure(p32, y))
    except ImportError:
        pass
    return peers


def _time(fn, repeats):
    out, times = None, []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    peers = _peers()
    rows = [
        "| n | classes | ours ECE (ms) | "
        + " | ".join(f"{p} (ms) | ours / {p} | abs diff vs {p}" for p in peers)
        + " | ours truthful classwise (ms) |",
        "| --- | --- | --- |" + " --- | --- | --- |" * len(peers) + " --- |",
    ]
    rng = np.random.default_rng(0)
    for n, k in QUICK if args.quick else SIZES:
        p32 = rng.dirichlet(np.full(k, 0.3), size=n).astype(np.float32)
        p32 /= p32.sum(axis=1, keepdims=True)
        y = rng.integers(0, k, size=n)
        repeats = 5 if n * k <= 1_000_000 else 3
        times = {"ours": [], **{name: [] for name in peers}}
        vals = {}
        for _ in range(repeats):  # interleave ours and the peers
            vals["ours"], t = _time(lambda p32=p32, y=y: top_label_ece(p32, y, n_bins=N_BINS), 1)
            times["ours"].append(t)
            for name, fn in peers.items():
                vals[name], t = _time(lambda fn=fn, p32=p32, y=y, k=k: fn(p32, y, k), 1)
                times[name].append(t)
        _, t_tce = _time(
            lambda p32=p32, y=y: truthful_classwise_error(p32, y, n_bins=N_BINS),
            1 if n * k > 1_000_000 else 3,
        )
        med = {key: statistics.median(v) * 1e3 for key, v in times.items()}
        cells = [f"{n:,}", str(k), f"{med['ours']:.1f}"]
        for name in peers:
            cells += [
                f"{med[name]:.1f}",
                f"{med['ours'] / med[name]:.2f}",
                f"{abs(vals['ours'] - vals[name]):.1e}",
            ]
        cells.append(f"{t_tce * 1e3:.1f}")
        rows.append("| " + " | ".join(cells) + " |")
        print(rows[-1], flush=True)
    table = "\n".join(rows)
    note = (
        f"\nTop-label ECE with {N_BINS} equal-width bins, float32 Dirichlet(0.3) probabilities, CPU, "
        "medians over 5 (3 for n*k > 1e6) interleaved repeats. Ratios below 1: ours is faster.\n"
    )
    print(table)
    atomic_write_text(Path(__file__).with_name("results.md"), table + "\n" + note)


if __name__ == "__main__":
    main()
