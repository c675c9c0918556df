"""Side-by-side sampling time: TG vs uniform vs our sum-tree PER vs TorchRL's PrioritizedSampler.

For each buffer size (10^4 .. 10^7, full buffers) every sampler draws the storage indices of a
256-transition batch. Three questions, one :func:`paperworks.core.bench.compare` each (warm-up,
interleaved rounds in a shuffled order, one draw per timing, the ratio TG/side with its bootstrap
interval):

* all four samplers in one round-robin (TG, uniform, our PER, TorchRL's PER when torchrl is installed);
* TG and uniform alone, with no PER call between them (the PER samplers walk trees of tens to hundreds
  of MB between the TG calls in the round-robin);
* the gather of the batch's rows, identical for every sampler and left out of the sampler timings, as
  context.

BLAS pinned to one thread (``threadpool_limits(1)``; the harness also pins torch).

    uv run python packages/tg-replay/benchmarks/bench_tg_replay.py [--quick]
    uv run paperworks bench tg-replay [--quick]

``--quick``: the smallest buffer only, 3 rounds after 1 warm-up call, results written to a temporary
folder (the committed ``benchmarks/results.*`` are left alone) and printed.

The committed ``results.json`` keeps every round's time (the harness's record), rounded to 4
significant digits, with 100 rounds per comparison (30 for the gather context), so that it stays
under a fifth of a megabyte.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np
from threadpoolctl import threadpool_limits

from paperworks.core.bench import BenchResult, compare, publish
from paperworks.tg_replay import PrioritizedSampler, RingBuffer, TruncatedGeometricSampler, UniformSampler

try:  # the TorchRL peer (extra `torchrl`); imported before the thread pools are pinned
    import torch
    from torchrl.data import LazyTensorStorage
    from torchrl.data.replay_buffers.samplers import PrioritizedSampler as TorchRLPER
except ImportError:
    torch = None

BATCH = 256
SIZES = (10**4, 10**5, 10**6, 10**7)
REPEATS, WARMUP = 100, 2
GATHER_REPEATS = 30
N_GATHER_SETS = 1024
TITLE = "tg-replay benchmarks"
SETUP = (
    f"Batch {BATCH}, full buffers; index sampling only (the gather of the rows is the same for every "
    "sampler, see the gather table). TG's expected age is 10% of the buffer. One draw per timing "
    "(`number=1`, so the sides alternate draw by draw, as in a training loop; the timer's own overhead, "
    "well under 1 µs, is included). One process, BLAS and torch on one thread."
)


def _ring_buffers(size: int, seed: int) -> tuple[RingBuffer, RingBuffer]:
    rng = np.random.default_rng(seed)
    tg = RingBuffer(size, (), sampler=TruncatedGeometricSampler.from_expected_age(0.1 * size), seed=seed)
    uniform = RingBuffer(size, (), sampler=UniformSampler(), seed=seed)
    cursor = int(rng.integers(0, size))
    for b in (tg, uniform):  # fill the cursor/size bookkeeping only (no per-transition data needed)
        b.size, b.cursor = size, cursor
    return tg, uniform


def _torchrl_per(size: int):
    """TorchRL's PrioritizedSampler over a full storage of ``size``, or None without torchrl."""
    if torch is None:
        return None
    torch.manual_seed(size)
    storage = LazyTensorStorage(size)
    storage.set(torch.arange(size), torch.zeros(size))
    sampler = TorchRLPER(max_capacity=size, alpha=0.6, beta=0.4)
    sampler.extend(torch.arange(size))
    sampler.update_priority(torch.arange(size), torch.rand(size) + 0.01)
    return SimpleNamespace(sampler=sampler, storage=storage)


def samplers_input(size: int, seed: int = 0) -> SimpleNamespace:
    tg, uniform = _ring_buffers(size, seed)
    rng = np.random.default_rng(seed + 1)
    per = PrioritizedSampler(size, alpha=0.6, beta=0.4)
    per.add(np.arange(size))
    per.update_priorities(np.arange(size), rng.random(size))
    return SimpleNamespace(tg=tg, uniform=uniform, per=per, rng=rng, torchrl=_torchrl_per(size))


def pair_input(size: int, seed: int = 0) -> SimpleNamespace:
    tg, uniform = _ring_buffers(size, seed)
    return SimpleNamespace(tg=tg, uniform=uniform)


