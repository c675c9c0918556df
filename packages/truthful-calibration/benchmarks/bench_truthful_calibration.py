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
* our truthful classwise error and our classwise averaged two-bin error (no peer computes them)
  against our own top-label ECE, as cost ratios;
* smooth ECE: ours (``smooth_ece``, 128-node grid) vs relplot's ``smECE`` (Blasiok & Nakkiran's
  reference implementation) on the same confidences and hits, a cross-check of the values and times.

Quality table: the values every side returns on the same inputs (the agreement check).

    uv run python packages/truthful-calibration/benchmarks/bench_truthful_calibration.py [--quick]
    uv run paperworks bench truthful-calibration [--quick]

``--quick``: 10,000 x 10 only, 3 rounds after 1 warm-up call, results written to a temporary folder
(the committed ``benchmarks/results.*`` are left alone) and printed.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from contextlib import nullcontext
from types import SimpleNamespace
from typing import Any

import numpy as np

from paperworks.core.bench import compare, publish
from paperworks.truthful_calibration import classwise_atb, smooth_ece, top_label_ece, truthful_classwise_error
from paperworks.truthful_calibration._inputs import as_labels, as_probs

SIZES = ((10_000, 10), (100_000, 10), (1_000_000, 10), (10_000, 100), (100_000, 100), (10_000, 1000))
N_BINS = 15
REPEATS, WARMUP = 20, 2
TRUTHFUL_REPEATS, TRUTHFUL_WARMUP = 10, 1
SMOOTH_SIZES = ((10_000, 10), (100_000, 10), (1_000_000, 10))
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
try:
    import relplot
except ImportError:
    relplot = None


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


def ours_atb(x: SimpleNamespace) -> float:
    return classwise_atb(x.p, x.y)


def ours_smooth(x: SimpleNamespace) -> float:
    return smooth_ece(x.p, x.y)


def relplot_smooth(x: SimpleNamespace) -> float:
    conf, hit = _conf_hits(x)
    return float(relplot.smECE(conf, hit))


@functools.cache
def _conf_hits_cached(size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    x = make_input(size)
    top = x.p.argmax(axis=1)
    return x.p.max(axis=1).astype(np.float64), (top == x.y).astype(np.float64)


def _conf_hits(x: SimpleNamespace) -> tuple[np.ndarray, np.ndarray]:
    """relplot takes (confidence, hit) pairs; the extraction is not timed (done once per size)."""
    return _conf_hits_cached((x.p.shape[0], x.k))


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
    head += ["ours truthful classwise", "ours classwise ATB"]
    rows = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for n, k in sizes:
        x = make_input((n, k))
        ours = ours_ece(x)
        cells = [f"{n:,} × {k:,}", f"{ours:.6g}"]
        for p in peers:
            v = ece[p](x)
            cells += [f"{v:.6g}", f"{abs(ours - v):.1e}"]
        cells.append(f"{ours_truthful(x):.4g}")
        cells.append(f"{ours_atb(x):.4g}")
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + (
        f"\n\nValues on the benchmark's own inputs: top-label ECE with {N_BINS} equal-width bins "
        "(torchmetrics computes in float32, netcal and ours in float64); the truthful classwise error "
        f"(squared, {N_BINS} equal-mass bins per class) and the classwise ATB (no bins) have no peer."
    )


def smooth_table(sizes: tuple[tuple[int, int], ...]) -> str:
    rows = ["| n × k | ours smooth ECE | relplot smECE | abs diff | rel diff |", "|" + " --- |" * 5]
    for n, k in sizes:
        x = make_input((n, k))
        ours, theirs = ours_smooth(x), relplot_smooth(x)
        rows.append(
            f"| {n:,} × {k:,} | {ours:.5g} | {theirs:.5g} | {abs(ours - theirs):.2e} | "
            f"{abs(ours - theirs) / theirs:.2%} |"
        )
    return "\n".join(rows) + (
        "\n\nSmooth ECE of the top-label confidence on the same inputs. Ours snaps the confidences to a "
        "128-node grid and solves the bandwidth fixed point by 30 geometric bisection steps; relplot "
        "interpolates onto a finer mesh (at least 2,000 points) and bisects 10 times: the two are "
        "discretisations of one quantity, not identical computations."
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
            compare(
                {"classwise ATB": ours_atb, "top-label ECE": ours_ece},
                ours="classwise ATB",
                peer="top-label ECE",
                name="Our classwise averaged two-bin error vs our top-label ECE (cost ratio, no peer)",
                warmup=t_warmup,
                repeats=t_repeats,
                note=(
                    f"{SETUP} The classwise ATB sorts every class column once and integrates the two-bin "
                    "error over every threshold exactly (cumulative sums); no peer library computes it."
                ),
                **common,
            ),
        ]
        smooth_sizes = SIZES[:1] if args.quick else SMOOTH_SIZES
        if relplot is not None:
            results.append(
                compare(
                    {"ours smooth ECE": ours_smooth, "relplot smECE": relplot_smooth},
                    ours="ours smooth ECE",
                    name="Smooth ECE: ours vs relplot (cross-check)",
                    warmup=warmup,
                    repeats=t_repeats,
                    note=(
                        f"{SETUP} relplot's `smECE(confidence, hit)` is given the confidences and hits "
                        "extracted once per size outside the timing; ours takes the probabilities and "
                        "labels (its checks and the extraction are inside its time)."
                    ),
                    make_input=make_input,
                    sizes=smooth_sizes,
                    threads=1,
                    size_label="n × k",
                )
            )
        else:
            missing.append("relplot not installed: the smooth-ECE cross-check was skipped")
    tables = {"Quality: values on the same inputs (agreement check)": quality_table(sizes, ece)}
    if relplot is not None:
        tables["Smooth ECE: ours vs relplot on the same inputs"] = smooth_table(smooth_sizes)
    publish(
        results, __file__, quick=args.quick, title=TITLE + (" (quick)" if args.quick else ""), tables=tables
    )


if __name__ == "__main__":
    main()
