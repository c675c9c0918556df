"""One benchmark harness for every package: warm-up, interleaved repeats, medians, paired ratios.

:func:`compare` times named callables ("sides") on the same input, at one or several sizes. For each
size the input is built once and shared by all sides; each side is called ``warmup`` times untimed;
then come ``repeats`` rounds, and in each round every side is timed once, in an order shuffled by a
seeded generator (``A B``, ``B A``, ...) so that drift of the machine hits all sides alike. The ratio
ours/peer is paired by round: its estimate is the median of the per-round ratios, its interval a
percentile bootstrap over rounds (:func:`bootstrap_ratio_interval`).

:func:`write_results` writes ``results.json`` and the generated ``results.md`` (with the machine
record); README benchmark blocks come from :func:`results_markdown` of :func:`load_results`.

torch is never imported here. When some module has imported it, ``threads`` pins its intra-op
threads, and ``memory="torch"`` reads the CUDA allocator's peak; on the CPU, torch's allocations are
invisible to tracemalloc, so peak memory is then recorded as not measured.
"""

from __future__ import annotations

import gc
import math
import os
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .io import atomic_write_json, atomic_write_text
from .progress import Progress
from .record import machine_record
from .seeding import torch_threads

__all__ = [
    "BenchResult",
    "Ratio",
    "SideTimes",
    "SizeResult",
    "bootstrap_ratio_interval",
    "compare",
    "load_results",
    "pin_threads",
    "publish",
    "results_markdown",
    "render_results_file",
    "write_results",
]

SCHEMA = "paperworks.bench/1"
_MEMORY = {False: None, True: "tracemalloc", "tracemalloc": "tracemalloc", "torch": "torch"}
_MAX_NUMBER = 1_000_000
_THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
_NOT_MEASURED_TORCH_CPU = "not measured (torch on the CPU: tracemalloc does not see torch's allocator)"


# ----------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class SideTimes:
    """One side at one size: seconds per call in each round (``number`` calls per timing)."""

    name: str
    times_s: tuple[float, ...]
    number: int = 1
    peak_bytes: int | None = None

    @property
    def median_s(self) -> float:
        return float(np.median(self.times_s))

    @property
    def iqr_s(self) -> float:
        q1, q3 = np.quantile(self.times_s, [0.25, 0.75])
        return float(q3 - q1)


@dataclass(frozen=True)
class Ratio:
    """Time ours/``peer``: median of per-round ratios, with its bootstrap interval at ``level``."""

    peer: str
    estimate: float
    low: float
    high: float
    level: float = 0.95

    def format(self) -> str:
        return f"{self.estimate:.3g} [{self.low:.3g}, {self.high:.3g}]"


@dataclass(frozen=True)
class SizeResult:
    """Every side at one size, the ratios ours/peer, and the order the sides ran in each round."""

    size: Any
    sides: tuple[SideTimes, ...]
    ratios: tuple[Ratio, ...]
    order: tuple[tuple[str, ...], ...]

    def side(self, name: str) -> SideTimes:
        for s in self.sides:
            if s.name == name:
                return s
        raise KeyError(f"side: {name!r} is not one of {[s.name for s in self.sides]}")

    def ratio(self, peer: str) -> Ratio:
        for r in self.ratios:
            if r.peer == peer:
                return r
        raise KeyError(f"peer: {peer!r} is not one of {[r.peer for r in self.ratios]}")


