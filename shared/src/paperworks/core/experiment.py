"""The experiment protocol: a run over seeds, judged claim by claim, and the report it yields.

A method package subclasses :class:`Experiment`, names its :class:`Paper`, declares its claims
(:class:`Claim`, :class:`SlopeClaim`), exposes its configuration as a frozen dataclass
(:meth:`Experiment.config`: the quick and the full run are two instances of it) and implements
:meth:`Experiment.run_seed`, which returns a flat mapping of metric name to float for one seed.
:meth:`Experiment.run` calls it for every seed, summarises each metric and judges every claim on
the 95% interval of its quantity over seeds (:mod:`paperworks.core.claims`).
"""

from __future__ import annotations

import abc
import dataclasses
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from .claims import Claim, ClaimResult, SlopeClaim
from .progress import Progress
from .record import run_record
from .report import MetricSummary, Paper, Report, claims_table
from .seeding import seed_everything

__all__ = [
    "Claim",
    "ClaimResult",
    "Experiment",
    "MetricSummary",
    "Paper",
    "Report",
    "SlopeClaim",
    "claims_table",
]


class Experiment(abc.ABC):
    """Base class of a package's headline reproduction.

    Subclasses set ``slug``, ``paper`` and ``claims`` and implement :meth:`run_seed`; they expose
    their settings through :meth:`config` (a frozen dataclass; quick and full are two instances).
    They may override :meth:`tables` (extra markdown tables from the per-seed results) and
    :meth:`figures` (plots written into the report folder). ``quick=True`` must finish in under 30 s
    on 2 CPU cores. A full run of a comparative claim uses >= 5 seeds; ``seeds_note`` says why when
    ``default_seeds`` is fewer (the 10-minute budget).
    """

    slug: ClassVar[str]
    paper: ClassVar[Paper]
    claims: ClassVar[tuple[Claim | SlopeClaim, ...]] = ()
    default_seeds: ClassVar[int] = 5
    quick_seeds: ClassVar[int | None] = None  # seeds of a quick run when none are given; None: default_seeds
    seeds_note: ClassVar[str] = ""

    @abc.abstractmethod
    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> Mapping[str, float]:
        """Run the experiment once for ``seed``; return metric name -> value."""

    def config(self, quick: bool) -> Any:
        """The run's settings: a frozen dataclass instance (None: the experiment has none)."""
        return None

    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        """Extra markdown tables for the report, title -> table. Default: none."""
        return {}

    def figures(self, report: Report, folder: Path) -> list[str]:
        """Write figures into ``folder``; return their file names. Default: none."""
        return []

    def resolved_config(self, quick: bool) -> dict[str, Any] | None:
        """:meth:`config` as a plain dict (checked to be a frozen dataclass)."""
        cfg = self.config(quick)
        if cfg is None:
            return None
        if not dataclasses.is_dataclass(cfg) or isinstance(cfg, type):
            raise TypeError(
                f"{type(self).__name__}.config: expected a dataclass instance, got {type(cfg).__name__}"
            )
        if not type(cfg).__dataclass_params__.frozen:
            raise TypeError(
                f"{type(self).__name__}.config: expected a frozen dataclass, {type(cfg).__name__} is not"
            )
        return {k: _plain(v) for k, v in dataclasses.asdict(cfg).items()}

    def run(
        self,
        *,
        quick: bool = False,
        seeds: int | Sequence[int] | None = None,
        progress: Progress | None = None,
    ) -> Report:
        """Run every seed and judge every claim. ``seeds``: a count (seeds 0..n-1) or explicit list."""
        if seeds is None:
            seeds = self.quick_seeds if quick and self.quick_seeds is not None else self.default_seeds
        seed_list = _seed_list(seeds)
        progress = progress or Progress(enabled=False)
        config = self.resolved_config(quick)
        start = time.perf_counter()
        per_seed: list[dict[str, float]] = []
        for i, seed in enumerate(seed_list):
            progress.log(f"{self.slug}: seed {seed} ({i + 1}/{len(seed_list)})")
            seed_everything(seed)
            raw = self.run_seed(seed, quick=quick, progress=progress)
            per_seed.append(_check_metrics(raw, where=f"{type(self).__name__}.run_seed(seed={seed})"))
        names = list(per_seed[0])
        for i, m in enumerate(per_seed[1:], 1):
            if list(m) != names:
                raise ValueError(
                    f"run_seed: seed {seed_list[i]} returned metrics {sorted(m)}, "
                    f"expected the same names as seed {seed_list[0]}: {sorted(names)}"
                )
        summary = {k: MetricSummary.of([m[k] for m in per_seed]) for k in names}
        missing = sorted({m for c in self.claims for m in c.metrics if m not in summary})
        if missing:
            raise ValueError(f"run_seed: claims need metrics {missing} that were not returned; got {names}")
        results = [c.judge(per_seed) for c in self.claims]
        wall = time.perf_counter() - start
        module = sys.modules.get(type(self).__module__)
        dist = getattr(self, "distribution", None) or _dist_of(self.slug)
        record = run_record(dist, getattr(module, "__file__", None))
        record["wall_time_s"] = wall
        record["seeds"] = seed_list
        return Report(
            slug=self.slug,
            paper=self.paper,
            quick=quick,
            seeds=seed_list,
            per_seed=per_seed,
            summary=summary,
            claims=results,
            wall_time_s=wall,
            record=record,
            config=config,
            seeds_note=self.seeds_note,
            tables=self.tables(per_seed, quick),
        )


def _dist_of(slug: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    dist = f"paperworks-{slug}"
    try:
        version(dist)
    except PackageNotFoundError:
        return None
    return dist


def _plain(v: Any) -> Any:
    """A config value as JSON-friendly data (tuples to lists, dataclasses to dicts)."""
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, bool | int | float | str) or v is None:
        return v
    return repr(v)


def _seed_list(seeds: int | Sequence[int]) -> list[int]:
    if isinstance(seeds, bool):
        raise TypeError("seeds: expected a positive int or a list of ints, got a bool")
    if isinstance(seeds, int):
        if seeds < 1:
            raise ValueError(f"seeds: expected a positive number of seeds, got {seeds}")
        return list(range(seeds))
    out = [int(s) for s in seeds]
    if not out:
        raise ValueError("seeds: expected at least one seed, got an empty list")
    if len(set(out)) != len(out):
        raise ValueError(f"seeds: expected distinct seeds, got {out}")
    return out


def _check_metrics(raw: Mapping[str, float], where: str) -> dict[str, float]:
    if not isinstance(raw, Mapping) or not raw:
        raise TypeError(f"{where}: expected a non-empty mapping of metric name to number")
    out = {}
    for k, v in raw.items():
        if not isinstance(k, str):
            raise TypeError(f"{where}: metric names must be strings, got {k!r}")
        try:
            out[k] = float(v)
        except (TypeError, ValueError):
            raise TypeError(f"{where}: metric {k!r} is not a number: {v!r}") from None
    return out
