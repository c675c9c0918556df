"""Side by side: our binned top-label ECE vs torchmetrics' multiclass_calibration_error and netcal's ECE.

Same float32 Dirichlet(0.3) probabilities and labels for every side, the same 15 equal-width bins,
one process, CPU, one thread (torch and BLAS pinned by the harness), under ``torch.inference_mode``.
Sizes ``n x k`` from 10,000 x 10 to 1,000,000 x 10 and 10,000 x 1,000, capped at n * k = 10^7
entries (the shared 2-core machine cannot hold 10^7 x 1,000 floats). Three questions, one
:func:`paperworks.core.bench.compare` each:

* top-label ECE: ours (``top_label_ece``) vs torchmetrics (``torch.from_numpy`` of both arrays, then
  ``multiclass_calibration_error``) vs netcal (``ECE(bins=15).measure``);
* input handling, timed apart from the computation: our input checks (``as_probs`` + ``as_labels``:
  a float64 copy, finiteness, non-negativity, row sums, label range), netcal's ``ECE.prepare`` (its
  checks, the top-label confidence and hit extraction, and the bin bounds, all of which ``measure``
  runs first) and torchmetrics' input conversion here (``torch.from_numpy`` of both arrays);
* our truthful classwise error (no peer computes it) against our own top-label ECE, as a cost ratio.

Quality table: the values every side returns on the same inputs (the agreement check).

    uv run python packages/truthful-calibration/benchmarks/bench_truthful_calibration.py [--quick]
    uv run paperworks bench truthful-calibration [--quick]

``--quick``: 10,000 x 10 only, 3 rounds after 1 warm-up call, results written to a temporary folder
(the committed ``benchmarks/results.*`` are left alone) and printed.
"""

from __future__ import annotations

import argparse
import functools
import tempfile
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from paperworks.core.bench import compare, results_markdown, write_results
from paperworks.truthful_calibration import top_label_ece, truthful_classwise_error
from paperworks.truthful_calibration._inputs import as_labels, as_probs

SIZES = ((10_000, 10), (100_000, 10), (1_000_000, 10), (10_000, 100), (100_000, 100), (10_000, 1000))
N_BINS = 15
REPEATS, WARMUP = 20, 2
TRUTHFUL_REPEATS, TRUTHFUL_WARMUP = 10, 1
TITLE = "truthful-calibration benchmarks"
SETUP = (
    f"float32 Dirichlet(0.3) probabilities (rows renormalised) and uniform labels, {N_BINS} bins, CPU, "
    "one thread; size = n samples × k classes."
)

try:
    import torch
    from torchmetrics.functional.classification import multiclass_calibration_error
except ImportError:  # the 'peer' extra is missing
    torch = None
try:
    from netcal.metrics import ECE
except ImportError:
    ECE = None


@functools.cache
def make_input(size: tuple[int, int]) -> SimpleNamespace:
    """Probabilities ``(n, k)`` float32 and labels ``(n,)`` int64, seeded by the size; built once."""
    n, k = size
    rng = np.random.default_rng([n, k])
    p = rng.dirichlet(np.full(k, 0.3), size=n).astype(np.float32)
    p /= p.sum(axis=1, keepdims=True)
    return SimpleNamespace(p=p, y=rng.integers(0, k, size=n), k=k)


def ours_ece(x: SimpleNamespace) -> float:
    return top_label_ece(x.p, x.y, n_bins=N_BINS)


def torchmetrics_ece(x: SimpleNamespace) -> float:
    p, y = torch.from_numpy(x.p), torch.from_numpy(x.y)
    return float(multiclass_calibration_error(p, y, num_classes=x.k, n_bins=N_BINS))


def netcal_ece(x: SimpleNamespace) -> float:
    return float(ECE(bins=N_BINS).measure(x.p, x.y))


def ours_checks(x: SimpleNamespace) -> Any:
    p = as_probs(x.p)
    return p, as_labels(x.y, *p.shape)


def netcal_prepare(x: SimpleNamespace) -> Any:
    return ECE(bins=N_BINS).prepare(x.p, x.y)


def torch_conversion(x: SimpleNamespace) -> Any:
    return torch.from_numpy(x.p), torch.from_numpy(x.y)


def ours_truthful(x: SimpleNamespace) -> float:
    return truthful_classwise_error(x.p, x.y, n_bins=N_BINS)


def peer_sides() -> tuple[dict[str, Callable], dict[str, Callable], list[str]]:
    """(ECE sides, input-handling sides, notes on missing peers)."""
    ece: dict[str, Callable] = {"ours": ours_ece}
    inputs: dict[str, Callable] = {"ours: input checks": ours_checks}
    missing = []
    if torch is not None:
        ece["torchmetrics"] = torchmetrics_ece
        inputs["torchmetrics: torch.from_numpy"] = torch_conversion
    else:
        missing.append("torchmetrics not installed: its sides were skipped")
    if ECE is not None:
        ece["netcal"] = netcal_ece
        inputs["netcal: ECE.prepare"] = netcal_prepare
    else:
        missing.append("netcal not installed: its sides were skipped")
    return ece, inputs, missing