@dataclass(frozen=True)
class BenchResult:
    """What :func:`compare` measured: one :class:`SizeResult` per size, the settings, the machine."""

    name: str
    ours: str
    peers: tuple[str, ...]
    rows: tuple[SizeResult, ...]
    settings: dict[str, Any] = field(default_factory=dict)
    machine: dict[str, Any] = field(default_factory=dict)
    size_label: str = "size"
    note: str = ""

    def row(self, size: Any = None) -> SizeResult:
        """The row of ``size`` (may be omitted when there is one size)."""
        if size is None and len(self.rows) == 1:
            return self.rows[0]
        for r in self.rows:
            if r.size == size:
                return r
        raise KeyError(f"size: {size!r} is not one of {[r.size for r in self.rows]}")

    def ratio(self, peer: str | None = None, size: Any = None) -> Ratio:
        """Ours/``peer`` at ``size``; ``peer`` may be omitted when there is one peer."""
        if peer is None:
            if len(self.peers) != 1:
                raise ValueError(f"peer: expected one of {list(self.peers)}, got None")
            peer = self.peers[0]
        return self.row(size).ratio(peer)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "ours": self.ours,
            "peers": list(self.peers),
            "size_label": self.size_label,
            "note": self.note,
            "settings": _plain(self.settings),
            "machine": _plain(self.machine),
            "rows": [
                {
                    "size": _plain(r.size),
                    "order": [list(o) for o in r.order],
                    "sides": [
                        {
                            "name": s.name,
                            "median_s": s.median_s,
                            "iqr_s": s.iqr_s,
                            "number": s.number,
                            "peak_bytes": s.peak_bytes,
                            "times_s": list(s.times_s),
                        }
                        for s in r.sides
                    ],
                    "ratios": [asdict(q) for q in r.ratios],
                }
                for r in self.rows
            ],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BenchResult:
        rows = tuple(
            SizeResult(
                size=_tupled(r["size"]),
                sides=tuple(
                    SideTimes(s["name"], tuple(map(float, s["times_s"])), int(s["number"]), s["peak_bytes"])
                    for s in r["sides"]
                ),
                ratios=tuple(Ratio(**q) for q in r["ratios"]),
                order=tuple(tuple(o) for o in r["order"]),
            )
            for r in d["rows"]
        )
        return cls(
            name=d["name"],
            ours=d["ours"],
            peers=tuple(d["peers"]),
            rows=rows,
            settings=dict(d.get("settings", {})),
            machine=dict(d.get("machine", {})),
            size_label=d.get("size_label", "size"),
            note=d.get("note", ""),
        )

    def to_markdown(self) -> str:
        return _result_markdown(self)


# --------------------------------------------------------------------------------------- statistics


