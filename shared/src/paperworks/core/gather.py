"""Gathering saved reports into one page: every method, each claim's interval and verdict.

Each report records the versions of its method's distribution and of ``paperworks-core`` (its
``record``). Gathering warns when those disagree — two reports of one method from different versions,
reports judged by different core versions, or a report older than the code installed — because a
method's verdicts are only comparable when the same code judged them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from .claims import VERDICTS
from .report import claims_table, verdict_counts

__all__ = ["ReportError", "check_report", "load_reports", "summary_markdown", "version_warnings"]

log = logging.getLogger(__name__)
CORE = "paperworks-core"


class ReportError(ValueError):
    """A ``report.json`` that is not a paperworks report; the message names the file and field."""


_CLAIM_FIELDS = {"key": str, "statement": str, "predicate": str, "verdict": str, "n": int}


def check_report(data: Any, where: str) -> dict[str, Any]:
    """Check the structure of a loaded report (schema 2); raise :class:`ReportError` naming the field."""

    def bad(field: str, expected: str) -> ReportError:
        return ReportError(f"{where}: field {field!r}: expected {expected}")

    if not isinstance(data, dict):
        raise bad("(top level)", "an object")
    if data.get("schema") != 2:
        raise bad("schema", "2 (rerun the experiment with this paperworks-core)")
    for name, typ, what in (
        ("slug", str, "a string"),
        ("quick", bool, "true or false"),
        ("seeds", list, "a list of seeds"),
        ("claims", list, "a list of claims"),
        ("paper", dict, "an object with a title"),
        ("summary", dict, "an object"),
    ):
        if not isinstance(data.get(name), typ):
            raise bad(name, what)
    if not isinstance(data.get("wall_time_s"), int | float):
        raise bad("wall_time_s", "a number")
    for i, c in enumerate(data["claims"]):
        if not isinstance(c, dict):
            raise bad(f"claims[{i}]", "an object")
        for name, typ in _CLAIM_FIELDS.items():
            if not isinstance(c.get(name), typ):
                raise bad(f"claims[{i}].{name}", typ.__name__)
        if c["verdict"] not in VERDICTS:
            raise bad(f"claims[{i}].verdict", f"one of {VERDICTS}")
        iv = c.get("interval")
        if iv is not None and not (isinstance(iv, list) and len(iv) == 2):
            raise bad(f"claims[{i}].interval", "null or [lo, hi]")
        if not isinstance(c.get("estimate"), int | float | str):
            raise bad(f"claims[{i}].estimate", "a number")
    return data


def load_reports(root: str | Path, *, skip_bad: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """Every ``<root>/<slug>/report.json`` (hidden folders skipped), sorted by slug.

    Returns ``(reports, problems)``. A file that cannot be read or is not a report raises
    :class:`ReportError`, or with ``skip_bad`` is left out and its one-line problem returned.
    """
    reports, problems, sources = [], [], []
    for path in sorted(Path(root).glob("*/report.json")):
        if path.parent.name.startswith("."):
            continue  # staging or set-aside folders of an interrupted write
        try:
            try:
                data = json.loads(path.read_text())
            except (OSError, UnicodeDecodeError, ValueError) as e:
                raise ReportError(f"{path}: cannot be read as JSON ({e})") from None
            reports.append(check_report(data, str(path)))
            sources.append(str(path))
        except ReportError as e:
            if not skip_bad:
                raise
            problems.append(str(e))
    for warning in version_warnings(reports, sources=sources, installed=_installed_version):
        # With logging unconfigured (the CLI), this is one plain line on stderr.
        log.warning("paperworks: warning: %s", warning)
    return reports, problems


def _installed_version(dist: str) -> str | None:
    try:
        return metadata.version(dist).split("+")[0]
    except metadata.PackageNotFoundError:
        return None


def _versions(report: Mapping[str, Any]) -> tuple[str, str | None, str | None]:
    """``(distribution, its version, core version)`` from a report's record (None where not recorded)."""
    rec = report.get("record")
    rec = rec if isinstance(rec, Mapping) else {}
    pkg = rec.get("package") if isinstance(rec.get("package"), Mapping) else {}
    core = rec.get("core") if isinstance(rec.get("core"), Mapping) else {}
    name = pkg.get("name") or f"paperworks-{report.get('slug', '?')}"
    return str(name), pkg.get("version"), core.get("version")


