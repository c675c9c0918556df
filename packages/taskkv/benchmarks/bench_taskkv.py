"""Side by side: TaskKVPress vs kvpress's SnapKVPress vs no compression on one tiny Llama, same prompts.

Measures (medians over interleaved repeats, one process, one torch thread):
* prefill time with each press, and TaskKV's scoring overhead (prefill with the press minus the plain
  prefill) as a fraction of one decode step;
* KV-cache bytes after the prefill (the peak during decoding is this plus the generated tokens);
* greedy decoding throughput (tokens/s) over the kept cache.
Writes the markdown table to benchmarks/results.md. Run: python benchmarks/bench_taskkv.py
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np
import torch
from kvpress import SnapKVPress

from paperworks.core import atomic_write_text, torch_threads
from paperworks.taskkv import AgentTaskConfig, TaskKVPress, Vocab, generate_tasks
from paperworks.taskkv.toymodel import tiny_llama

BATCH, N_STEPS, NEW_TOKENS, REPEATS = 8, 64, 32, 5


def cache_bytes(cache) -> int:
    return sum(layer.keys.numel() * layer.keys.element_size() * 2 for layer in cache.layers)


def run_once(model, ids, press):
    t0 = time.perf_counter()
    with torch.inference_mode():
        if press is None:
            out = model(input_ids=ids, use_cache=True)
        else:
            with press(model):
                out = model(input_ids=ids, use_cache=True)
    t_prefill = time.perf_counter() - t0
    cache = out.past_key_values
    kv = cache_bytes(cache)
    nxt = out.logits[:, -1:].argmax(-1)
    pos = ids.shape[1]
    t0 = time.perf_counter()
    with torch.inference_mode():
        for i in range(NEW_TOKENS):
            o = model(
                input_ids=nxt,
                past_key_values=cache,
                position_ids=torch.full((ids.shape[0], 1), pos + i),
                use_cache=True,
            )
            nxt = o.logits[:, -1:].argmax(-1)
    t_decode = time.perf_counter() - t0
    return t_prefill, kv, t_decode


def main() -> str:
    cfg = AgentTaskConfig(
        n_steps=N_STEPS, n_errors=(2, 8), vocab=Vocab(n_objects=6, n_locations=6, n_fillers=8)
    )
    tasks = generate_tasks(BATCH, cfg, np.random.default_rng(0))
    ids = torch.as_tensor(tasks.context)
    model = tiny_llama(cfg.vocab.size, hidden=128, layers=4, heads=4, seed=0)
    ratio = 1.0 - int(0.2 * ids.shape[1]) / ids.shape[1] - 1e-6
    presses = {
        "no compression": None,
        "SnapKVPress (kvpress)": SnapKVPress(compression_ratio=ratio, window_size=4),
        "TaskKVPress (ours, priors)": TaskKVPress(compression_ratio=ratio, step_offsets=tuple(cfg.offsets)),
    }
    res = {k: [] for k in presses}
    with torch_threads(1):
        run_once(model, ids, None)  # warm-up
        for _ in range(REPEATS):
            for name, press in presses.items():  # interleaved
                res[name].append(run_once(model, ids, press))
    med = {k: [statistics.median(r[i] for r in v) for i in range(3)] for k, v in res.items()}
    base_prefill = med["no compression"][0]
    rows = [
        f"Tiny LlamaForCausalLM (4 layers, d=128), batch {BATCH}, context {ids.shape[1]} tokens "
        f"in {N_STEPS} steps, "
        f"budget 20%, {NEW_TOKENS} greedy tokens, medians of {REPEATS} interleaved repeats, 1 thread.",
        "",
        "| method | prefill ms | compression overhead / decode step | KV bytes after prefill "
        "| decode tokens/s | "
        "tokens/s ratio (vs SnapKV) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    snap_tps = BATCH * NEW_TOKENS / med["SnapKVPress (kvpress)"][2]
    for name, (tp, kv, td) in med.items():
        step = td / NEW_TOKENS
        over = "-" if name == "no compression" else f"{(tp - base_prefill) / step:.2f}"
        tps = BATCH * NEW_TOKENS / td
        rows.append(f"| {name} | {1000 * tp:.1f} | {over} | {kv} | {tps:.0f} | {tps / snap_tps:.2f} |")
    ours, peer = med["TaskKVPress (ours, priors)"], med["SnapKVPress (kvpress)"]
    rows += [
        "",
        f"Ratios ours / SnapKVPress: prefill time {ours[0] / peer[0]:.2f}, KV bytes {ours[1] / peer[1]:.2f}, "
        f"decode time {ours[2] / peer[2]:.2f}.",
    ]
    table = "\n".join(rows) + "\n"
    atomic_write_text(Path(__file__).with_name("results.md"), table)
    return table


if __name__ == "__main__":
    print(main())
