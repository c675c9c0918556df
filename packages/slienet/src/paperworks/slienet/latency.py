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

from paperworks.core import validate

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
    rounds = validate.positive_int(rounds, "rounds")
    warmup = validate.nonnegative_int(warmup, "warmup")
    if not isinstance(variants, Mapping) or not variants:
        raise ValueError("variants: expected a non-empty mapping name -> (callable, inputs)")
    if progress is not None and not callable(progress):
        raise TypeError(
            f"progress: expected a callable wrapping the round iterator, got {type(progress).__name__}"
        )
    names = list(variants)
    if every is not None and not isinstance(every, Mapping):
        raise TypeError(f"every: expected a mapping name -> int, got {type(every).__name__}")
    every = dict(every or {})
    for name, m in every.items():
        if name not in variants:
            raise ValueError(f"every: {name!r} is not one of the variants {names}")
        validate.positive_int(m, f"every[{name!r}]")
    for name, spec in variants.items():
        if not isinstance(spec, tuple | list) or len(spec) != 2:
            raise ValueError(f"variants[{name!r}]: expected a pair (callable, non-empty inputs)")
        fn, inputs = spec
        if not callable(fn) or not isinstance(inputs, Sequence) or len(inputs) == 0:
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
    """p50, p99, max and mean in milliseconds of ``times_s`` (finite, >= 0 seconds)."""
    t = _times(times_s)
    return {
        "p50_ms": float(np.percentile(t, 50) * 1e3),
        "p99_ms": float(np.percentile(t, 99) * 1e3),
        "max_ms": float(t.max() * 1e3),
        "mean_ms": float(t.mean() * 1e3),
    }


def deadline_misses(times_s: np.ndarray, deadline_s: float) -> int:
    """Number of calls that took longer than ``deadline_s`` seconds."""
    t = _times(times_s)
    deadline_s = validate.positive_float(deadline_s, "deadline_s")
    return int((t > deadline_s).sum())


def _times(times_s: np.ndarray) -> np.ndarray:
    t = validate.finite_array(times_s, "times_s", ndim=1)
    if (t < 0).any():
        raise ValueError("times_s: expected non-negative durations in seconds")
    return t
