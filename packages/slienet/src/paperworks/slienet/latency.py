"""Latency at batch size 1, measured fairly on a noisy machine: variants interleaved call by call.

:func:`measure_interleaved` runs every variant once per round, in an order that rotates each round, so
that background load hits all variants alike; it returns each variant's per-call wall times in
seconds. :func:`latency_stats` gives p50 / p99 / max, :func:`deadline_misses` counts calls over a
deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

__all__ = ["deadline_misses", "latency_stats", "measure_interleaved"]


def measure_interleaved(
    variants: Mapping[str, tuple[Callable, Sequence]],
    rounds: int,
    *,
    warmup: int = 20,
    every: Mapping[str, int] | None = None,
    progress: Callable | None = None,
) -> dict[str, np.ndarray]:
    """Time ``fn(inputs[r % len(inputs)])`` for every variant ``name -> (fn, inputs)`` in each round.

    ``every[name] = m`` measures that variant only every m-th round (for slow variants).
    ``progress`` wraps the round iterator (e.g. ``Progress.track``). Returns ``name -> (n,) seconds``.
    """
    if rounds < 1:
        raise ValueError(f"rounds: expected >= 1, got {rounds}")
    if not variants:
        raise ValueError("variants: expected at least one variant")
    names = list(variants)
    every = dict(every or {})
    for name, (fn, inputs) in variants.items():
        if not callable(fn) or len(inputs) == 0:
            raise ValueError(f"variants[{name!r}]: expected (callable, non-empty inputs)")
        for i in range(warmup):
            fn(inputs[i % len(inputs)])
    times: dict[str, list[float]] = {n: [] for n in names}
    it = range(rounds) if progress is None else progress(range(rounds))
    clock = time.perf_counter
    for r in it:
        k = r % len(names)
        for name in names[k:] + names[:k]:
            if r % every.get(name, 1):
                continue
            fn, inputs = variants[name]
            x = inputs[r % len(inputs)]
            t0 = clock()
            fn(x)
            times[name].append(clock() - t0)
    return {n: np.asarray(v) for n, v in times.items()}


def latency_stats(times_s: np.ndarray) -> dict[str, float]:
    """p50, p99, max and mean in milliseconds."""
    t = np.asarray(times_s, dtype=float)
    if t.ndim != 1 or t.size == 0:
        raise ValueError("times_s: expected a non-empty 1-d array of seconds")
    return {
        "p50_ms": float(np.percentile(t, 50) * 1e3),
        "p99_ms": float(np.percentile(t, 99) * 1e3),
        "max_ms": float(t.max() * 1e3),
        "mean_ms": float(t.mean() * 1e3),
    }


def deadline_misses(times_s: np.ndarray, deadline_s: float) -> int:
    """Number of calls that took longer than ``deadline_s`` seconds."""
    if not deadline_s > 0:
        raise ValueError(f"deadline_s: expected a positive number of seconds, got {deadline_s}")
    return int((np.asarray(times_s) > deadline_s).sum())
