"""Side by side on the core bench harness: TaskKVPress vs kvpress's SnapKVPress vs no compression.

One random tiny ``LlamaForCausalLM`` (4 layers, d = 128, eager attention), batch 8, 256-token agent
contexts of 64 steps, a 20% KV budget, one torch thread, under ``torch.inference_mode``. Two questions,
one :func:`paperworks.core.bench.compare` each (warm-up, rounds interleaved in a seeded random order,
medians, ratio ours/peer with a bootstrap interval):

1. *Prefill*: the forward pass over the context with each press active (the press scores and prunes
   the cache inside it) against the plain forward pass. What compressing costs is this time minus the
   plain prefill; the overhead table states it in decode steps.
2. *Decoding over the kept cache*: 32 greedy tokens from the cache each press left (prefilled once per
   press, untimed). Each timed call first crops its cache back to the prefilled length
   (``DynamicCache.crop``, a slice per layer), so every call decodes from the same state.

Tables (same run, same inputs): KV-cache bytes after the prefill (what each press keeps) and the
compression overhead: the per-round difference prefill with the press minus the plain prefill (rounds
are paired, as for the ratios: median over rounds with a 95% percentile-bootstrap interval), also in
units of one decode step of that press's cache.

Run: ``uv run python packages/taskkv/benchmarks/bench_taskkv.py [--quick]`` or
``uv run paperworks bench taskkv [--quick]``. The full run writes benchmarks/results.json and
results.md; ``--quick`` (3 rounds, 1 warm-up; the one size) writes to a temporary folder and prints.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from kvpress import SnapKVPress

from paperworks.core.bench import compare, publish
from paperworks.taskkv import AgentTaskConfig, TaskKVPress, Vocab, generate_tasks
from paperworks.taskkv.toymodel import tiny_llama

BATCH, N_STEPS, NEW_TOKENS, BUDGET = 8, 64, 32, 0.2
SIZES = ((BATCH, 4 * N_STEPS),)  # batch x context tokens (steps of 4 tokens), the one size measured
REPEATS = 40  # 40, not 20: prefill times spread widely on the shared 2-core machine; about a minute
OURS, SNAP, PLAIN = "TaskKVPress (ours, priors)", "SnapKVPress (kvpress)", "no compression"
NOTE_PREFILL = (
    "Sides: one forward pass over the context (`use_cache=True`) with `TaskKVPress` (ours, priors "
    "only; the fitted residual adds one small MLP per layer), kvpress's `SnapKVPress` (window 4) or no "
    "press, at compression ratio 1 - floor(0.2 x 256)/256 (both presses keep exactly 51 of 256 tokens). "
    "The press's scoring and pruning run inside the pass; the plain pass is the floor. Random weights "
    "(timing does not depend on them)."
)
NOTE_DECODE = (
    "Sides: 32 greedy tokens (one forward pass each, batch 8) over the cache each side's prefill "
    "left, positions continuing after the full 256-token context. The caches are prefilled once, "
    "outside the timing; each call crops its cache back to the prefilled length first "
    "(`DynamicCache.crop`, part of the timed call, a slice per layer), so every round decodes from the "
    "same state. Both presses keep the same number of tokens, so they should decode at one speed; "
    "the uncompressed cache is 5x longer."
)


class Instance:
    """One size's model, context ids, presses and prefilled caches."""

    def __init__(self, batch: int, context: int) -> None:
        n_steps = context // 4
        cfg = AgentTaskConfig(
            n_steps=n_steps, n_errors=(2, 8), vocab=Vocab(n_objects=6, n_locations=6, n_fillers=8)
        )
        tasks = generate_tasks(batch, cfg, np.random.default_rng(0))
        self.ids = torch.as_tensor(tasks.context)
        if self.ids.shape != (batch, context):
            raise RuntimeError(f"expected contexts of shape {(batch, context)}, got {tuple(self.ids.shape)}")
        self.model = tiny_llama(cfg.vocab.size, hidden=128, layers=4, heads=4, seed=0)
        ratio = 1.0 - int(BUDGET * context) / context - 1e-6
        self.presses = {
            PLAIN: None,
            SNAP: SnapKVPress(compression_ratio=ratio, window_size=4),
            OURS: TaskKVPress(compression_ratio=ratio, step_offsets=tuple(cfg.offsets)),
        }
        self.caches = {}
        for name, press in self.presses.items():
            out = self.prefill(press)
            cache = out.past_key_values
            self.caches[name] = (cache, cache.get_seq_length(), out.logits[:, -1:].argmax(-1))

    def prefill(self, press):
        with torch.inference_mode():
            if press is None:
                return self.model(input_ids=self.ids, use_cache=True)
            with press(self.model):
                return self.model(input_ids=self.ids, use_cache=True)

    def decode(self, name: str) -> torch.Tensor:
        cache, length, nxt = self.caches[name]
        pos = self.ids.shape[1]
        with torch.inference_mode():
            cache.crop(length)
            for i in range(NEW_TOKENS):
                o = self.model(
                    input_ids=nxt,
                    past_key_values=cache,
                    position_ids=torch.full((self.ids.shape[0], 1), pos + i),
                    use_cache=True,
                )
                nxt = o.logits[:, -1:].argmax(-1)
        return nxt

    def kv_bytes(self, name: str) -> int:
        cache, length, _ = self.caches[name]
        cache.crop(length)
        return sum(layer.keys.numel() * layer.keys.element_size() * 2 for layer in cache.layers)


