"""The record of one run (:class:`Report`) and its rendering to markdown.

Rendering works on the plain records stored in ``report.json`` (``claims_table``,
``verdict_counts``), so the README generator and ``paperworks report`` show exactly what a report
shows without re-running anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .claims import HOLDS, INCONCLUSIVE, INCONCLUSIVE_1_SEED, NOT_REPRODUCED, ClaimResult

__all__ = ["MetricSummary", "Paper", "Report", "claims_table", "fmt", "verdict_counts", "verdict_line"]


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


def fmt(x: float | None) -> str:
    """A number for a table: 4 significant digits."""
    return "–" if x is None else f"{float(x):.4g}"


def verdict_counts(claims: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per kind ("paper", "mechanism") and for "exact" claims: counts of each verdict.

    Exact claims (closed forms, counts) are counted apart: they are not evidence for the paper.
    """
    out: dict[str, dict[str, int]] = {}
    for c in claims:
        group = "exact" if c.get("exact") else c.get("kind", "paper")
        v = c["verdict"]
        v = INCONCLUSIVE if v == INCONCLUSIVE_1_SEED else v
        row = out.setdefault(group, {HOLDS: 0, INCONCLUSIVE: 0, NOT_REPRODUCED: 0})
        row[v] += 1
    return out


def verdict_line(claims: Sequence[Mapping[str, Any]]) -> str:
    """E.g. ``paper claims: 2 hold, 1 inconclusive, 0 not reproduced; mechanism: ...``."""
    parts = []
    for group, row in sorted(
        verdict_counts(claims).items(), key=lambda kv: ("paper", "mechanism", "exact").index(kv[0])
    ):
        label = {"paper": "paper claims", "mechanism": "mechanism claims", "exact": "exact (not evidence)"}[
            group
        ]
        counts = f"{row[HOLDS]} hold, {row[INCONCLUSIVE]} inconclusive, {row[NOT_REPRODUCED]} not reproduced"
        parts.append(f"{label}: {counts}")
    return "; ".join(parts) if parts else "no claims"


def _verdict_cell(c: Mapping[str, Any]) -> str:
    v = c["verdict"]
    return {HOLDS: "holds", NOT_REPRODUCED: "**not reproduced**"}.get(v, f"*{v}*")


def _cell(text: str) -> str:
    """Text for one cell of a markdown table: a ``|`` (as in ``|J* - J|``) would end the cell."""
    return str(text).replace("|", "\\|")


def claims_table(claims: Sequence[Mapping[str, Any]]) -> str:
    """Markdown table of claims: kind, paper's value, predicate, mean, 95% interval, seeds, verdict."""
    rows = [
        "| claim | kind | paper says | paper's value | predicate | mean | 95% interval | seeds | verdict |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in claims:
        kind = "exact" if c.get("exact") else c.get("kind", "paper")
        if c.get("machine_dependent"):
            kind += ", timing"
        pv = c.get("paper_value")
        pv = "–" if pv is None else (fmt(pv) if isinstance(pv, int | float) else str(pv))
        iv = c.get("interval")
        interval = "–" if iv is None else f"[{fmt(iv[0])}, {fmt(iv[1])}]"
        if c.get("exact") and iv is not None:
            interval = f"range {interval}"
        rows.append(
            f"| {c['key']} | {kind} | {_cell(c['statement'])} | {_cell(pv)} | `{_cell(c['predicate'])}` | "
            f"{fmt(c['estimate'])} | {interval} | {c['n']} | {_verdict_cell(c)} |"
        )
    return "\n".join(rows)


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
    record: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] | None = None
    seeds_note: str = ""
    tables: dict[str, str] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)

    @property
    def n_holding(self) -> int:
        return sum(r.holds for r in self.claims)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": 2,
            "slug": self.slug,
            "paper": {"title": self.paper.title, "arxiv": self.paper.arxiv, "note": self.paper.note},
            "quick": self.quick,
            "seeds": self.seeds,
            "seeds_note": self.seeds_note,
            "wall_time_s": self.wall_time_s,
            "record": self.record,
            "config": self.config,
            "claims": [r.to_dict() for r in self.claims],
            "summary": {k: v.__dict__ for k, v in self.summary.items()},
            "per_seed": self.per_seed,
            "tables": self.tables,
            "figures": self.figures,
        }

    def claims_table(self) -> str:
        return claims_table([r.to_dict() for r in self.claims])

    def to_markdown(self) -> str:
        return render_markdown(self.to_dict())


def _record_lines(record: Mapping[str, Any]) -> list[str]:
    lines = []
    pkg = record.get("package") or {}
    core = record.get("core") or {}
    if pkg:
        lines.append(
            f"- package: {pkg.get('name', '?')} {pkg.get('version', '?')}; core {core.get('version', '?')}"
        )
    git = record.get("git")
    if git:
        lines.append(f"- git: {git.get('commit', '?')}{' (dirty)' if git.get('dirty') else ''}")
    libs = record.get("libraries") or {}
    if libs:
        lines.append("- libraries: " + ", ".join(f"{k} {v}" for k, v in libs.items()))
    if record.get("cpu"):
        lines.append(
            f"- machine: {record['cpu']}, {record.get('cpu_count', '?')} CPUs, "
            f"python {record.get('python', '?')}, threads {record.get('threads', {})}, "
            f"load average {record.get('load_average')}"
        )
    return lines


def render_markdown(d: Mapping[str, Any]) -> str:
    """``report.md`` from a report record (``Report.to_dict()`` or a loaded ``report.json``)."""
    mode = "quick" if d["quick"] else "full"
    claims = d["claims"]
    parts = [
        f"# {d['slug']}: reproduction report",
        "",
        f"Paper: {Paper(**d['paper']).citation}",
        f"Run: {mode}, seeds {d['seeds']}, {d['wall_time_s']:.1f} s. Verdicts on 95% intervals over seeds: "
        + verdict_line(claims)
        + ".",
    ]
    if d.get("seeds_note") and not d["quick"]:
        parts += ["", f"Seeds: {d['seeds_note']}"]
    parts += ["", "## Claims", "", claims_table(claims)]
    notes = [f"- {c['key']}: {c['note']}" for c in claims if c.get("note")]
    if notes:
        parts += ["", "Notes:", "", *notes]
    for title, table in (d.get("tables") or {}).items():
        parts += ["", f"## {title}", "", table.strip()]
    parts += [
        "",
        "## All metrics",
        "",
        "| metric | mean | std | min | max | seeds |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, s in d["summary"].items():
        std = f"{float(s['std']):.2g}"
        parts.append(f"| {name} | {fmt(s['mean'])} | {std} | {fmt(s['min'])} | {fmt(s['max'])} | {s['n']} |")
    if d.get("config"):
        parts += ["", "## Configuration", "", "```", *(f"{k} = {v!r}" for k, v in d["config"].items()), "```"]
    rec = _record_lines(d.get("record") or {})
    if rec:
        parts += ["", "## Run record", "", *rec]
    if d.get("figures"):
        parts += ["", "## Figures", ""] + [f"![{Path(f).stem}]({f})" for f in d["figures"]]
    return "\n".join(parts) + "\n"
