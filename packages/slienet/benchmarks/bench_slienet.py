"""Side by side on the core bench harness: full-size ResNet-56, VGG-16 and MobileNetV1 at 32 x 32 and
batch 1 (issue 36): vanilla, the SLIE5 plan and SDN's per-sample exit, in ONNX Runtime and eager torch,
and for ResNet-56 also ``torch.compile`` (Inductor) and AOTInductor, the PyTorch-native compiled paths.

Latency does not depend on the weights, so the full-size networks have seeded random weights (batch-norm
statistics set from random inputs, so activations have a trained net's scale). What does depend on
training is the structure deployed: per backbone, the headline experiment's laptop network is trained
once (seed 0, the experiment's data and budget) and gives the SLIE5 subset (hence where the plan is
cut) and the exits SDN's calibrated threshold takes on the test images; the full-size SLIE5 plan is cut
after the same IC, and SDN's runner replays the same exits (:meth:`DynamicExitRunner.replay`: the same
segments and confidence read-back, the decision from the recording). Every side cycles over the same
256 test images, upsampled to 32 x 32, so every round gives all sides the same image.

One :func:`paperworks.core.bench.compare` per backbone and engine (warm-up, rounds in a seeded random
order, medians, ratio ours/peer with a bootstrap interval over rounds, one thread), plus SLIE5's
deployment paths on ResNet-56. Tables beside the timings: FLOPs, p50 / p99 and deadline misses
(deadline = 1.5 x the vanilla p99 of a separate pilot, as in the experiment), and the laptop nets'
test accuracy behind the structure. Energy cannot be measured on this CPU.

``results.json`` keeps, per side, the 0th..100th percentiles of the per-round times (the median and
IQR the tables show are exact), not every round: the ratios and their intervals are computed from all
rounds before the results are written.

Run: ``uv run python packages/slienet/benchmarks/bench_slienet.py [--quick]`` or ``uv run paperworks
bench slienet [--quick]``. The full run writes benchmarks/results.json and results.md; ``--quick``
(the quick run's training, 3 rounds, no compiled paths) writes to a temporary folder and prints.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

from paperworks.core import Progress, torch_threads
from paperworks.core.bench import BenchResult, SideTimes, SizeResult, compare, publish
from paperworks.slienet import (
    DynamicExitRunner,
    OnnxPlan,
    SliePlan,
    VanillaPlan,
    count_flops,
    exit_segments,
    export_onnx,
    export_onnx_module,
    export_program,
)
from paperworks.slienet.experiments import (
    BACKBONES,
    QUICK,
    SlieConfig,
    _load,
    _segment_costs,
    full_size_model,
    run_backbone,
)

EXP = SlieConfig()  # the full reproduction's data, models and training budget
SAMPLES = 256  # test images the batch-1 sides cycle over
ROUNDS, WARMUP = 400, 20
PILOT_ROUNDS, PILOT_WARMUP = 300, 20
NAMES = {"resnet": "ResNet-56", "vgg": "VGG-16-BN", "mobilenet": "MobileNetV1"}
NOTE = (
    "Batch 1, one call per timing, full size at 32 x 32 (random weights); every side cycles over the same "
    "{n} upsampled test images, so every round gives all sides the same image. {what}"
)
WHAT = {
    "onnx": "SLIE5 and vanilla are one ONNX Runtime graph each (FP32, all graph optimisations, one thread); "
    "SDN's exit is a chain of 7 per-segment sessions with a Python branch after each exit, replaying the "
    "exits of the trained laptop SDN (NumPy inputs go straight to the sessions).",
    "eager": "Eager torch FP32 modules under `torch.inference_mode`; SDN's exit runs segment by segment with "
    "a Python branch after each exit (replayed exits).",
    "compile": "`torch.compile` (Inductor, default mode) of the same modules; compiled once before the "
    "warm-up (its compile time is in the table below, not in the timings).",
    "aoti": "AOTInductor: `torch.export` then `torch._inductor.aoti_compile_and_package`, loaded with "
    "`aoti_load_package` (a C++ wrapper around Inductor's kernels, no Python in the graph).",
    "paths": "The same SLIE5 plan in each deployment path.",
}


def _cycling(fn, inputs):
    """A harness side: ``fn`` on the next of ``inputs`` (cycling) at each call; the harness's shared
    input (the batch size) only labels the row."""
    it = itertools.cycle(inputs)
    return lambda _batch: fn(next(it))


def _percentiles(r: BenchResult) -> BenchResult:
    """``r`` with each side's per-round times replaced by their 0th..100th percentiles (linear): the
    median and the IQR stay exact; the ratios were computed from every round already."""
    rows = []
    for row in r.rows:
        sides = tuple(
            SideTimes(
                s.name,
                tuple(float(v) for v in np.percentile(s.times_s, np.arange(101))),
                s.number,
                s.peak_bytes,
            )
            for s in row.sides
        )
        for old, new in zip(row.sides, sides, strict=True):
            assert abs(old.median_s - new.median_s) < 1e-15 and abs(old.iqr_s - new.iqr_s) < 1e-15
        rows.append(SizeResult(row.size, sides, row.ratios, ()))
    settings = dict(
        r.settings, stored="0th..100th percentiles of the per-round times; per-round order not stored"
    )
    return dataclasses.replace(r, rows=tuple(rows), settings=settings)


def _compiled(module, example, kind: str, tmp: Path):
    """``module`` compiled by ``torch.compile`` or AOTInductor, and the seconds it took (first call)."""
    t0 = time.perf_counter()
    if kind == "compile":
        fn = torch.compile(module)
    else:
        ep = export_program(module)
        pkg = torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp / f"{id(module)}.pt2"))
        fn = torch._inductor.aoti_load_package(pkg)
    with torch.inference_mode():
        out = fn(example)
    if not torch.allclose(out, module(example), atol=1e-4):
        raise RuntimeError(f"{kind}: the compiled module differs from the eager one")
    return fn, time.perf_counter() - t0


def main(quick: bool = False) -> str:
    rc = QUICK if quick else EXP
    progress = Progress()
    data = _load(0, rc)
    results, tables = [], {}
    quality = [
        "| backbone (laptop, trained) | vanilla acc (%) | SLIE5 acc (%) | SDN exit acc (%) | SLIE5 subset | "
        "SDN threshold | SDN mean exit (of 7) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    flops_rows = ["| backbone (full size) | side | MFLOPs / sample | p50 | p99 | deadline | misses |"]
    flops_rows.append("| --- | --- | --- | --- | --- | --- | --- |")
    compile_rows = ["| module | compile and first call (s) |", "| --- | --- |"]
    rounds = dict(repeats=3, warmup=1) if quick else dict(repeats=ROUNDS, warmup=WARMUP)
    with torch_threads(1), tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for name in BACKBONES:
            m, art = run_backbone(name, data, rc, seed=0, progress=progress)
            sub = art["subset"]
            quality.append(
                f"| {name} | {100 * m['acc_vanilla']:.1f} | {100 * m['acc_slie5']:.1f} | "
                f"{100 * m['acc_sdn_dynamic']:.1f} | {tuple(i + 1 for i in sub)} | "
                f"{m['sdn_threshold']:.2f} | {m['sdn_mean_exit']:.2f} |"
            )
            full = full_size_model(name, rc.n_classes, image_size=32, seed=0)
            x = F.interpolate(torch.as_tensor(art["x"][:SAMPLES]), size=(32, 32), mode="bilinear")
            samples = [np.ascontiguousarray(x[i : i + 1].numpy()) for i in range(len(x))]
            ts = [torch.from_numpy(s) for s in samples]
            exits = [int(e) for e in art["sdn_exits"][: len(samples)]]
            vplan, splan = VanillaPlan(full).eval(), SliePlan(full, sub, rc.depth).eval()
            segs = [s.eval() for s in exit_segments(full)]
            cum = _segment_costs(full)
            mflops = {
                "vanilla": count_flops(vplan, ts[0]) / 1e6,
                "SLIE5": count_flops(splan, ts[0]) / 1e6,
                "SDN exit": float(np.mean([cum[e] for e in exits])) / 1e6,
            }
            progress.log(f"  {NAMES[name]}: exporting vanilla, SLIE5 and SDN's segments to ONNX")
            ort_v = OnnxPlan(export_onnx(vplan, tmp / f"{name}_v.onnx"))
            ort_s = OnnxPlan(export_onnx(splan, tmp / f"{name}_s.onnx"))
            paths, h = [], ts[0]
            with torch.inference_mode():
                for j, seg in enumerate(segs):
                    paths.append(
                        export_onnx_module(
                            seg,
                            h,
                            tmp / f"{name}_seg{j}.onnx",
                            input_names=["h"],
                            output_names=["h_out", "probs"],
                        )
                    )
                    h = seg(h)[0]
            sdn_ort = DynamicExitRunner.from_onnx(paths, art["sdn_threshold"])
            sdn_eager = DynamicExitRunner(segs, art["sdn_threshold"])
            with torch.inference_mode():
                for i in range(3):
                    if not np.allclose(ort_s(samples[i]), splan(ts[i]).numpy(), atol=1e-4):
                        raise RuntimeError(f"{name}: the SLIE5 ONNX graph differs from the eager plan")
            pairs_np = list(zip(samples, exits, strict=True))
            pairs_t = list(zip(ts, exits, strict=True))
            sides = {
                f"SLIE5 ONNX Runtime ({NAMES[name]})": (ort_s, samples),
                f"vanilla ONNX Runtime ({NAMES[name]})": (ort_v, samples),
                f"SDN exit ONNX Runtime segments ({NAMES[name]})": (
                    lambda p, r=sdn_ort: r.replay(*p),
                    pairs_np,
                ),
                f"SLIE5 eager ({NAMES[name]})": (splan, ts),
                f"vanilla eager ({NAMES[name]})": (vplan, ts),
                f"SDN exit eager ({NAMES[name]})": (lambda p, r=sdn_eager: r.replay(*p), pairs_t),
            }
            engines = [("onnx", "ONNX Runtime"), ("eager", "eager")]
            if name == "resnet" and not quick:
                for kind, label in (("compile", "torch.compile"), ("aoti", "AOTInductor")):
                    progress.log(
                        f"  {NAMES[name]}: {label} of vanilla and SLIE5 (compiles for tens of seconds)"
                    )
                    for side, mod in (("SLIE5", splan), ("vanilla", vplan)):
                        fn, secs = _compiled(mod, ts[0], kind, tmp)
                        sides[f"{side} {label} ({NAMES[name]})"] = (fn, ts)
                        compile_rows.append(f"| {side} {label} ({NAMES[name]}) | {secs:.1f} |")
                    engines.append((kind, label))
            with torch.inference_mode():
                for kind, label in engines:
                    peers = [f"vanilla {label} ({NAMES[name]})"]
                    if kind in ("onnx", "eager"):
                        peers.append(
                            f"SDN exit {label}{' segments' if kind == 'onnx' else ''} ({NAMES[name]})"
                        )
                    ours = f"SLIE5 {label} ({NAMES[name]})"
                    pilot = compare(
                        {peers[0]: _cycling(*sides[peers[0]])},
                        lambda batch: batch,
                        (1,),
                        ours=peers[0],
                        name="pilot",
                        number=1,
                        repeats=3 if quick else PILOT_ROUNDS,
                        warmup=1 if quick else PILOT_WARMUP,
                    )
                    deadline = 1.5 * float(np.percentile(pilot.row().side(peers[0]).times_s, 99))
                    r = compare(
                        {k: _cycling(*sides[k]) for k in [ours, *peers]},
                        lambda batch: batch,
                        (1,),
                        size_label="batch",
                        ours=ours,
                        name=f"{NAMES[name]}, batch 1, {label}: SLIE5 vs vanilla"
                        + (" vs SDN's exit" if len(peers) > 1 else ""),
                        number=1,
                        note=NOTE.format(n=len(samples), what=WHAT[kind]),
                        progress=progress,
                        **rounds,
                    )
                    for side in r.row().sides:
                        t = np.asarray(side.times_s)
                        fam = side.name.split()[0] if not side.name.startswith("SDN") else "SDN exit"
                        flops_rows.append(
                            f"| {NAMES[name]} | {side.name.split(' (')[0]} | {mflops[fam]:.1f} | "
                            f"{1e3 * np.median(t):.3f} ms | {1e3 * np.percentile(t, 99):.3f} ms | "
                            f"{1e3 * deadline:.3f} ms | {int((t > deadline).sum())} of {t.size} |"
                        )
                    results.append(_percentiles(r))
                if name == "resnet" and not quick:
                    paths_sides = [k for k in sides if k.startswith("SLIE5 ")]
                    r = compare(
                        {k: _cycling(*sides[k]) for k in paths_sides},
                        lambda batch: batch,
                        (1,),
                        size_label="batch",
                        ours=f"SLIE5 ONNX Runtime ({NAMES[name]})",
                        name=f"{NAMES[name]}, batch 1: SLIE5's deployment paths",
                        number=1,
                        note=NOTE.format(n=len(samples), what=WHAT["paths"]),
                        progress=progress,
                        **rounds,
                    )
                    results.append(_percentiles(r))
    tables["Laptop nets behind the deployed structure (seed 0, the experiment's data and budget)"] = (
        "The SLIE5 subset sets where the full-size plan is cut (after its deepest IC); SDN's exits on these "
        "test images are the ones its full-size runner replays.\n\n" + "\n".join(quality)
    )
    tables["FLOPs, tail latency and deadline misses at batch 1 (the rounds above)"] = (
        "Deadline: 1.5 x the p99 of a separate vanilla pilot of the same engine (as in the experiment); "
        "misses counted over each side's rounds above. The p99 of a few hundred rounds on a shared machine "
        "mostly measures preemption by other jobs.\n\n" + "\n".join(flops_rows)
    )
    if len(compile_rows) > 2:
        tables["Compile time of the PyTorch-native compiled paths"] = "\n".join(compile_rows)
    return publish(results, __file__, quick=quick, title="slienet benchmarks", tables=tables)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="quick training, 3 rounds, temporary folder")
    main(quick=parser.parse_args().quick)
