"""Side by side at batch 1 and 64: vanilla, SDN sample-wise exit, ZTW and the SLIE5 plan, eager vs graph.

One ResNet-20 (width 8, 16 x 16 inputs; the headline experiment's backbone and budget: 16 epochs,
batch 64) is trained on scikit-learn's digits with the SLIE loss, a second copy with the SDN loss, and
ZTW heads on a third, vanilla-trained copy; thresholds
and the SLIE5 subset are calibrated on held-out data. Every variant runs in this one process on the
same test images, interleaved call by call; p50/p99 over 2,000 single-sample calls, throughput as
images/s over 30 batches of 64 (median of the per-batch rates). FLOPs are multiply-adds per sample
(expected, for the exits). Energy cannot be measured on this CPU. Writes ``benchmarks/results.md``.

Run: ``python packages/slienet/benchmarks/bench_slienet.py``
"""

from __future__ import annotations

import copy
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from paperworks.core import atomic_write_text, torch_threads
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
    latency_stats,
    measure_interleaved,
    predict_all,
    resnet56,
    split_indices,
    standardize,
    train_multi_exit,
    train_ztw,
)
from paperworks.slienet.experiments import SlieConfig

EXP = SlieConfig()  # the full reproduction's model and training budget

ROUNDS = 2000
BATCH = 64


def _throughput(fn, xb, reps: int = 30) -> float:
    rates = []
    for _ in range(3):
        fn(xb)
    for _ in range(reps):
        t0 = time.perf_counter()
        fn(xb)
        rates.append(xb.shape[0] / (time.perf_counter() - t0))
    return float(np.median(rates))