def bootstrap_ratio_interval(
    ours_s: Sequence[float],
    peer_s: Sequence[float],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """``(estimate, low, high)`` of time ours/peer over paired rounds.

    ``estimate`` is the median of the per-round ratios ``ours_s[i] / peer_s[i]``. The interval is the
    percentile bootstrap: ``np.random.default_rng(seed).integers(0, n, size=(n_boot, n))`` draws
    ``n_boot`` resamples of round indices (pairs stay together), each gives the median of its ratios,
    and ``low``/``high`` are the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of those medians
    (``np.quantile``, linear).
    """
    o = np.asarray(ours_s, dtype=float)
    p = np.asarray(peer_s, dtype=float)
    if o.ndim != 1 or p.ndim != 1 or o.shape != p.shape:
        raise ValueError(f"ours_s, peer_s: expected 1-d sequences of one length, got {o.shape}, {p.shape}")
    if o.size < 2:
        raise ValueError(f"ours_s, peer_s: expected at least 2 paired rounds, got {o.size}")
    for name, a in (("ours_s", o), ("peer_s", p)):
        if not np.all(np.isfinite(a)) or np.any(a <= 0):
            raise ValueError(f"{name}: expected finite positive times")
    _check_int("n_boot", n_boot, 1)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level: expected a number in (0, 1), got {level!r}")
    r = o / p
    idx = np.random.default_rng(seed).integers(0, r.size, size=(n_boot, r.size))
    boot = np.median(r[idx], axis=1)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(boot, [alpha, 1.0 - alpha])
    return float(np.median(r)), float(low), float(high)


# ---------------------------------------------------------------------------------------- threads


@contextmanager
def pin_threads(n: int | None) -> Iterator[dict[str, Any]]:
    """Pin compute threads to ``n`` inside the block and yield the record of what is in force.

    torch's intra-op threads are set when torch is already imported; BLAS/OpenMP pools through
    threadpoolctl when it is installed (else they are left as the environment set them, and the record
    says so). ``n=None`` changes nothing and only records.
    """
    if n is not None:
        _check_int("threads", n, 1)
    record: dict[str, Any] = {"requested": n}
    limits = None
    if n is not None:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            record["blas"] = "not pinned (threadpoolctl not installed)"
        else:
            limits = threadpool_limits(limits=n)
    try:
        with torch_threads(n) if n is not None else nullcontext():
            torch = sys.modules.get("torch")
            if torch is not None and hasattr(torch, "get_num_threads"):
                record["torch"] = torch.get_num_threads()
            if "threadpoolctl" in sys.modules:
                info = sys.modules["threadpoolctl"].threadpool_info()
                record["blas"] = sorted({f"{i.get('internal_api')}={i.get('num_threads')}" for i in info})
            env = {k: os.environ[k] for k in _THREAD_ENV if k in os.environ}
            if env:
                record["env"] = env
            yield record
    finally:
        if limits is not None:
            limits.restore_original_limits()


# ---------------------------------------------------------------------------------------- compare


def compare(
    sides: Mapping[str, Callable[..., Any]],
    make_input: Callable[[Any], Any] | None = None,
    sizes: Sequence[Any] = (None,),
    *,
    ours: str,
    peer: str | Sequence[str] | None = None,
    name: str | None = None,
    warmup: int = 2,
    repeats: int = 20,
    number: int | None = None,
    min_time_s: float = 1e-3,
    seed: int = 0,
    threads: int | None = 1,
    memory: bool | str = False,
    sync: Callable[[], Any] | str | None = "auto",
    n_boot: int = 2000,
    level: float = 0.95,
    size_label: str = "size",
    note: str = "",
    progress: Progress | None = None,
) -> BenchResult:
    """Time every side of ``sides`` on the same input and the ratio ours/peer, at each of ``sizes``.

    ``sides``: name -> callable. With ``make_input``, each size's input ``x = make_input(size)`` is
    built once and every side is called as ``fn(x)`` (sides must not mutate it); without it sides
    are called with no argument and ``sizes`` must stay ``(None,)``. ``peer``: the side(s) to divide
    by (default every side but ``ours``).

    Per size and side: ``warmup`` untimed calls, then ``repeats`` rounds, each timing ``number`` calls
    of every side in a freshly shuffled order (``seed``); recorded times are seconds per call.
    ``number=None`` calibrates per side from the fastest warm-up call so that one timing lasts at
    least ``min_time_s`` (``number=1`` when ``warmup=0``): a side is called ``warmup +
    repeats * number`` times, plus once more when ``memory`` is measured (peak bytes above the start,
    in a separate untimed call: ``True``/``"tracemalloc"`` for NumPy and Python, ``"torch"`` for
    torch's CUDA allocator). Garbage collection is paused during each timing, as in ``timeit``.
    ``sync`` runs before the clock stops: ``"auto"`` is ``torch.cuda.synchronize`` once CUDA is
    initialised, else nothing. ``threads`` is pinned with :func:`pin_threads` and recorded.
    """
    names, peers, call_with_input, sizes = _check_args(sides, make_input, sizes, ours, peer)
    _check_int("warmup", warmup, 0)
    _check_int("repeats", repeats, 2)
    if number is not None:
        _check_int("number", number, 1)
    if not (isinstance(min_time_s, int | float) and math.isfinite(min_time_s) and min_time_s > 0):
        raise ValueError(f"min_time_s: expected a positive number of seconds, got {min_time_s!r}")
    _check_int("seed", seed, 0)
    _check_int("n_boot", n_boot, 1)
    if not (isinstance(level, int | float) and 0.0 < level < 1.0):
        raise ValueError(f"level: expected a number in (0, 1), got {level!r}")
    if isinstance(memory, str | bool) and memory in _MEMORY:
        mem_kind = _MEMORY[memory]
    else:
        raise ValueError(f"memory: expected False, True, 'tracemalloc' or 'torch', got {memory!r}")
    if not (sync is None or sync == "auto" or callable(sync)):
        raise ValueError(f"sync: expected None, 'auto' or a callable, got {sync!r}")
    if threads is not None:
        _check_int("threads", threads, 1)
    progress = progress or Progress(enabled=False)
    title = name if name is not None else f"{ours} vs {', '.join(peers)}" if peers else ours

    rng = np.random.default_rng(seed)
    rows: list[SizeResult] = []
    memory_note = None
    with pin_threads(threads) as thread_record:
        for i, size in enumerate(sizes):
            progress.log(f"bench {title}: {size_label} {_size_text(size)} ({i + 1}/{len(sizes)})")
            x = make_input(size) if call_with_input else None
            calls = {n: (lambda f=sides[n], x=x: f(x)) if call_with_input else sides[n] for n in names}
            sync_fn = _resolve_sync(sync)
            numbers = {}
            for n in names:
                with _context(n, size):
                    numbers[n] = _warm_up(calls[n], warmup, number, min_time_s, sync_fn)
            order: list[tuple[str, ...]] = []
            ns: dict[str, list[int]] = {n: [] for n in names}
            for _ in range(repeats):
                this = tuple(names[j] for j in rng.permutation(len(names)))
                order.append(this)
                for n in this:
                    with _context(n, size):
                        ns[n].append(_time_batch(calls[n], numbers[n], sync_fn))
            peaks: dict[str, int | None] = dict.fromkeys(names)
            if mem_kind is not None:
                for n in names:
                    with _context(n, size):
                        peaks[n], memory_note = _peak_bytes(calls[n], mem_kind, sync_fn)
            side_times = tuple(
                SideTimes(n, tuple(max(t, 1) / numbers[n] / 1e9 for t in ns[n]), numbers[n], peaks[n])
                for n in names
            )
            by_name = {s.name: s for s in side_times}
            ratios = tuple(
                Ratio(
                    p,
                    *bootstrap_ratio_interval(
                        by_name[ours].times_s, by_name[p].times_s, n_boot=n_boot, seed=seed, level=level
                    ),
                    level=float(level),
                )
                for p in peers
            )
            rows.append(SizeResult(size, side_times, ratios, tuple(order)))

    settings = {
        "warmup": warmup,
        "repeats": repeats,
        "number": number if number is not None else "auto",
        "min_time_s": float(min_time_s),
        "seed": seed,
        "n_boot": n_boot,
        "level": float(level),
        "memory": memory_note if mem_kind is not None else None,
        "threads": thread_record,
        "ratio": "median of per-round ratios ours/peer; percentile bootstrap over rounds",
    }
    return BenchResult(title, ours, peers, tuple(rows), settings, _machine(), size_label, note)


def _check_args(
    sides: Any, make_input: Any, sizes: Any, ours: Any, peer: Any
) -> tuple[list[str], tuple[str, ...], bool, list[Any]]:
    if not isinstance(sides, Mapping) or not sides:
        raise ValueError(f"sides: expected a non-empty mapping of name to callable, got {sides!r}")
    names = list(sides)
    for n, fn in sides.items():
        if not isinstance(n, str) or not n.strip():
            raise ValueError(f"sides: names must be non-empty strings, got {n!r}")
        if not callable(fn):
            raise TypeError(f"sides[{n!r}]: expected a callable, got {type(fn).__name__}")
    if ours not in sides:
        raise ValueError(f"ours: {ours!r} is not one of the sides {names}")
    if peer is None:
        peers = tuple(n for n in names if n != ours)
    else:
        peers = (peer,) if isinstance(peer, str) else tuple(peer)
        for p in peers:
            if p not in sides:
                raise ValueError(f"peer: {p!r} is not one of the sides {names}")
            if p == ours:
                raise ValueError(f"peer: {p!r} is also ours; a peer must be another side")
        if len(set(peers)) != len(peers):
            raise ValueError(f"peer: expected distinct names, got {list(peers)}")
    if make_input is not None and not callable(make_input):
        raise TypeError(f"make_input: expected a callable (size -> input), got {type(make_input).__name__}")
    if isinstance(sizes, str | bytes) or not isinstance(sizes, Sequence) or len(sizes) == 0:
        raise ValueError(f"sizes: expected a non-empty sequence of sizes, got {sizes!r}")
    sizes = list(sizes)
    if make_input is None and sizes != [None]:
        raise ValueError("sizes: given without make_input; pass make_input(size) to build each size's input")
    if len({_size_text(s) for s in sizes}) != len(sizes):
        raise ValueError(f"sizes: expected distinct sizes, got {sizes}")
    return names, peers, make_input is not None, sizes


def _check_int(name: str, v: Any, least: int) -> None:
    if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < least:
        raise ValueError(f"{name}: expected an int >= {least}, got {v!r}")


@contextmanager
def _context(side: str, size: Any) -> Iterator[None]:
    try:
        yield
    except Exception as e:
        e.add_note(f"(while benchmarking side {side!r} at size {_size_text(size)})")
        raise


def _resolve_sync(sync: Callable[[], Any] | str | None) -> Callable[[], Any] | None:
    if sync != "auto":
        return sync  # type: ignore[return-value]
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        return torch.cuda.synchronize
    return None


def _time_batch(call: Callable[[], Any], number: int, sync: Callable[[], Any] | None) -> int:
    """Nanoseconds for ``number`` calls (and one ``sync``), garbage collection paused."""
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        for _ in range(number):
            call()
        if sync is not None:
            sync()
        return time.perf_counter_ns() - t0
    finally:
        if gc_was_on:
            gc.enable()


def _warm_up(
    call: Callable[[], Any],
    warmup: int,
    number: int | None,
    min_time_s: float,
    sync: Callable[[], Any] | None,
) -> int:
    """Run the warm-up calls; return ``number`` (given, or calibrated from the fastest warm-up call)."""
    fastest = None
    for _ in range(warmup):
        t = _time_batch(call, 1, sync)
        fastest = t if fastest is None else min(fastest, t)
    if number is not None:
        return number
    if fastest is None:
        return 1
    return int(min(_MAX_NUMBER, max(1, math.ceil(min_time_s * 1e9 / max(fastest, 1)))))


def _peak_bytes(call: Callable[[], Any], kind: str, sync: Callable[[], Any] | None) -> tuple[int | None, str]:
    """Peak bytes above the starting level during one call, and how they were measured."""
    if kind == "torch":
        torch = sys.modules.get("torch")
        if torch is None or not torch.cuda.is_available():
            return None, _NOT_MEASURED_TORCH_CPU
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        call()
        torch.cuda.synchronize()
        return int(torch.cuda.max_memory_allocated() - base), "torch.cuda.max_memory_allocated (CUDA)"
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        call()
        if sync is not None:
            sync()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return int(max(0, peak - base)), "tracemalloc (Python and NumPy allocations)"


# ---------------------------------------------------------------------------------------- machine


def _machine() -> dict[str, Any]:
    """The run record's machine part, with NumPy's (and torch's, when imported) version."""
    rec = machine_record()
    rec["numpy"] = np.__version__
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "__version__"):
        rec["torch"] = str(torch.__version__).split("+")[0]
    return rec


