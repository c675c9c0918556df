"""Side by side on the core bench harness: vanilla, SDN's and ZTW's sample-wise exits and the SLIE5
plan, eager and compiled, at batch 1 and 64.

One ResNet-20 (width 8, 16 x 16 inputs; the headline experiment's backbone and budget: 16 epochs,
batch 64) is trained on scikit-learn's digits with the SLIE loss, a second copy with the SDN loss, and
ZTW heads on a third, vanilla-trained copy; thresholds and the SLIE5 subset are calibrated on held-out
data. Every variant runs in this one process on the same test images, one torch thread, under
``torch.inference_mode``. One :func:`paperworks.core.bench.compare` per question (warm-up, rounds
interleaved in a seeded random order, medians, ratio ours/peer with a bootstrap interval):

* batch 1, one call per timing (so the per-call times also give p99), each side cycling over the same
  256 test images so that every round gives all sides the same image: (1) ONNX Runtime FP32: SLIE5 vs
  vanilla vs SDN's exit as chained segment sessions; (2) eager torch FP32: SLIE5 vs vanilla vs SDN's
  and ZTW's exits; (3) ``torch.export``: SLIE5 vs vanilla; (4) SLIE5's own deployment paths (ONNX
  Runtime vs eager, ``torch.export``, eager BF16 and FP16);
* batch 64 (throughput = 64 / median), cycling over the test set's batches of 64: (5) ONNX Runtime
  (fixed-batch graphs) and (6) eager torch, where the sample-wise exits run image by image, as a
  per-sample policy must.

Tables (same run, same test images): test accuracy and multiply-adds per sample of each deployment
(expected ones for the exits), the calibrated settings, and p99 at batch 1. Energy cannot be measured
on this CPU.

Run: ``uv run python packages/slienet/benchmarks/bench_slienet.py [--quick]`` or
``uv run paperworks bench slienet [--quick]``. The full run writes benchmarks/results.json and
results.md; ``--quick`` (batch 1 only, 3 rounds, 1 warm-up, and the quick run's 2 training epochs)
writes to a temporary folder and prints.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import tempfile
import warnings
from pathlib import Path

import numpy as np
import torch

from paperworks.core import torch_threads
from paperworks.core.bench import compare, publish
from paperworks.slienet import (
    DynamicExitRunner,
    OnnxPlan,
    SliePlan,
    TrainConfig,
    VanillaPlan,
    calibrate_subset,
    choose_threshold,
    count_flops,
    digits_images,
    dynamic_exit,
    exit_segments,
    export_onnx,
    export_onnx_module,
    export_program,
    predict_all,
    resnet56,
    split_indices,
    standardize,
    train_multi_exit,
    train_ztw,
)
from paperworks.slienet.experiments import QUICK, SlieConfig

EXP = SlieConfig()  # the full reproduction's model and training budget
BATCH = 64
SAMPLES = 256  # test images the batch-1 sides cycle over
ROUNDS_1 = 2000  # batch-1 rounds (one call each)
ROUNDS_64 = 20  # batch-64 rounds
WARMUP_1, WARMUP_64 = 30, 3
NOTE_1 = (
    "Batch 1, one call per timing: every side cycles over the same {n} test images on its own, and "
    "with equal warm-ups every round gives all sides the same image (the exits' cost depends on the "
    "image). {what}"
)
NOTE_64 = "Batch 64, images/s = 64 / median. Every side cycles over the test set's {k} batches of 64. {what}"
WHAT = {
    "ort": "SLIE5 and vanilla are one ONNX Runtime graph each (FP32, all graph optimisations, one "
    "thread); SDN's exit is a chain of 7 per-segment sessions with a Python branch after each exit "
    "(the NumPy input goes straight to the sessions: no conversion in the timing).",
    "eager": "Eager torch FP32 modules; SDN's and ZTW's exits run segment by segment with a Python "
    "branch after each exit.",
    "export": "`torch.export`'s `ExportedProgram.module()`: a static graph, but still run op by op "
    "by the Python interpreter (not a compiled runtime).",
    "paths": "The same SLIE5 plan in each deployment path; BF16/FP16 are the eager module cast to "
    "that dtype on the CPU (input cast once, outside the timing). SLIE5's ONNX Runtime call is slower "
    "here than in the ONNX Runtime comparison: it shares each round with sides 5-20 times heavier, "
    "which leave the caches cold; the ratios are paired within this comparison.",
    "ort64": "Fixed-batch ONNX Runtime graphs exported at batch 64 for SLIE5 and vanilla; SDN's exit "
    "runs image by image through its segment sessions.",
    "eager64": "Eager torch; SDN's and ZTW's exits run image by image; SLIE5 also in BF16/FP16 (inputs "
    "cast once, outside the timing).",
}


def _cycling(fn, inputs):
    """A harness side: ``fn`` on the next of ``inputs`` (cycling) at each call; the harness's shared
    input (the batch size) only labels the row."""
    it = itertools.cycle(inputs)
    return lambda _batch: fn(next(it))


def _per_sample(fn):
    return lambda b: [fn(b[i : i + 1]) for i in range(len(b))]


def _acc(probs, y) -> float:
    return float((np.asarray(probs).argmax(-1) == y).mean())


def main(quick: bool = False) -> str:
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    torch.manual_seed(0)
    run = QUICK if quick else EXP
    x, y = digits_images(16)
    tr, ca, te = split_indices(y, (0.6, 0.2, 0.2), 0)
    xtr, xca, xte = standardize(x[tr], x[ca], x[te])
    yte = y[te]
    init = resnet56(10, width=8, blocks_per_stage=EXP.blocks_per_stage, image_size=16, in_channels=1)
    results, tables = [], {}
    with torch_threads(1):
        cfg = dict(epochs=run.epochs, batch_size=run.batch_size)
        slie = train_multi_exit(copy.deepcopy(init), xtr, y[tr], TrainConfig(mode="slie", **cfg), seed=0)
        sdn = train_multi_exit(copy.deepcopy(init), xtr, y[tr], TrainConfig(mode="sdn", **cfg), seed=0)
        van = train_multi_exit(copy.deepcopy(init), xtr, y[tr], TrainConfig(mode="vanilla", **cfg), seed=0)
        ztw = train_ztw(copy.deepcopy(van), xtr, y[tr], xca, y[ca], epochs=run.ztw_epochs, seed=0)
        _, ic_ca = predict_all(slie, xca)
        sel = calibrate_subset(ic_ca, torch.as_tensor(y[ca]), EXP.depth)
        plan = SliePlan(slie, sel.subset, EXP.depth).eval()
        vplan = VanillaPlan(van).eval()
        segs = [s.eval() for s in exit_segments(sdn)]
        seg_flops, h = [], torch.zeros(1, 1, 16, 16)
        with torch.no_grad():
            for s in segs:
                seg_flops.append(count_flops(s, h))
                h = s(h)[0]
        cum = torch.tensor(np.cumsum(seg_flops), dtype=torch.float64)
        f_ca, i_ca = predict_all(sdn, xca)
        thr = choose_threshold(torch.cat([i_ca, f_ca[None]]), torch.as_tensor(y[ca]), list(cum))
        f_te, i_te = predict_all(sdn, xte)
        p_sdn, ex = dynamic_exit(torch.cat([i_te, f_te[None]]), thr)
        with torch.no_grad():
            m_ca, m_te = ztw(torch.as_tensor(xca)), ztw(torch.as_tensor(xte))
        thr_z = choose_threshold(m_ca, torch.as_tensor(y[ca]), list(cum))
        p_ztw, ex_z = dynamic_exit(m_te, thr_z)
        x1 = torch.as_tensor(xte[:1])
        with torch.inference_mode():
            p_van, p_slie = vplan(torch.as_tensor(xte)), plan(torch.as_tensor(xte))
        flops = {
            "vanilla": count_flops(vplan, x1) / 1e6,
            "SLIE5": count_flops(plan, x1) / 1e6,
            "SDN": float(cum[ex].mean()) / 1e6,
            "ZTW": float(cum[ex_z].mean()) / 1e6,
        }
        acc = {
            "vanilla": _acc(p_van, yte),
            "SLIE5": _acc(p_slie, yte),
            "SDN": _acc(p_sdn, yte),
            "ZTW": _acc(p_ztw, yte),
        }
        samples = [np.ascontiguousarray(xte[i : i + 1]) for i in range(min(SAMPLES, len(xte)))]
        ts = [torch.from_numpy(s) for s in samples]
        nb = len(xte) // BATCH
        batches = [np.ascontiguousarray(xte[i * BATCH : (i + 1) * BATCH]) for i in range(nb)]
        tb = [torch.from_numpy(b) for b in batches]
        with tempfile.TemporaryDirectory() as tmp, torch.inference_mode():
            t = Path(tmp)
            ep_v, ep_s = export_program(vplan).module(), export_program(plan).module()
            ort_v = OnnxPlan(export_onnx(vplan, t / "v.onnx"))
            ort_s = OnnxPlan(export_onnx(plan, t / "s.onnx"))
            paths, h = [], ts[0]
            for j, s in enumerate(segs):
                paths.append(
                    export_onnx_module(
                        s, h, t / f"seg{j}.onnx", input_names=["h"], output_names=["h_out", "probs"]
                    )
                )
                h = s(h)[0]
            sdn_ort = DynamicExitRunner.from_onnx(paths, thr)
            sdn_eager = DynamicExitRunner(segs, thr)
            ztw_eager = ztw.runner(thr_z)
            plan_bf16 = copy.deepcopy(plan).to(torch.bfloat16)
            plan_fp16 = copy.deepcopy(plan).to(torch.float16)
            for i in range(3):  # the compiled paths compute what the eager plan computes
                ref = plan(ts[i]).numpy()
                if not (
                    np.allclose(ort_s(samples[i]), ref, atol=1e-4)
                    and np.allclose(ep_s(ts[i]), ref, atol=1e-5)
                ):
                    raise RuntimeError("an exported SLIE5 plan differs from the eager plan")
            b1 = {
                "vanilla eager": (vplan, ts),
                "vanilla torch.export": (ep_v, ts),
                "vanilla ONNX Runtime": (ort_v, samples),
                "SDN exit eager": (sdn_eager, ts),
                "SDN exit ONNX Runtime segments": (sdn_ort, samples),
                "ZTW exit eager": (ztw_eager, ts),
                "SLIE5 eager": (plan, ts),
                "SLIE5 torch.export": (ep_s, ts),
                "SLIE5 ONNX Runtime": (ort_s, samples),
                "SLIE5 eager BF16": (plan_bf16, [s.to(torch.bfloat16) for s in ts]),
                "SLIE5 eager FP16": (plan_fp16, [s.to(torch.float16) for s in ts]),
            }
            reps1 = dict(repeats=3, warmup=1) if quick else dict(repeats=ROUNDS_1, warmup=WARMUP_1)
            questions_1 = [
                (
                    "Batch 1, ONNX Runtime FP32: SLIE5 vs vanilla vs SDN's exit",
                    "SLIE5 ONNX Runtime",
                    ["vanilla ONNX Runtime", "SDN exit ONNX Runtime segments"],
                    "ort",
                ),
                (
                    "Batch 1, eager torch FP32: SLIE5 vs vanilla vs SDN's and ZTW's exits",
                    "SLIE5 eager",
                    ["vanilla eager", "SDN exit eager", "ZTW exit eager"],
                    "eager",
                ),
                (
                    "Batch 1, torch.export: SLIE5 vs vanilla",
                    "SLIE5 torch.export",
                    ["vanilla torch.export"],
                    "export",
                ),
                (
                    "Batch 1, SLIE5's deployment paths",
                    "SLIE5 ONNX Runtime",
                    ["SLIE5 eager", "SLIE5 torch.export", "SLIE5 eager BF16", "SLIE5 eager FP16"],
                    "paths",
                ),
            ]
            tail = {}
            for title, ours, peers, what in questions_1:
                r = compare(
                    {k: _cycling(*b1[k]) for k in [ours, *peers]},
                    lambda batch: batch,
                    (1,),
                    size_label="batch",
                    ours=ours,
                    name=title,
                    number=1,
                    note=NOTE_1.format(n=len(samples), what=WHAT[what]),
                    **reps1,
                )
                results.append(r)
                for side in r.row().sides:
                    tail.setdefault(side.name, (side.median_s, float(np.percentile(side.times_s, 99))))
            if not quick:
                ort_v64 = OnnxPlan(export_onnx(vplan, t / "v64.onnx", batch_size=BATCH))
                ort_s64 = OnnxPlan(export_onnx(plan, t / "s64.onnx", batch_size=BATCH))
                b64 = {
                    "vanilla ONNX Runtime": (ort_v64, batches),
                    "SDN exit ONNX Runtime segments": (_per_sample(sdn_ort), batches),
                    "SLIE5 ONNX Runtime": (ort_s64, batches),
                    "vanilla eager": (vplan, tb),
                    "SDN exit eager": (_per_sample(sdn_eager), tb),
                    "ZTW exit eager": (_per_sample(ztw_eager), tb),
                    "SLIE5 eager": (plan, tb),
                    "SLIE5 eager BF16": (plan_bf16, [b.to(torch.bfloat16) for b in tb]),
                    "SLIE5 eager FP16": (plan_fp16, [b.to(torch.float16) for b in tb]),
                }
                questions_64 = [
                    (
                        "Batch 64, ONNX Runtime FP32: SLIE5 vs vanilla vs SDN's exit",
                        "SLIE5 ONNX Runtime",
                        ["vanilla ONNX Runtime", "SDN exit ONNX Runtime segments"],
                        "ort64",
                    ),
                    (
                        "Batch 64, eager torch: SLIE5 vs vanilla, the exits and SLIE5 in BF16/FP16",
                        "SLIE5 eager",
                        [
                            "vanilla eager",
                            "SDN exit eager",
                            "ZTW exit eager",
                            "SLIE5 eager BF16",
                            "SLIE5 eager FP16",
                        ],
                        "eager64",
                    ),
                ]
                for title, ours, peers, what in questions_64:
                    results.append(
                        compare(
                            {k: _cycling(*b64[k]) for k in [ours, *peers]},
                            lambda batch: batch,
                            (BATCH,),
                            size_label="batch",
                            ours=ours,
                            name=title,
                            note=NOTE_64.format(k=nb, what=WHAT[what]),
                            repeats=ROUNDS_64,
                            warmup=WARMUP_64,
                        )
                    )

    def family(name: str) -> str:
        return name.split()[0]

    q = [
        "| deployment | test accuracy (%) | MFLOPs / sample | multiply-adds / vanilla |",
        "| --- | --- | --- | --- |",
    ]
    for k in ("vanilla", "SLIE5", "SDN", "ZTW"):
        q.append(f"| {k} | {100 * acc[k]:.2f} | {flops[k]:.2f} | {flops[k] / flops['vanilla']:.2f} |")
    tables["Quality: test accuracy and multiply-adds per sample (same test images)"] = (
        f"{len(yte)} test images of the digits (16 x 16), the models timed above; multiply-adds of the "
        "exits are the expected ones over the test images.\n\n" + "\n".join(q)
    )
    tables["Calibrated deployments"] = "\n".join(
        [
            "| setting | value |",
            "| --- | --- |",
            f"| SLIE5 subset (ICs 1-5) | {tuple(i + 1 for i in sel.subset)} |",
            f"| SDN exit threshold | {thr:.2f} |",
            f"| SDN mean exit (of 7) | {float(ex.float().mean()) + 1:.2f} |",
            f"| ZTW exit threshold | {thr_z:.2f} |",
            f"| ZTW mean exit (of 7) | {float(ex_z.float().mean()) + 1:.2f} |",
            f"| training epochs (batch {run.batch_size}) | {run.epochs} (ZTW heads: {run.ztw_epochs}) |",
        ]
    )
    rows = ["| variant | MFLOPs / sample | p50 | p99 |", "| --- | --- | --- | --- |"]
    for name, (p50, p99) in tail.items():
        rows.append(f"| {name} | {flops[family(name)]:.2f} | {1e3 * p50:.3f} ms | {1e3 * p99:.3f} ms |")
    tables["Tail latency at batch 1 (per-call times of the rounds above)"] = (
        "p50 and p99 of the single-call times of each variant's first comparison above.\n\n" + "\n".join(rows)
    )
    return publish(results, __file__, quick=quick, title="slienet benchmarks", tables=tables)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="batch 1 only, 3 rounds, temporary folder")
    main(quick=parser.parse_args().quick)
