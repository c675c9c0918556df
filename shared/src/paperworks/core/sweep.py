"""Runs of experiments x configs x seeds through one executor, with seed files, resume and reports.

``paperworks reproduce`` is a sweep of one job; ``paperworks sweep`` builds the cartesian product of
slugs, ``--set`` values and seeds. Each :class:`Job` (one experiment with one config) writes each
finished seed to ``<folder>/seeds/<seed>.json`` as it completes and, at the end, its report (through
:func:`~paperworks.core.experiment.assemble_report`, whichever executor ran the seeds) into
``<folder>``, with its seed files kept inside. On Ctrl-C every job with a finished seed gets a report
marked incomplete, and :class:`SweepInterrupted` carries them.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .checkpoints import SeedStore
from .executors import SeedTask
from .experiment import Experiment, IncompleteReport, Report, SeedResult, assemble_report
from .io import write_report
from .progress import Progress

__all__ = ["Job", "Outcome", "SweepInterrupted", "config_label", "grid", "run_jobs"]


@dataclass
class Job:
    """One experiment (configured: its overrides set) with one list of seeds; ``folder``: where its
    seed files and report go (None: nothing is written)."""

    experiment: Experiment
    quick: bool
    seeds: list[int]
    folder: Path | None = None
    label: str = ""


@dataclass
class Outcome:
    """What one job left: its report, the seeds reused from an earlier run, where it was written."""

    job: Job
    report: Report
    reused: list[int] = field(default_factory=list)
    folder: Path | None = None
    figure_error: str = ""


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C: ``outcomes`` holds the incomplete reports written from the finished seeds."""

    def __init__(self, outcomes: list[Outcome]) -> None:
        super().__init__(f"interrupted; {len(outcomes)} incomplete report(s) written")
        self.outcomes = outcomes


_SAFE = re.compile(r"[^A-Za-z0-9._=,+-]")


def config_label(overrides: Mapping[str, str]) -> str:
    """A folder-name tag for a set of overrides (``k=v,k2=v2``; a short hash when it had to change)."""
    raw = ",".join(f"{k}={v}" for k, v in overrides.items())
    safe = _SAFE.sub("_", raw)
    if safe != raw or len(safe) > 80:
        safe = f"{safe[:80]}-{hashlib.sha256(raw.encode()).hexdigest()[:8]}"
    return safe


def grid(values: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """The cartesian product of ``key -> values`` as a list of ``key -> value`` (one empty dict when none)."""
    keys = list(values)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(values[k] for k in keys))]


def run_jobs(
    jobs: Sequence[Job],
    executor: Any,
    *,
    progress: Progress | None = None,
    resume: bool = False,
) -> list[Outcome]:
    """Run every seed of every job through ``executor`` (entered here) and write each job's report.

    With ``resume``, a job's finished seed files of the same config and code are reused and only the
    other seeds run; :class:`~paperworks.core.checkpoints.ResumeError` is raised before anything runs
    when they are of another config or code. Seeds run in job order; reports are written at the end.
    """
    progress = progress or Progress(enabled=False)
    stores = [None if j.folder is None else SeedStore(j.folder) for j in jobs]
    finished: list[dict[int, SeedResult]] = []
    for job, store in zip(jobs, stores):
        found = store.resumable(job.experiment, job.quick) if (resume and store is not None) else {}
        finished.append(found)
    reused = [sorted(s for s in f if s in set(j.seeds)) for f, j in zip(finished, jobs)]
    existed = [j.folder is not None and j.folder.exists() for j in jobs]
    tasks = [
        SeedTask(job.experiment, seed, job.quick, key=i)
        for i, job in enumerate(jobs)
        for seed in job.seeds
        if seed not in finished[i]
    ]
    start = time.perf_counter()
    engine = executor.describe() if hasattr(executor, "describe") else {"engine": type(executor).__name__}
    try:
        with executor:
            engine = executor.describe() if hasattr(executor, "describe") else engine
            for task, result in executor.map(tasks, progress):
                finished[task.key][result.seed] = result
                store = stores[task.key]
                if store is not None:
                    store.write(result)
    except KeyboardInterrupt:
        elapsed = time.perf_counter() - start
        outcomes = []
        for i, job in enumerate(jobs):
            if any(s in finished[i] for s in job.seeds):
                outcomes.append(_finish(job, stores[i], finished[i], reused[i], engine, elapsed))
            elif job.folder is not None and not existed[i]:
                _remove_empty(job.folder)
        raise SweepInterrupted(outcomes) from None
    elapsed = time.perf_counter() - start
    return [_finish(j, st, f, r, engine, elapsed) for j, st, f, r in zip(jobs, stores, finished, reused)]


def _finish(
    job: Job,
    store: SeedStore | None,
    finished: dict[int, SeedResult],
    reused: list[int],
    engine: dict[str, Any],
    elapsed: float,
) -> Outcome:
    results = [finished[s] for s in job.seeds if s in finished]
    record = {**engine, "elapsed_s": elapsed, "reused_seeds": reused}
    report = assemble_report(job.experiment, results, seeds=job.seeds, record=record)
    outcome = Outcome(job, report, reused)
    if job.folder is None or store is None:
        return outcome
    incomplete = isinstance(report, IncompleteReport)

    def draw(rep: Report, stage: Path) -> list[str]:
        try:
            names = list(job.experiment.figures(rep, stage))
        except Exception as e:
            if not incomplete:
                raise
            outcome.figure_error = f"{type(e).__name__}: {e}"
            names = []
        store.carry(stage, sorted(finished))
        return names

    write_report(report, job.folder, figures=draw)
    outcome.folder = job.folder
    return outcome


def _remove_empty(folder: Path) -> None:
    """Remove a report folder this run created and left without results (an empty seeds/ included)."""
    try:
        seeds = folder / "seeds"
        if seeds.is_dir() and not any(seeds.iterdir()):
            seeds.rmdir()
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    except OSError:
        pass