# ------------------------------------------------------------------------------------ writing out


def results_markdown(
    results: BenchResult | Sequence[BenchResult],
    title: str | None = "Benchmarks",
    *,
    machine: bool = True,
    tables: Mapping[str, str] | None = None,
) -> str:
    """Markdown tables of ``results`` (one section each), extra ``tables`` (title -> markdown, e.g.
    quality side by side on the same inputs), then the machine record when ``machine``."""
    results = _as_list(results)
    parts = [f"# {title}", ""] if title else []
    for r in results:
        parts += [_result_markdown(r), ""]
    for name, table in (tables or {}).items():
        parts += [f"## {name}", "", table.strip(), ""]
    if machine and results:
        parts += ["## Machine", "", *_machine_lines(results), ""]
    return "\n".join(parts).rstrip() + "\n"


def write_results(
    results: BenchResult | Sequence[BenchResult],
    folder: str | os.PathLike[str],
    *,
    title: str = "Benchmarks",
    tables: Mapping[str, str] | None = None,
) -> tuple[Path, Path]:
    """Write ``results.json`` and ``results.md`` into ``folder`` atomically (the JSON last).

    ``tables``: extra markdown tables (title -> table) stored in the JSON and rendered after the timings.
    """
    results = _as_list(results)
    folder = Path(folder)
    tables = dict(tables or {})
    md = atomic_write_text(folder / "results.md", results_markdown(results, title, tables=tables))
    payload = {"schema": SCHEMA, "title": title, "tables": tables, "results": [r.to_dict() for r in results]}
    js = atomic_write_json(folder / "results.json", payload)
    return js, md