def gather_input(size: int, seed: int = 0) -> SimpleNamespace:
    rng = np.random.default_rng(seed)
    obs = rng.normal(size=(size, 4)).astype(np.float32)
    # a fresh set of random slots per call (cycling through N_GATHER_SETS), so repeated calls do not
    # find the same 256 rows in cache
    return SimpleNamespace(obs=obs, idx=itertools.cycle(list(rng.integers(0, size, (N_GATHER_SETS, BATCH)))))


def draw_tg(x: SimpleNamespace) -> np.ndarray:
    return x.tg.sample_slots(BATCH)


def draw_uniform(x: SimpleNamespace) -> np.ndarray:
    return x.uniform.sample_slots(BATCH)


def draw_per(x: SimpleNamespace):
    return x.per.sample(BATCH, rng=x.rng)


def draw_torchrl(x: SimpleNamespace):
    return x.torchrl.sampler.sample(x.torchrl.storage, BATCH)


def gather(x: SimpleNamespace) -> np.ndarray:
    return x.obs[next(x.idx)]


def _rounded(result: BenchResult, digits: int = 4) -> BenchResult:
    """``result`` with every recorded time rounded to ``digits`` significant digits (medians, ratios and
    their intervals were computed from the unrounded times)."""

    def side(s):
        return dataclasses.replace(s, times_s=tuple(float(f"{t:.{digits}g}") for t in s.times_s))

    rows = tuple(dataclasses.replace(r, sides=tuple(side(s) for s in r.sides)) for r in result.rows)
    return dataclasses.replace(result, rows=rows)


def run(
    sizes: Sequence[int], repeats: int, warmup: int, gather_repeats: int | None = None
) -> list[BenchResult]:
    # number=1: every timing is one draw, so the round-robin interleaves single draws as a training loop
    # does (a batch of back-to-back calls of one sampler would keep its working set in cache)
    common = dict(sizes=sizes, warmup=warmup, repeats=repeats, number=1, threads=1, size_label="buffer size")
    sides = {"tg": draw_tg, "uniform": draw_uniform, "per (ours)": draw_per}
    has_torchrl = torch is not None
    if has_torchrl:
        sides["per (torchrl)"] = draw_torchrl
    mode = torch.inference_mode() if has_torchrl else contextlib.nullcontext()
    with mode:
        four = compare(
            sides,
            make_input=samplers_input,
            ours="tg",
            name="Index sampling: TG vs uniform vs PER (four-way round-robin)",
            note=f"{SETUP} PER: proportional, alpha = 0.6, beta = 0.4, importance weights included; ours "
            "is a NumPy sum-tree vectorised over the batch, TorchRL's is its C++ segment tree"
            + (" (under `torch.inference_mode`)." if has_torchrl else "; torchrl is not installed here.")
            + " The four samplers alternate in each round, so the PER samplers' large trees pass through "
            "the caches between TG calls.",
            **common,
        )
    pair = compare(
        {"tg": draw_tg, "uniform": draw_uniform},
        make_input=pair_input,
        ours="tg",
        name="Index sampling: TG vs uniform alone",
        note=f"{SETUP} Only TG and uniform, interleaved, with no PER call between them.",
        **common,
    )
    context = compare(
        {"gather 256x4": gather},
        make_input=gather_input,
        ours="gather 256x4",
        name="Context: gather of the batch rows",
        note=f"Context for the sampler timings: `obs[idx]` for {BATCH} uniformly random slots of a "
        f"float32 (buffer size, 4) array, a new set of slots each call (cycling through {N_GATHER_SETS} "
        "precomputed sets); the same for every sampler (no ratio). One call per timing.",
        **{**common, "repeats": gather_repeats or repeats},
    )
    return [_rounded(r) for r in (four, pair, context)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="smallest buffer only, 3 rounds; temporary output"
    )
    args = parser.parse_args()
    sizes = SIZES[:1] if args.quick else SIZES
    repeats, warmup = (3, 1) if args.quick else (REPEATS, WARMUP)
    with threadpool_limits(limits=1):
        results = run(sizes, repeats, warmup, None if args.quick else GATHER_REPEATS)
    title = TITLE + (" (quick)" if args.quick else "")
    publish(results, __file__, quick=args.quick, title=title)


if __name__ == "__main__":
    main()
