"""Gathering saved reports into one page: every method, each claim's interval and verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .claims import VERDICTS
from .report import claims_table, verdict_counts

__all__ = ["ReportError", "check_report", "load_reports", "summary_markdown"]


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
    reports, problems = [], []
    for path in sorted(Path(root).glob("*/report.json")):
        if path.parent.name.startswith("."):
            continue  # staging or set-aside folders of an interrupted write
        try:
            try:
                data = json.loads(path.read_text())
            except (OSError, UnicodeDecodeError, ValueError) as e:
                raise ReportError(f"{path}: cannot be read as JSON ({e})") from None
            reports.append(check_report(data, str(path)))
        except ReportError as e:
            if not skip_bad:
                raise
            problems.append(str(e))
    return reports, problems


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
    for r in reports:
        lines += ["", f"## {r['slug']}", "", claims_table(r["claims"])]
    return "\n".join(lines) + "\n"