def load_results(path: str | os.PathLike[str]) -> list[BenchResult]:
    """The results in ``path`` (a ``results.json`` or the folder holding it)."""
    import json

    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not a paperworks bench results file (expected schema {SCHEMA!r})")
    return [BenchResult.from_dict(d) for d in data["results"]]


def publish(
    results: BenchResult | Sequence[BenchResult],
    script: str | os.PathLike[str],
    *,
    quick: bool,
    title: str = "Benchmarks",
    tables: Mapping[str, str] | None = None,
) -> str:
    """Write a benchmark script's results and print them; return the markdown.

    The full run writes beside ``script`` (its ``benchmarks/`` folder, the committed results); a quick
    run writes into a fresh temporary folder and leaves the committed results alone.
    """
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="paperworks-bench-")) if quick else Path(script).resolve().parent
    _, md = write_results(results, folder, title=title, tables=tables)
    text = md.read_text()
    print(text)
    if quick:
        print(f"(quick run: results written to {folder}, committed results left alone)")
    return text


def render_results_file(path: str | os.PathLike[str]) -> str:
    """``results.md`` as :func:`write_results` renders it, from a ``results.json`` (or its folder)."""
    import json

    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    data = json.loads(path.read_text())
    return results_markdown(load_results(path), data.get("title", "Benchmarks"), tables=data.get("tables"))


