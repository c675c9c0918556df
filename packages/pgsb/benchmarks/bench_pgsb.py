"""Merge wall time on the core bench harness: PGSB vs TIES and KnOTS here, vs peft's add_weighted_adapter.

Two questions, one :func:`paperworks.core.bench.compare` each, one d x d linear layer and K rank-8 adapters
(alpha 16), the same adapters for every side (warm-up, rounds interleaved in a seeded random order,
medians, ratio ours/peer with a bootstrap interval; one torch thread):

1. PGSB against the dense merges here (TIES, KnOTS) and peft's ``ties``; peft's time is split into the
   end-to-end call (:func:`peft_merge`: build a ``PeftModel`` over a copy of the base, load the K adapters,
   merge, read the dense delta), the build alone (:func:`to_peft_model`) and the merge alone on a
   prebuilt ``PeftModel`` (``add_weighted_adapter`` + ``get_delta_weight``, then ``delete_adapter``).
   Sizes (d, K) in (256, 2), (256, 16), (1024, 4), (1024, 16), (4096, 2).
2. PGSB against peft's ``svd`` (a full SVD of the summed dense update), end to end, at d <= 1024: one
   call at d = 4096 takes about a minute with one thread, so its rounds would not fit the budget.

PGSB's stage 1 compares each layer with a chance level computed by Monte Carlo once per layer shape and
then cached (:func:`paperworks.pgsb.null_overlap_threshold`); the warm-up calls fill that cache, so
``PGSB (ours)`` is the steady-state merge, and ``PGSB, null not cached`` clears the cache before every
call (a model's first layer of each shape pays it).

Memory is not measured (torch's CPU allocator is invisible to tracemalloc); a table gives the analytic
size of the main intermediates instead (the K dense updates TIES forms here vs the low-rank stacks PGSB
works on). No quality is compared here: the reproduction scores peft's merges beside ours.

Run: ``uv run python packages/pgsb/benchmarks/bench_pgsb.py [--quick]`` or ``uv run paperworks bench pgsb
[--quick]``. The full run writes benchmarks/results.json and results.md; ``--quick`` (smallest size, 3
rounds, 1 warm-up) writes to a temporary folder and prints.
"""

from __future__ import annotations

import argparse

import torch
from torch import nn

from paperworks.core.bench import compare, publish
from paperworks.pgsb import LoRAAdapter, clear_null_cache, merge
from paperworks.pgsb.peft_interop import peft_merge, peft_weighted_merge, to_peft_model

SIZES = ((256, 2), (256, 16), (1024, 4), (1024, 16), (4096, 2))  # (d, K)
SVD_SIZES = tuple(s for s in SIZES if s[0] <= 1024)
RANK, ALPHA, DENSITY = 8, 16.0, 0.2
COMMON = (
    "One d x d linear layer, K rank-8 adapters (A ~ N(0, 1/d), B ~ N(0, 1), alpha 16), the same for every "
    "side; each side returns the merged dense update Delta. One torch thread (the old hand-timed table "
    "used two)."
)
NOTE_MAIN = (
    f"{COMMON} Sides: `merge(..., 'pgsb')` (ours; its chance level is cached per layer shape, and "
    "*null not cached* clears that cache before each call), TIES and KnOTS here "
    "(`merge(..., 'ties' / 'knots')`), "
    "and peft's `add_weighted_adapter(combination_type='ties', density=0.2)` timed three ways, because "
    "building peft's model is conversion, not merging: *end to end* (`peft_merge`: deep copy of the base, "
    "`get_peft_model`, K adapters loaded, merge, delta read), *build only* (`to_peft_model`), and *merge "
    "only* on a `PeftModel` built once per size outside the timing (`add_weighted_adapter` + "
    "`get_delta_weight`, then `delete_adapter` to restore it: `peft_weighted_merge`)."
)
NOTE_SVD = (
    f"{COMMON} Sides: `merge(..., 'pgsb')` (ours) and peft's `add_weighted_adapter(combination_type="
    "'svd')` end to end (`peft_merge`): a full SVD of the summed dense update. d = 4096 is left out: a "
    "single probe call of peft's svd there took about a minute with one thread, and 20 rounds would "
    "take the benchmark far past its 5-minute budget."
)