def quality_table(sizes: tuple[tuple[int, int], ...], ece: dict[str, Callable]) -> str:
    peers = [s for s in ece if s != "ours"]
    head = ["n × k", "ours ECE", *(c for p in peers for c in (f"{p} ECE", f"abs diff vs {p}"))]
    head.append("ours truthful classwise")
    rows = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for n, k in sizes:
        x = make_input((n, k))
        ours = ours_ece(x)
        cells = [f"{n:,} × {k:,}", f"{ours:.6g}"]
        for p in peers:
            v = ece[p](x)
            cells += [f"{v:.6g}", f"{abs(ours - v):.1e}"]
        cells.append(f"{ours_truthful(x):.4g}")
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + (
        f"\n\nValues on the benchmark's own inputs: top-label ECE with {N_BINS} equal-width bins "
        "(torchmetrics computes in float32, netcal and ours in float64); the truthful classwise error "
        f"(squared, {N_BINS} equal-mass bins per class) has no peer."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 x 10 only, 3 rounds; temporary output")
    args = parser.parse_args()
    sizes = SIZES[:1] if args.quick else SIZES
    repeats, warmup = (3, 1) if args.quick else (REPEATS, WARMUP)
    t_repeats, t_warmup = (3, 1) if args.quick else (TRUTHFUL_REPEATS, TRUTHFUL_WARMUP)
    ece, inputs, missing = peer_sides()
    extra = (" " + "; ".join(missing) + ".") if missing else ""
    common = dict(make_input=make_input, sizes=sizes, threads=1, size_label="n × k")
    with torch.inference_mode() if torch is not None else nullcontext():
        results = [
            compare(
                ece,
                ours="ours",
                name=f"Top-label ECE, {N_BINS} equal-width bins: ours vs torchmetrics vs netcal",
                warmup=warmup,
                repeats=repeats,
                note=(
                    f"{SETUP} Every side warmed up before timing (the first-call costs are excluded). "
                    "torchmetrics' time includes `torch.from_numpy` of both arrays (zero-copy; timed apart "
                    "in the next table) and its default argument validation; ours includes its input checks "
                    "and float64 copy, netcal its `prepare` step (both timed apart in the next table)."
                    f"{extra}"
                ),
                **common,
            ),
            compare(
                inputs,
                ours="ours: input checks",
                name="Input handling, timed apart from the computation",
                warmup=warmup,
                repeats=repeats,
                note=(
                    f"{SETUP} The part of each ECE call above that prepares the inputs. Ours: `as_probs` + "
                    "`as_labels` (float64 copy, finite, >= 0, rows sum to 1, labels in range). netcal: "
                    "`ECE(bins=15).prepare` (its checks, the top-label confidence and hit extraction over "
                    "the classes, the bin bounds), which `measure` runs first; it includes netcal's argmax, "
                    "which ours counts in the computation. torchmetrics: `torch.from_numpy` of both arrays, "
                    f"what our torchmetrics side adds to the library call.{extra}"
                ),
                **common,
            ),
            compare(
                {"truthful classwise": ours_truthful, "top-label ECE": ours_ece},
                ours="truthful classwise",
                peer="top-label ECE",
                name="Our truthful classwise error vs our top-label ECE (cost ratio, no peer)",
                warmup=t_warmup,
                repeats=t_repeats,
                note=(
                    f"{SETUP} The truthful classwise error bins every class column by equal mass (a sort "
                    "per class); no peer library computes it, so its cost is given relative to our "
                    "top-label ECE on the same inputs. "
                    + (
                        ""
                        if args.quick
                        else f"{TRUTHFUL_REPEATS} rounds after {TRUTHFUL_WARMUP} warm-up call (not "
                        f"{REPEATS} after {WARMUP}): seconds per call at the largest sizes; this keeps the "
                        "full benchmark under 5 minutes."
                    )
                ),
                **common,
            ),
        ]
    tables = {"Quality: values on the same inputs (agreement check)": quality_table(sizes, ece)}
    if args.quick:
        folder = Path(tempfile.mkdtemp(prefix="bench_truthful_calibration_"))
        write_results(results, folder, title=TITLE + " (quick)", tables=tables)
        print(results_markdown(results, TITLE + " (quick)", tables=tables))
        print(f"quick run: results written to {folder} (the committed results are unchanged)")
    else:
        js, md = write_results(results, Path(__file__).parent, title=TITLE, tables=tables)
        print(md.read_text())
        print(f"written: {js}, {md}")


if __name__ == "__main__":
    main()