def _as_list(results: BenchResult | Sequence[BenchResult]) -> list[BenchResult]:
    out = [results] if isinstance(results, BenchResult) else list(results)
    for r in out:
        if not isinstance(r, BenchResult):
            raise TypeError(f"results: expected BenchResult objects, got {type(r).__name__}")
    return out


def _result_markdown(r: BenchResult) -> str:
    s = r.settings
    number = s.get("number", "?")
    calls = "auto-calibrated calls" if number == "auto" else f"{number} call(s)"
    pct = round(100 * float(s.get("level", 0.95)))
    lines = [
        f"## {r.name}",
        "",
        f"Ours: `{r.ours}`. Seconds per call, median and IQR of {s.get('repeats', '?')} interleaved rounds "
        f"({calls} per timing) after {s.get('warmup', '?')} warm-up calls. Ratio ours/side: median of "
        f"per-round ratios, {pct}% percentile-bootstrap interval over "
        f"rounds ({s.get('n_boot', '?')} resamples, seed {s.get('seed', '?')}). "
        f"Threads: {_threads_text(s.get('threads') or {})}.",
    ]
    if r.note:
        lines += ["", r.note]
    mem = any(side.peak_bytes is not None for row in r.rows for side in row.sides) or bool(s.get("memory"))
    head = [r.size_label, "side", "median", "IQR", f"ours/side [{pct}% CI]"]
    if mem:
        head.append("peak memory")
    lines += ["", "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for row in r.rows:
        ratios = {q.peer: q for q in row.ratios}
        for side in row.sides:
            ratio = ratios[side.name].format() if side.name in ratios else ""
            ratio = "(ours)" if side.name == r.ours else ratio
            cells = [_size_text(row.size), side.name, _fmt_time(side.median_s), _fmt_time(side.iqr_s), ratio]
            if mem:
                cells.append(_fmt_bytes(side.peak_bytes) if side.peak_bytes is not None else "not measured")
            lines.append("| " + " | ".join(cells) + " |")
    if mem and s.get("memory"):
        lines += ["", f"Peak memory: {s['memory']}."]
    return "\n".join(lines)


def _machine_lines(results: Sequence[BenchResult]) -> list[str]:
    seen: list[dict[str, Any]] = []
    for r in results:
        m = {k: v for k, v in r.machine.items() if k != "load_average"}  # load moves between comparisons
        if m not in seen:
            seen.append(m)
    out = []
    for m in seen:
        libs = ", ".join(f"{k} {m[k]}" for k in ("python", "numpy", "torch") if k in m)
        usable = f" ({m['cpus_usable']} usable)" if "cpus_usable" in m else ""
        out.append(
            f"- {m.get('cpu', '?')}, {m.get('cpu_count', '?')} CPUs{usable}, {m.get('machine', '?')}; "
            f"{libs}; {m.get('platform', '')}".rstrip("; ")
        )
    return out


def _threads_text(t: Mapping[str, Any]) -> str:
    parts = [f"requested {t.get('requested')}"]
    if "torch" in t:
        parts.append(f"torch {t['torch']}")
    if "blas" in t:
        blas = t["blas"]
        parts.append(f"BLAS {', '.join(blas) if isinstance(blas, list) else blas}")
    if t.get("env"):
        parts.append(", ".join(f"{k}={v}" for k, v in t["env"].items()))
    return "; ".join(parts)


def _fmt_time(s: float) -> str:
    if not math.isfinite(s):
        return str(s)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(s) >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def _fmt_bytes(b: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b} B"


def _size_text(size: Any) -> str:
    if size is None:
        return "-"
    if isinstance(size, tuple | list):
        return " × ".join(_size_text(s) for s in size)
    if isinstance(size, int) and not isinstance(size, bool):
        return f"{size:,}"
    return str(size)


def _plain(v: Any) -> Any:
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, bool | int | float | str) or v is None:
        return v
    return repr(v)


def _tupled(v: Any) -> Any:
    return tuple(_tupled(x) for x in v) if isinstance(v, list) else v