class Layer:
    """One size's base layer and adapters, and a prebuilt PeftModel for the merge-only side."""

    def __init__(self, d: int, K: int) -> None:
        g = torch.Generator().manual_seed(d + K)
        self.base = nn.Sequential(nn.Linear(d, d, bias=False))
        self.adapters = [
            {
                "0": LoRAAdapter(
                    torch.randn(RANK, d, generator=g) / d**0.5, torch.randn(d, RANK, generator=g), alpha=ALPHA
                )
            }
            for _ in range(K)
        ]
        self._peft = None

    @property
    def peft_model(self):
        if self._peft is None:
            self._peft = to_peft_model(self.base, self.adapters)
        return self._peft


def peft_ties_merge_only(x: Layer) -> torch.Tensor:
    names = [f"task{k}" for k in range(len(x.adapters))]
    return peft_weighted_merge(x.peft_model, names, "ties", density=DENSITY)["0"]


def pgsb_cold(x: Layer) -> dict[str, torch.Tensor]:
    clear_null_cache()
    return merge(x.base, x.adapters, "pgsb", output="delta")


def main(quick: bool = False) -> str:
    sizes = SIZES[:1] if quick else SIZES
    svd_sizes = SVD_SIZES[:1] if quick else SVD_SIZES
    reps = dict(repeats=3, warmup=1) if quick else dict(repeats=20, warmup=2)
    cache: dict[tuple[int, int], Layer] = {}

    def layer(size: tuple[int, int]) -> Layer:
        if size not in cache:
            cache[size] = Layer(*size)
        return cache[size]

    def prebuilt(size: tuple[int, int]) -> Layer:
        x = layer(size)
        _ = x.peft_model  # built here, outside the timing
        return x

    ours = "PGSB (ours)"
    main_result = compare(
        {
            ours: lambda x: merge(x.base, x.adapters, "pgsb", output="delta"),
            "PGSB, null not cached": pgsb_cold,
            "TIES here": lambda x: merge(x.base, x.adapters, "ties", output="delta"),
            "KnOTS here": lambda x: merge(x.base, x.adapters, "knots", output="delta"),
            "peft ties, end to end": lambda x: peft_merge(x.base, x.adapters, "ties"),
            "peft ties, merge only": peft_ties_merge_only,
            "peft: build PeftModel only": lambda x: to_peft_model(x.base, x.adapters),
        },
        prebuilt,
        sizes,
        ours=ours,
        name="Merging one layer: PGSB vs TIES, KnOTS and peft ties",
        size_label="d × K",
        note=NOTE_MAIN,
        **reps,
    )
    svd_result = compare(
        {
            ours: lambda x: merge(x.base, x.adapters, "pgsb", output="delta"),
            "peft svd, end to end": lambda x: peft_merge(x.base, x.adapters, "svd"),
        },
        layer,
        svd_sizes,
        ours=ours,
        name="Merging one layer: PGSB vs peft svd",
        size_label="d × K",
        note=NOTE_SVD,
        **reps,
    )
    mem = [
        "| d × K | K dense updates, float32 (TIES here) | low-rank stacks A and B, float32 (PGSB) |",
        "| --- | --- | --- |",
    ]
    for d, K in sizes:
        dense, low = K * d * d * 4 / 2**20, K * RANK * 2 * d * 4 / 2**20
        mem.append(f"| {d:,} × {K} | {dense:.3g} MiB | {low:.3g} MiB |")
    tables = {"Analytic size of the main intermediates (not measured)": "\n".join(mem)}
    return publish([main_result, svd_result], __file__, quick=quick, title="pgsb benchmarks", tables=tables)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest size, 3 rounds, temporary folder")
    main(quick=parser.parse_args().quick)