def paired_difference(a, b, n_boot: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Median over rounds of ``a[i] - b[i]`` and its 95% percentile-bootstrap interval over rounds."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    idx = np.random.default_rng(seed).integers(0, d.size, size=(n_boot, d.size))
    lo, hi = np.quantile(np.median(d[idx], axis=1), [0.025, 0.975])
    return float(np.median(d)), float(lo), float(hi)


def main(quick: bool = False) -> str:
    reps = dict(repeats=3, warmup=1) if quick else dict(repeats=REPEATS, warmup=2)
    cache: dict[tuple[int, int], Instance] = {}

    def instance(size: tuple[int, int]) -> Instance:
        if size not in cache:
            x = cache[size] = Instance(*size)
            for name in x.presses:  # cropping restores the prefilled state: decoding is repeatable
                if not torch.equal(x.decode(name), x.decode(name)):
                    raise RuntimeError(f"{name}: decoding twice from the cropped cache gave different tokens")
        return cache[size]

    common = dict(sizes=SIZES, ours=OURS, size_label="batch × context tokens", **reps)
    prefill = compare(
        {name: (lambda x, n=name: x.prefill(x.presses[n])) for name in (OURS, SNAP, PLAIN)},
        instance,
        name="Prefill with compression: TaskKVPress vs SnapKVPress vs no press",
        note=NOTE_PREFILL,
        **common,
    )
    decode = compare(
        {name: (lambda x, n=name: x.decode(n)) for name in (OURS, SNAP, PLAIN)},
        instance,
        name=f"Greedy decoding of {NEW_TOKENS} tokens over the kept cache",
        note=NOTE_DECODE,
        **common,
    )

    kv = ["| batch × context | side | tokens kept | KV bytes after prefill | KV bytes / uncompressed |"]
    kv.append("| --- | --- | --- | --- | --- |")
    over = [
        "| batch × context | side | prefill - plain prefill [95% CI] | decode step "
        "| in decode steps [95% CI] |",
        "| --- | --- | --- | --- | --- |",
    ]
    for size in SIZES:
        x = cache[size]
        full = x.kv_bytes(PLAIN)
        label = f"{size[0]} × {size[1]}"
        for name in (OURS, SNAP, PLAIN):
            b = x.kv_bytes(name)
            kv.append(f"| {label} | {name} | {x.caches[name][1]} | {b:,} | {b / full:.3f} |")
        plain = prefill.row(size).side(PLAIN).times_s
        for name in (OURS, SNAP):
            est, lo, hi = paired_difference(prefill.row(size).side(name).times_s, plain)
            step = decode.row(size).side(name).median_s / NEW_TOKENS
            over.append(
                f"| {label} | {name} | {1e3 * est:.1f} ms [{1e3 * lo:.1f}, {1e3 * hi:.1f}] | "
                f"{1e3 * step:.2f} ms | {est / step:.2f} [{lo / step:.2f}, {hi / step:.2f}] |"
            )
    tables = {
        "KV cache kept (same contexts)": "\n".join(kv),
        "Compression overhead (paired by round: prefill with the press minus the plain prefill; in "
        "units of the median decode step of that press's cache)": "\n".join(over),
    }
    return publish([prefill, decode], __file__, quick=quick, title="taskkv benchmarks", tables=tables)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds, 1 warm-up, temporary folder")
    main(quick=parser.parse_args().quick)
