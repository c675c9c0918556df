"""The experiment protocol: a paper, its claims, a run over seeds, and the report it yields.

A method package subclasses :class:`Experiment`, names its :class:`Paper`, declares its
:class:`Claim`s and implements :meth:`Experiment.run_seed`, which returns a flat mapping of metric
name to float for one seed. :meth:`Experiment.run` calls it for every seed, summarises each metric
over seeds (mean, std, min, max) and judges every claim on the seed mean of its metric.
"""

from __future__ import annotations

import abc
import math
import operator
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .progress import Progress
from .seeding import seed_everything

__all__ = ["Claim", "ClaimResult", "Experiment", "MetricSummary", "Paper", "Report", "claims_table"]

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}


@dataclass(frozen=True)
class Paper:
    """The paper an experiment reproduces. ``arxiv`` is an id like ``"2510.02107"`` or None."""

    title: str
    arxiv: str | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if not self.title.strip():
            raise ValueError("Paper.title: expected a non-empty title")

    @property
    def citation(self) -> str:
        return f"{self.title} (arXiv {self.arxiv})" if self.arxiv else f"{self.title} (no public text)"


@dataclass(frozen=True)
class Claim:
    """One claim of the paper and the predicate that counts as reproducing it.

    ``statement`` is the paper's claim in its words; ``metric`` names the quantity measured (a key
    that :meth:`Experiment.run_seed` returns); the claim holds when
    ``mean over seeds of metric <op> threshold``. Thresholds are fixed before any run and come
    from the paper's statement (or the issue that filed the package), never from a result.
    """

    key: str
    statement: str
    metric: str
    op: str
    threshold: float
    note: str = ""

    def __post_init__(self) -> None:
        if not self.key or not self.key.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"Claim.key: expected letters, digits, '-' or '_', got {self.key!r}")
        if self.op not in _OPS:
            raise ValueError(f"Claim.op: expected one of {sorted(_OPS)}, got {self.op!r}")
        if not math.isfinite(self.threshold):
            raise ValueError(f"Claim.threshold: expected a finite number, got {self.threshold!r}")

    @property
    def predicate(self) -> str:
        return f"{self.metric} {self.op} {self.threshold:g}"

    def holds(self, value: float) -> bool:
        """Whether a measured value satisfies the predicate (NaN never does)."""
        return bool(math.isfinite(value) and _OPS[self.op](value, self.threshold))


@dataclass(frozen=True)
class MetricSummary:
    """A metric over seeds: mean, sample std (0 for one seed), min, max, number of seeds."""

    mean: float
    std: float
    min: float
    max: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> MetricSummary:
        arr = np.asarray(values, dtype=float)
        if arr.size == 0:
            raise ValueError("values: expected at least one value")
        std = float(arr.std(ddof=1)) if arr.size > 1 else 0.0
        return cls(float(arr.mean()), std, float(arr.min()), float(arr.max()), int(arr.size))

    def format(self) -> str:
        if self.n == 1:
            return f"{self.mean:.4g}"
        return f"{self.mean:.4g} ± {self.std:.2g}"


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    measured: MetricSummary | None
    holds: bool

    def to_dict(self) -> dict[str, Any]:
        c = self.claim
        return {
            "key": c.key,
            "statement": c.statement,
            "metric": c.metric,
            "predicate": c.predicate,
            "note": c.note,
            "measured": None if self.measured is None else self.measured.__dict__,
            "holds": self.holds,
        }