def version_warnings(
    reports: Sequence[Mapping[str, Any]],
    *,
    sources: Sequence[str] | None = None,
    installed: Callable[[str], str | None] | None = None,
) -> list[str]:
    """One line per version disagreement among ``reports`` (loaded ``report.json`` records).

    - several reports of one method (one slug) from different versions of the method or the core;
    - reports judged by different ``paperworks-core`` versions;
    - with ``installed`` (distribution name -> installed version, or None when not installed): reports
      made with another version of their method or of the core than the one installed now.

    ``sources`` (one per report, e.g. its path) names the reports of a method in the first message.
    A version the record lacks counts as ``unknown``.
    """
    if sources is not None and len(sources) != len(reports):
        raise ValueError(f"sources: expected one per report ({len(reports)}), got {len(sources)}")
    names = list(sources) if sources is not None else [f"report {i + 1}" for i in range(len(reports))]
    out: list[str] = []

    by_slug: dict[str, list[int]] = {}
    for i, r in enumerate(reports):
        by_slug.setdefault(str(r.get("slug", "?")), []).append(i)
    for slug, idx in by_slug.items():
        seen = {_versions(reports[i]) for i in idx}
        if len(idx) > 1 and len(seen) > 1:
            parts = []
            for i in idx:
                dist, v, core = _versions(reports[i])
                parts.append(f"{dist} {v or 'unknown'} with {CORE} {core or 'unknown'} ({names[i]})")
            out.append(
                f"{slug}: {len(idx)} reports come from different versions: "
                + "; ".join(parts)
                + "; rerun them with one version"
            )

    cores: dict[str, list[str]] = {}
    for r in reports:
        cores.setdefault(_versions(r)[2] or "unknown", []).append(str(r.get("slug", "?")))
    if len(cores) > 1:
        listing = "; ".join(f"{v} ({', '.join(sorted(set(s)))})" for v, s in sorted(cores.items()))
        out.append(
            f"the reports come from different {CORE} versions, so their verdicts were not judged by the "
            f"same code: {listing}; rerun the older ones"
        )

    if installed is not None:
        stale = []
        core_now = installed(CORE)
        for r in reports:
            dist, v, core = _versions(r)
            now = installed(dist)
            diffs = [
                f"{name} {was or 'unknown'}, installed {is_}"
                for name, was, is_ in ((dist, v, now), (CORE, core, core_now))
                if is_ is not None and was != is_
            ]
            if diffs:
                stale.append(f"{r.get('slug', '?')} ({'; '.join(diffs)})")
        if stale:
            out.append(
                "reports made with other versions than those installed (rerun them with "
                "`paperworks reproduce <slug>`): " + ", ".join(stale)
            )
    return out


def summary_markdown(reports: list[dict[str, Any]]) -> str:
    """One markdown page: a row per method with its verdict counts, then each method's claims."""
    lines = [
        "# paperworks: reproduction summary",
        "",
        "Verdicts are judged on the 95% interval over seeds (holds / inconclusive / not reproduced); "
        "exact claims (closed forms, counts) are listed apart and are not evidence for the paper.",
        "",
        "| method | paper | run | paper claims: holds / inconclusive / not reproduced | mechanism | exact |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in reports:
        paper = r.get("paper", {})
        arxiv = f"arXiv {paper['arxiv']}" if paper.get("arxiv") else "no public text"
        counts = verdict_counts(r["claims"])
        cell = {g: " / ".join(str(v) for v in row.values()) for g, row in counts.items()}

        run = f"{'quick' if r.get('quick') else 'full'}, {len(r.get('seeds', []))} seeds"
        lines.append(
            f"| [{r['slug']}](#{r['slug']}) | {paper.get('title', '?')} ({arxiv}) | {run} | "
            f"{cell.get('paper', '–')} | {cell.get('mechanism', '–')} | {cell.get('exact', '–')} |"
        )
    if not reports:
        lines.append("| (no reports found) | | | | | |")
    mixed = version_warnings(reports)
    if mixed:
        lines += ["", "**Warning: these reports come from different versions.**", ""]
        lines += [f"- {w}" for w in mixed]
    for r in reports:
        lines += ["", f"## {r['slug']}", "", claims_table(r["claims"])]
    return "\n".join(lines) + "\n"