def main() -> str:
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    x, y = digits_images(16)
    tr, ca, te = split_indices(y, (0.6, 0.2, 0.2), 0)
    xtr, xca, xte = standardize(x[tr], x[ca], x[te])
    init = resnet56(10, width=8, blocks_per_stage=EXP.blocks_per_stage, image_size=16, in_channels=1)
    with torch_threads(1):
        cfg = dict(epochs=EXP.epochs, batch_size=EXP.batch_size)
        slie = train_multi_exit(copy.deepcopy(init), xtr, y[tr], TrainConfig(mode="slie", **cfg), seed=0)
        sdn = train_multi_exit(copy.deepcopy(init), xtr, y[tr], TrainConfig(mode="sdn", **cfg), seed=0)
        van = train_multi_exit(copy.deepcopy(init), xtr, y[tr], TrainConfig(mode="vanilla", **cfg), seed=0)
        ztw = train_ztw(copy.deepcopy(van), xtr, y[tr], xca, y[ca], epochs=20, seed=0)
        _, ic_ca = predict_all(slie, xca)
        sel = calibrate_subset(ic_ca, torch.as_tensor(y[ca]), 5)
        plan = SliePlan(slie, sel.subset, 5).eval()
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
        _, ex = dynamic_exit(torch.cat([i_te, f_te[None]]), thr)
        with torch.no_grad():
            m_ca, m_te = ztw(torch.as_tensor(xca)), ztw(torch.as_tensor(xte))
        thr_z = choose_threshold(m_ca, torch.as_tensor(y[ca]), list(cum))
        _, ex_z = dynamic_exit(m_te, thr_z)
        x1 = torch.as_tensor(xte[:1])
        flops = {
            "vanilla": count_flops(vplan, x1),
            "slie": count_flops(plan, x1),
            "sdn": float(cum[ex].mean()),
            "ztw": float(cum[ex_z].mean()),
        }
        samples = [np.ascontiguousarray(xte[i : i + 1]) for i in range(256)]
        ts = [torch.from_numpy(s) for s in samples]
        xb = torch.as_tensor(xte[:BATCH])
        with tempfile.TemporaryDirectory() as tmp, torch.inference_mode():
            t = Path(tmp)
            ep_v, ep_s = export_program(vplan).module(), export_program(plan).module()
            ort_v = OnnxPlan(export_onnx(vplan, t / "v.onnx"))
            ort_s = OnnxPlan(export_onnx(plan, t / "s.onnx"))
            ort_v64 = OnnxPlan(export_onnx(vplan, t / "v64.onnx", batch_size=BATCH))
            ort_s64 = OnnxPlan(export_onnx(plan, t / "s64.onnx", batch_size=BATCH))
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
            tb = [s.to(torch.bfloat16) for s in ts]
            th = [s.to(torch.float16) for s in ts]
            variants = {
                "vanilla eager": (vplan, ts),
                "vanilla torch.export": (ep_v, ts),
                "vanilla ONNX Runtime": (ort_v, samples),
                "SDN exit eager": (sdn_eager, ts),
                "SDN exit ONNX Runtime segments": (sdn_ort, samples),
                "ZTW exit eager": (ztw_eager, ts),
                "SLIE5 eager": (plan, ts),
                "SLIE5 torch.export": (ep_s, ts),
                "SLIE5 ONNX Runtime": (ort_s, samples),
                "SLIE5 eager BF16": (plan_bf16, tb),
                "SLIE5 eager FP16": (plan_fp16, th),
            }
            with torch_threads(1):
                times = measure_interleaved(variants, ROUNDS, warmup=30)
                xn = xb.numpy()
                thr_rate = {
                    "vanilla eager": _throughput(vplan, xb),
                    "vanilla torch.export": None,
                    "vanilla ONNX Runtime": _throughput(ort_v64, xn),
                    "SDN exit eager": _throughput(
                        lambda b: [sdn_eager(b[i : i + 1]) for i in range(len(b))], xb, 5
                    ),
                    "SDN exit ONNX Runtime segments": _throughput(
                        lambda b: [sdn_ort(b[i : i + 1]) for i in range(len(b))], xn, 5
                    ),
                    "ZTW exit eager": _throughput(
                        lambda b: [ztw_eager(b[i : i + 1]) for i in range(len(b))], xb, 5
                    ),
                    "SLIE5 eager": _throughput(plan, xb),
                    "SLIE5 torch.export": None,
                    "SLIE5 ONNX Runtime": _throughput(ort_s64, xn),
                    "SLIE5 eager BF16": _throughput(plan_bf16, xb.to(torch.bfloat16)),
                    "SLIE5 eager FP16": _throughput(plan_fp16, xb.to(torch.float16)),
                }
    st = {k: latency_stats(v) for k, v in times.items()}
    base = st["vanilla ONNX Runtime"]["p50_ms"]

    def fl(name: str) -> float:
        key = (
            "slie"
            if name.startswith("SLIE")
            else "sdn"
            if name.startswith("SDN")
            else name.split()[0].lower()
        )
        return flops[key] / 1e6

    rows = [
        "| variant | MFLOPs / sample | p50 (ms) | p99 (ms) | p50 / vanilla ORT | batch-64 images/s |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name in variants:
        r = thr_rate[name]
        rows.append(
            f"| {name} | {fl(name):.2f} | {st[name]['p50_ms']:.3f} | {st[name]['p99_ms']:.3f} | "
            f"{st[name]['p50_ms'] / base:.2f} | {'-' if r is None else f'{r:.0f}'} |"
        )
    s, v = st["SLIE5 ONNX Runtime"]["p50_ms"], base
    ratios = [
        "",
        "Ratios (ours / peer), p50 at batch 1: "
        f"SLIE5 ORT / vanilla ORT = {s / v:.2f}; "
        f"SLIE5 ORT / SDN exit ORT = {s / st['SDN exit ONNX Runtime segments']['p50_ms']:.2f}; "
        f"SLIE5 eager / ZTW exit eager = {st['SLIE5 eager']['p50_ms'] / st['ZTW exit eager']['p50_ms']:.2f}; "
        f"SLIE5 ORT / SLIE5 eager = {s / st['SLIE5 eager']['p50_ms']:.2f}. "
        f"Throughput at batch 64: SLIE5 ORT / vanilla ORT = "
        f"{thr_rate['SLIE5 ONNX Runtime'] / thr_rate['vanilla ONNX Runtime']:.2f}.",
        "",
        f"SLIE5 subset {tuple(i + 1 for i in sel.subset)} of ICs 1-5; SDN threshold {thr:.2f} "
        f"(mean exit {float(ex.float().mean()) + 1:.2f} of 7), ZTW threshold {thr_z:.2f}. "
        f"{ROUNDS} interleaved single-sample calls per variant, 1 thread. "
        "Energy: not measurable on this CPU.",
    ]
    table = "\n".join(rows + ratios)
    print(table)
    atomic_write_text(Path(__file__).with_name("results.md"), table + "\n")
    return table


if __name__ == "__main__":
    main()