@dataclass
class Report:
    """What one run of an experiment measured. Written by :func:`paperworks.core.write_report`."""

    slug: str
    paper: Paper
    quick: bool
    seeds: list[int]
    per_seed: list[dict[str, float]]
    summary: dict[str, MetricSummary]
    claims: list[ClaimResult]
    wall_time_s: float
    environment: dict[str, str] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)

    @property
    def n_holding(self) -> int:
        return sum(r.holds for r in self.claims)

    def to_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "paper": {"title": self.paper.title, "arxiv": self.paper.arxiv, "note": self.paper.note},
            "quick": self.quick,
            "seeds": self.seeds,
            "wall_time_s": self.wall_time_s,
            "environment": self.environment,
            "claims": [r.to_dict() for r in self.claims],
            "summary": {k: v.__dict__ for k, v in self.summary.items()},
            "per_seed": self.per_seed,
            "tables": self.tables,
            "figures": self.figures,
        }

    def claims_table(self) -> str:
        """Markdown table: claim | paper says | predicate | measured | holds?"""
        return claims_table([r.to_dict() for r in self.claims])

    def metrics_table(self) -> str:
        rows = ["| metric | mean | std | min | max | seeds |", "| --- | --- | --- | --- | --- | --- |"]
        for name, s in self.summary.items():
            rows.append(f"| {name} | {s.mean:.4g} | {s.std:.2g} | {s.min:.4g} | {s.max:.4g} | {s.n} |")
        return "\n".join(rows)

    def to_markdown(self) -> str:
        mode = "quick" if self.quick else "full"
        parts = [
            f"# {self.slug}: reproduction report",
            "",
            f"Paper: {self.paper.citation}",
            f"Run: {mode}, seeds {self.seeds}, {self.wall_time_s:.1f} s, "
            + ", ".join(f"{k} {v}" for k, v in self.environment.items()),
            "",
            f"## Claims ({self.n_holding}/{len(self.claims)} hold)",
            "",
            self.claims_table(),
        ]
        for title, table in self.tables.items():
            parts += ["", f"## {title}", "", table.strip()]
        parts += ["", "## All metrics", "", self.metrics_table()]
        if self.figures:
            parts += ["", "## Figures", ""] + [f"![{Path(f).stem}]({f})" for f in self.figures]
        return "\n".join(parts) + "\n"


def claims_table(claims: Sequence[Mapping[str, Any]]) -> str:
    """Markdown claims table from :meth:`ClaimResult.to_dict` records (as stored in report.json)."""
    rows = [
        "| claim | paper says | predicate | measured (mean ± std over seeds) | holds? |",
        "| --- | --- | --- | --- | --- |",
    ]
    for c in claims:
        m = c["measured"]
        measured = (
            "not measured"
            if m is None
            else MetricSummary(**{k: int(v) if k == "n" else float(v) for k, v in m.items()}).format()
        )
        rows.append(
            f"| {c['key']} | {c['statement']} | `{c['predicate']}` | {measured} | "
            f"{'yes' if c['holds'] else '**no**'} |"
        )
    return "\n".join(rows)


class Experiment(abc.ABC):
    """Base class of a package's headline reproduction.

    Subclasses set ``slug``, ``paper`` and ``claims`` and implement :meth:`run_seed`. They may
    override :meth:`tables` (extra markdown tables from the per-seed results) and :meth:`figures`
    (plots written into the report folder). ``quick=True`` must finish in under 30 s on 2 CPU cores.
    """

    slug: ClassVar[str]
    paper: ClassVar[Paper]
    claims: ClassVar[tuple[Claim, ...]] = ()
    default_seeds: ClassVar[int] = 3
    quick_seeds: ClassVar[int | None] = None  # seeds of a quick run when none are given; None: default_seeds

    @abc.abstractmethod
    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> Mapping[str, float]:
        """Run the experiment once for ``seed``; return metric name -> value."""

    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        """Extra markdown tables for the report, title -> table. Default: none."""
        return {}

    def figures(self, report: Report, folder: Path) -> list[str]:
        """Write figures into ``folder``; return their file names. Default: none."""
        return []

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
        missing = [c.metric for c in self.claims if c.metric not in summary]
        if missing:
            raise ValueError(f"run_seed: claims need metrics {missing} that were not returned; got {names}")
        results = [ClaimResult(c, summary[c.metric], c.holds(summary[c.metric].mean)) for c in self.claims]
        return Report(
            slug=self.slug,
            paper=self.paper,
            quick=quick,
            seeds=seed_list,
            per_seed=per_seed,
            summary=summary,
            claims=results,
            wall_time_s=time.perf_counter() - start,
            environment=_environment(),
            tables=self.tables(per_seed, quick),
        )


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


def _environment() -> dict[str, str]:
    """Versions for the report. Read from metadata: importing torch here would cost seconds."""
    env = {"python": platform.python_version(), "numpy": np.__version__, "machine": platform.machine()}
    try:
        env["torch"] = version("torch").split("+")[0]
    except PackageNotFoundError:
        pass
    return env
